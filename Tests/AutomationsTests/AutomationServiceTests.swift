import AsyncMailbox
import Foundation
import HomeModel
import Logging
import TestSupport
import Testing
import VirtualDevices

@testable import Automations

/// The automation service on a real manager: a button the test presses (as zigbee2mqtt's driver
/// reports a press) and a virtual lamp its automations switch.
@Suite("Automations", .timeLimit(.minutes(5)))
struct AutomationServiceTests {
    static let press = CharacteristicReference(
        accessory: "Button", service: "Button", characteristic: .programmableSwitchEvent)
    static let lampOn = CharacteristicReference(accessory: "Lamp", service: "Lightbulb", characteristic: .on)

    /// The manager with the home built, the button's driver, and the model's events from before
    /// the service follows.
    struct Home {
        let manager: HomeManager
        let button: ReportingDriver

        static func make() async throws -> Home {
            let manager = try HomeManager(database: HomeDatabase.inMemory())
            let lamp = VirtualDriver(
                devices: [
                    .init(id: "lamp", name: "Lamp", kind: .lightbulb),
                    .init(id: "far-lamp", name: "Far Lamp", kind: .lightbulb, isReachable: false),
                ], tick: .seconds(86_400))
            let button = ReportingDriver(ReportingDriver.button())
            try await manager.attach(lamp)
            try await manager.attach(button)
            try await manager.edit(.addHome(name: "Home"), account: "alice")
            try await manager.edit(.addUser(home: "Home", account: "bob", name: "Bob"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: "lamp"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: "button"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: "far-lamp"), account: "alice")
            for (name, on) in [("Lamp On", true), ("Lamp Off", false)] {
                try await manager.edit(
                    .addActionSet(home: "Home", name: name, actions: [ActionRequest(lampOn, .bool(on))]),
                    account: "alice")
            }
            let farLampOn = CharacteristicReference(accessory: "Far Lamp", service: "Lightbulb", characteristic: .on)
            try await manager.edit(
                .addActionSet(
                    home: "Home", name: "Both On", actions: [ActionRequest(farLampOn, .bool(true))]),
                account: "alice")
            return Home(manager: manager, button: button)
        }

        func addTrigger(_ name: String, on value: Int?, running actionSets: [String]) async throws {
            try await manager.edit(
                .addTrigger(
                    home: "Home", name: name, characteristic: AutomationServiceTests.press,
                    value: value.map { .int($0) },
                    actionSets: actionSets), account: "alice")
        }

        func press(_ event: Int) {
            button.send(.value("button", service: "button", characteristic: .programmableSwitchEvent, .int(event)))
        }

        func lamp() async throws -> CharacteristicValue? {
            try await manager.home("Home", account: "alice").accessory("lamp")?.services.first?.characteristic(.on)?
                .value
        }

        /// Runs the service on the manager's changes, subscribed before `body` presses anything.
        func withService(
            limit: AutomationService.FiringLimit = .standard, logs: LogLines = LogLines(),
            _ body: (Mailbox<HomeEvent>) async throws -> Void
        ) async throws {
            let service = AutomationService(manager: manager, limit: limit, logger: logs.logger)
            let changes = await service.changes()
            let events = await manager.events()
            let following = Task { await service.follow(changes) }
            defer { following.cancel() }
            try await body(events)
        }
    }

    /// The names of the automations that fired, in order, until `last` fires.
    static func firings(
        until last: String, in events: Mailbox<HomeEvent>, home: HomeManager, failing: Int = 0
    ) async throws -> [String] {
        var fired: [String] = []
        for await event in events {
            guard case .didFireTrigger(_, let id, let firing) = event else { continue }
            #expect(firing.failedActions == failing)
            let name = try await home.home("Home", account: "alice").trigger(id)?.name ?? id.rawValue
            fired.append(name)
            if name == last { return fired }
        }
        return fired
    }

    @Test("a press fires the automation waiting for it, not one waiting for another press or one turned off")
    func pressRunsActionSet() async throws {
        let home = try await Home.make()
        _ = try await home.manager.executeActionSet("Lamp Off", home: "Home", account: "alice")
        // The long press's first: an automation that ignored its value would fire at the double press
        try await home.addTrigger("Long Press", on: 2, running: ["Lamp Off"])
        try await home.addTrigger("Single Press", on: 0, running: ["Lamp On"])
        try await home.withService { events throws in
            // A double press fires nothing; a single press turns the lamp on
            home.press(1)
            home.press(0)
            #expect(try await Self.firings(until: "Single Press", in: events, home: home.manager) == ["Single Press"])
            #expect(try await home.lamp() == .bool(true))

            // Turned off, the single press's automation is skipped; the long press's still fires
            try await home.manager.edit(
                .enableTrigger(home: "Home", trigger: "single press", enabled: false), account: "alice")
            home.press(0)
            home.press(2)
            #expect(try await Self.firings(until: "Long Press", in: events, home: home.manager) == ["Long Press"])
            #expect(try await home.lamp() == .bool(false))
        }
    }

    @Test("an automation without a value fires on every change and runs its action sets in order")
    func anyValue() async throws {
        let home = try await Home.make()
        try await home.addTrigger("Any Press", on: nil, running: ["Lamp Off", "Lamp On"])
        try await home.withService { events throws in
            home.press(2)
            #expect(try await Self.firings(until: "Any Press", in: events, home: home.manager) == ["Any Press"])
            // Both action sets ran, in order: the lamp ends on
            #expect(try await home.lamp() == .bool(true))
        }
    }

    @Test("an automation that fires too often is held within its window, and the others are not")
    func firingLimit() async throws {
        let home = try await Home.make()
        try await home.addTrigger("Single Press", on: 0, running: ["Lamp On"])
        try await home.addTrigger("Long Press", on: 2, running: ["Lamp Off"])
        try await home.withService(limit: .init(count: 2, window: .seconds(3_600))) { events throws in
            for _ in 0..<5 { home.press(0) }
            home.press(2)
            #expect(
                try await Self.firings(until: "Long Press", in: events, home: home.manager)
                    == ["Single Press", "Single Press", "Long Press"])
        }
    }

    @Test("two automations that set each other off stop after three rounds each, with one warning naming both")
    func loopStops() async throws {
        let home = try await Home.make()
        try await home.manager.writeValue(.bool(true), to: Self.lampOn, home: "Home", account: "alice")
        for (name, value, actionSet) in [("Relight", false, "Lamp On"), ("Douse", true, "Lamp Off")] {
            try await home.manager.edit(
                .addTrigger(
                    home: "Home", name: name, characteristic: Self.lampOn, value: .bool(value),
                    actionSets: [actionSet]), account: "alice")
        }
        // Something that fires after the loop ended: it is the last firing seen
        try await home.addTrigger("Single Press", on: 0, running: ["Both On"])
        let logs = LogLines()
        try await home.withService(logs: logs) { events throws in
            try await home.manager.writeValue(.bool(false), to: Self.lampOn, home: "Home", account: "alice")
            var fired: [String] = []
            for await event in events {
                guard case .didFireTrigger(_, let id, _) = event else { continue }
                fired.append(try await home.manager.home("Home", account: "alice").trigger(id)?.name ?? "?")
                if fired.count == 6 { break }
            }
            #expect(fired == ["Relight", "Douse", "Relight", "Douse", "Relight", "Douse"])
            try await eventually("the loop is reported") { logs.contains("set each other off") }
            home.press(0)
            #expect(
                try await Self.firings(until: "Single Press", in: events, home: home.manager, failing: 1)
                    == ["Single Press"])
        }
        let warnings = logs.all.filter {
            $0.level == .warning && $0.message.contains("set") && $0.message.contains("off:")
        }
        #expect(
            warnings.map(\.message) == ["automations 'Relight', 'Douse' set each other off: stopped after 3 rounds"],
            "\(logs.all)")
        #expect(try await home.lamp() == .bool(false))
    }

    @Test("a person pressing a button many times is not taken for a loop, though each press sets off a chain")
    func pressesAreNotALoop() async throws {
        let home = try await Home.make()
        _ = try await home.manager.executeActionSet("Lamp Off", home: "Home", account: "alice")
        try await home.addTrigger("Single Press", on: 0, running: ["Lamp On"])
        try await home.manager.edit(
            .addTrigger(
                home: "Home", name: "Lamp Lit", characteristic: Self.lampOn, value: .bool(true),
                actionSets: ["Lamp Off"]), account: "alice")
        let logs = LogLines()
        try await home.withService(logs: logs) { events throws in
            var fired: [String] = []
            for _ in 0..<6 {
                home.press(0)
                fired += try await Self.firings(until: "Lamp Lit", in: events, home: home.manager)
            }
            #expect(fired == Array(repeating: ["Single Press", "Lamp Lit"], count: 6).flatMap { $0 })
        }
        #expect(!logs.all.contains { $0.level == .warning }, "\(logs.all)")
    }

    @Test("an automation that executes once turns itself off after its first firing, through the model")
    func executeOnce() async throws {
        let home = try await Home.make()
        try await home.manager.edit(
            .addTrigger(
                home: "Home", name: "Once", characteristic: Self.press, value: .int(0), actionSets: ["Lamp On"],
                options: TriggerOptions(executeOnce: true)), account: "alice")
        try await home.addTrigger("Long Press", on: 2, running: ["Lamp Off"])
        let once = try #require(
            try await home.manager.home("Home", account: "alice").triggers.first { $0.name == "Once" })
        #expect(once.isEnabled && once.options.executeOnce)
        try await home.withService { events throws in
            home.press(0)
            var seen: [String] = []
            for await event in events {
                switch event {
                case .didFireTrigger(_, let id, _) where id == once.id: seen.append("fired")
                case .didUpdateTrigger(_, let id, .enabled) where id == once.id:
                    seen.append("updated")
                default: continue
                }
                if seen.count == 2 { break }
            }
            #expect(seen == ["fired", "updated"])
            #expect(try await home.manager.home("Home", account: "alice").trigger(once.id)?.isEnabled == false)
            // A second press fires it no more: the long press's automation is the next to fire
            home.press(0)
            home.press(2)
            #expect(try await Self.firings(until: "Long Press", in: events, home: home.manager) == ["Long Press"])
        }
    }

    @Test("a failed action is counted and the next action set still runs; a removed action set leaves the automation")
    func failedAction() async throws {
        let home = try await Home.make()
        try await home.addTrigger("Single Press", on: 0, running: ["Both On", "Lamp On"])
        try await home.withService { events throws in
            home.press(0)
            #expect(
                try await Self.firings(until: "Single Press", in: events, home: home.manager, failing: 1)
                    == ["Single Press"])
            #expect(try await home.lamp() == .bool(true))
        }
        try await home.manager.edit(.removeActionSet(home: "Home", actionSet: "Both On"), account: "alice")
        let snapshot = try await home.manager.home("Home", account: "alice")
        let trigger = try #require(snapshot.triggers.first)
        #expect(trigger.actionSets.map { snapshot.actionSet($0)?.name } == ["Lamp On"])
        let firing = try #require(
            await home.manager.fireTrigger(
                trigger.id, home: snapshot.id,
                cause: .scheduled(at: Date()))
        )
        #expect(firing.actionSets.map(\.name) == ["Lamp On"])
        #expect(firing.failedActions == 0)
    }

    @Test("a firing that waits on a slow device holds up its own home's automations, not another home's")
    func homesDoNotWaitForEachOther() async throws {
        // Given Home, whose press runs a scene on a lamp that takes an hour to answer, and Cabin,
        // whose lamp turning on runs a scene of its own
        let manager = try HomeManager(database: HomeDatabase.inMemory(), driverTimeout: .seconds(7_200))
        try await manager.attach(
            VirtualDriver(
                devices: [
                    .init(id: "slow-lamp", name: "Slow Lamp", kind: .lightbulb, writeDelay: .seconds(3_600)),
                    .init(id: "cabin-lamp", name: "Cabin Lamp", kind: .lightbulb),
                ], tick: .seconds(86_400)))
        let button = ReportingDriver(ReportingDriver.button())
        try await manager.attach(button)
        for (home, accessories) in [("Home", ["button", "slow-lamp"]), ("Cabin", ["cabin-lamp"])] {
            try await manager.edit(.addHome(name: home), account: "alice")
            for id in accessories {
                try await manager.edit(.addAccessory(home: home, id: AccessoryID(id)), account: "alice")
            }
        }
        let slowOn = CharacteristicReference(accessory: "Slow Lamp", service: "Lightbulb", characteristic: .on)
        let cabinOn = CharacteristicReference(accessory: "Cabin Lamp", service: "Lightbulb", characteristic: .on)
        let cabinBrightness = CharacteristicReference(
            accessory: "Cabin Lamp", service: "Lightbulb", characteristic: .brightness)
        try await manager.edit(
            .addActionSet(home: "Home", name: "Slow", actions: [ActionRequest(slowOn, .bool(true))]), account: "alice")
        try await manager.edit(
            .addActionSet(home: "Cabin", name: "Dim", actions: [ActionRequest(cabinBrightness, .int(20))]),
            account: "alice")
        try await manager.writeValue(.bool(false), to: cabinOn, home: "Cabin", account: "alice")
        try await manager.edit(
            .addTrigger(home: "Home", name: "Press", characteristic: Self.press, value: .int(0), actionSets: ["Slow"]),
            account: "alice")
        try await manager.edit(
            .addTrigger(
                home: "Cabin", name: "Cabin On", characteristic: cabinOn, value: .bool(true), actionSets: ["Dim"]),
            account: "alice")
        let cabin = try await manager.home("Cabin", account: "alice").id

        let changes = await manager.changes()
        let events = await manager.events()
        let service = AutomationService(manager: manager, logger: Logger(label: "test"))
        let following = Task { await service.follow(changes) }
        defer { following.cancel() }

        // When the button is pressed (its scene now waits for the slow lamp) and then the cabin's
        // lamp is turned on
        button.send(.value("button", service: "button", characteristic: .programmableSwitchEvent, .int(0)))
        for await event in events {
            if case .didUpdateValueForCharacteristic(_, "button", _, _, _) = event { break }
        }
        try await manager.writeValue(.bool(true), to: cabinOn, home: "Cabin", account: "alice")

        // Then the cabin's automation fires while the press's still waits
        for await event in events {
            guard case .didFireTrigger(let home, _, let firing) = event else { continue }
            #expect(home == cabin, "the first firing is the cabin's")
            #expect(firing.failedActions == 0)
            break
        }
    }
}
