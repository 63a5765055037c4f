import Foundation
import Logging
import Schedules
import Synchronization
import TestSupport
import Testing
import VirtualDevices

@testable import Automations
@testable import HomeModel

/// "Turn back after" on a real manager, a virtual lamp and a clock the test moves: the lamp an
/// automation turned on is off again at its time, a new firing restarts the wait, and a return
/// pending across a restart happens at its time, or at once when its time passed while down.
@Suite("Turn back after", .timeLimit(.minutes(5)))
struct TurnBackServiceTests {
    static let lampOn = CharacteristicReference(accessory: "Lamp", service: "Lightbulb", characteristic: .on)
    static let start = try! Date("2026-03-02T07:00:00Z", strategy: .iso8601)

    /// A manager over `database` with the lamp; `build` adds the home, the lamp (turned off),
    /// "Lamp On" and the automation "Hall Light" that runs it and turns back after five minutes.
    static func manager(_ database: HomeDatabase, build: Bool = true) async throws -> HomeManager {
        let manager = try HomeManager(database: database)
        try await manager.attach(
            VirtualDriver(devices: [.init(id: "lamp", name: "Lamp", kind: .lightbulb)], tick: .seconds(86_400)))
        guard build else { return manager }
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "lamp"), account: "alice")
        try await manager.writeValue(.bool(false), to: lampOn, home: "Home", account: "alice")
        try await manager.edit(
            .addActionSet(home: "Home", name: "Lamp On", actions: [ActionRequest(lampOn, .bool(true))]),
            account: "alice")
        try await manager.edit(
            .addScheduleTrigger(
                home: "Home", name: "Hall Light",
                schedule: .timeOfDay(try TimeOfDay(hour: 23, minute: 0), weekdays: Set(Weekday.allCases)),
                actionSets: ["Lamp On"], options: TriggerOptions(turnBackAfter: .seconds(300))),
            account: "alice")
        return manager
    }

    static func lamp(_ manager: HomeManager) async throws -> CharacteristicValue? {
        try await manager.home("Home", account: "alice").accessory("lamp")?.services.first?.characteristic(.on)?.value
    }

    /// Fires `name` as the automation services do, at `date`.
    static func fire(_ manager: HomeManager, at date: Date, _ name: String = "Hall Light") async throws {
        let home = try await manager.home("Home", account: "alice")
        let trigger = try #require(home.triggers.first { $0.name == name })
        _ = try #require(
            await manager.fireTrigger(
                trigger.id, home: home.id,
                cause: .scheduled(at: date),
                at: date))
    }

    /// Runs the service from `from` (wall time) on a manual clock until `body` returns; with
    /// `automations`, the automation service too, on the same clock and loop guard.
    static func withService(
        _ manager: HomeManager, from: Date, logs: LogLines = LogLines(), automations: Bool = false,
        _ body: (ManualClock, @Sendable () -> Date) async throws -> Void
    ) async throws {
        let manual = ManualClock()
        let now: @Sendable () -> Date = {
            let offset = manual.now.offset.components
            return from + Double(offset.seconds) + Double(offset.attoseconds) * 1e-18
        }
        let clock = ScheduleClock(clock: manual, now: now)
        let automationService = AutomationService(manager: manager, clock: clock, logger: logs.logger)
        let service = TurnBackService(
            manager: manager, clock: clock, loopGuard: automationService.loopGuard, logger: logs.logger)
        let changes = await service.changes()
        let automationChanges = automations ? await automationService.changes() : nil
        let following = Task {
            await withDiscardingTaskGroup { group in
                if let automationChanges { group.addTask { await automationService.follow(automationChanges) } }
                await service.follow(changes)
            }
        }
        try await eventually("the service waits") { manual.sleepers > 0 }
        try await body(manual, now)
        following.cancel()
        await following.value
    }

    static func advance(_ clock: ManualClock, by duration: Duration) async throws {
        clock.advance(by: duration)
        try await eventually("the service waits again") { clock.sleepers > 0 }
    }

    @Test("the lamp returns to off at its time; a second firing restarts the wait")
    func returnsAtItsTime() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory())
        try await Self.withService(manager, from: Self.start) { clock, now in
            try await Self.fire(manager, at: now())
            #expect(try await Self.lamp(manager) == .bool(true))
            let pending = try manager.pendingTurnBacks()
            #expect(pending.map(\.due) == [Self.start + 300])
            #expect(pending.first?.values.map(\.value) == [.bool(false)])
            try await Self.advance(clock, by: .seconds(299))
            #expect(try await Self.lamp(manager) == .bool(true))

            // Fired again at 299 s: the wait starts over, and the value to return stays the first one's
            try await Self.fire(manager, at: now())
            #expect(try manager.pendingTurnBacks().map(\.due) == [Self.start + 599])
            #expect(try manager.pendingTurnBacks().first?.values.map(\.value) == [.bool(false)])
            try await Self.advance(clock, by: .seconds(2))
            #expect(try await Self.lamp(manager) == .bool(true))
            try await Self.advance(clock, by: .seconds(297))
            #expect(try await Self.lamp(manager) == .bool(true))
            try await Self.advance(clock, by: .seconds(1))
            try await eventually("the lamp is off again") { try await Self.lamp(manager) == .bool(false) }
            #expect(try manager.pendingTurnBacks().isEmpty)
        }
        await manager.shutdown()
    }

    @Test("a return pending across a restart happens at its time, or at once when its time passed while down")
    func restart() async throws {
        try await withTemporaryDirectory { directory in
            for (downFor, late) in [(100.0, false), (1_000.0, true)] {
                let path = "\(directory)/home-\(Int(downFor)).sqlite"
                let first = try await Self.manager(HomeDatabase.open(atPath: path))
                try await Self.fire(first, at: Self.start)
                #expect(try await Self.lamp(first) == .bool(true))
                await first.shutdown()

                let logs = LogLines()
                let second = try await Self.manager(HomeDatabase.open(atPath: path), build: false)
                let trigger = try #require(try await second.home("Home", account: "alice").triggers.first)
                #expect(trigger.options == TriggerOptions(turnBackAfter: .seconds(300)))
                #expect(try second.pendingTurnBacks().map(\.due) == [Self.start + 300])
                try await second.writeValue(.bool(true), to: Self.lampOn, home: "Home", account: "alice")
                try await Self.withService(second, from: Self.start + downFor, logs: logs) { clock, _ in
                    if !late {
                        #expect(try await Self.lamp(second) == .bool(true))
                        try await Self.advance(clock, by: .seconds(199))
                        #expect(try await Self.lamp(second) == .bool(true))
                        #expect(try second.pendingTurnBacks().count == 1)
                        try await Self.advance(clock, by: .seconds(1))
                    }
                    try await eventually("the lamp is off again") { try await Self.lamp(second) == .bool(false) }
                    try await eventually("the return is done") { try second.pendingTurnBacks().isEmpty }
                }
                #expect(logs.contains("automation 'Hall Light' turned 1 value(s) back"), "\(logs.all)")
                #expect(logs.contains("700 s late: due while the hub was down") == late, "\(logs.all)")
                await second.shutdown()
            }
        }
    }

    @Test(
        "turning the automation off or removing it cancels its pending turn-back, row and all; one executing once keeps it"
    )
    func cancelledByTurningOffOrRemoving() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory())
        try await Self.withService(manager, from: Self.start) { clock, now in
            // Fired, then turned off: the return is dropped, and the lamp stays on past its time
            try await Self.fire(manager, at: now())
            let pending = try #require(try manager.pendingTurnBacks().first)
            try await manager.edit(
                .enableTrigger(home: "Home", trigger: "Hall Light", enabled: false), account: "alice")
            #expect(try manager.pendingTurnBacks().isEmpty)
            try await Self.advance(clock, by: .seconds(301))
            #expect(try await Self.lamp(manager) == .bool(true))
            // A return read before its automation was turned off is dropped, not written, and not
            // announced to the loop guard as writing
            let wrote = Mutex(false)
            #expect(await manager.turnBack(pending) { wrote.withLock { $0 = true } } == nil)
            #expect(!wrote.withLock { $0 })
            #expect(try await Self.lamp(manager) == .bool(true))

            // On again and fired, then removed: dropped too
            try await manager.edit(.enableTrigger(home: "Home", trigger: "Hall Light", enabled: true), account: "alice")
            try await Self.fire(manager, at: now())
            #expect(try manager.pendingTurnBacks().count == 1)
            try await manager.edit(.removeTrigger(home: "Home", trigger: "Hall Light"), account: "alice")
            #expect(try manager.pendingTurnBacks().isEmpty)

            // Executing once, it turns itself off as it fires; its return still comes at its time
            try await manager.writeValue(.bool(false), to: Self.lampOn, home: "Home", account: "alice")
            try await manager.edit(
                .addScheduleTrigger(
                    home: "Home", name: "Once",
                    schedule: .timeOfDay(try TimeOfDay(hour: 23, minute: 0), weekdays: Set(Weekday.allCases)),
                    actionSets: ["Lamp On"], options: TriggerOptions(executeOnce: true, turnBackAfter: .seconds(300))),
                account: "alice")
            try await Self.fire(manager, at: now(), "Once")
            #expect(try await manager.home("Home", account: "alice").triggers.first?.isEnabled == false)
            #expect(try manager.pendingTurnBacks().count == 1)
            try await Self.advance(clock, by: .seconds(300))
            try await eventually("the lamp is off again") { try await Self.lamp(manager) == .bool(false) }
            #expect(try manager.pendingTurnBacks().isEmpty)
        }
        await manager.shutdown()
    }

    /// The home's manager, the home, its automation that turns the lamp on, and the lamp's On.
    static func lampAutomation() async throws -> (HomeManager, Home, Trigger, ValueKey) {
        let manager = try await Self.manager(HomeDatabase.inMemory())
        let home = try await manager.home("Home", account: "alice")
        let trigger = try #require(home.triggers.first)
        let service = try #require(home.accessory("lamp")?.services.first?.id)
        return (manager, home, trigger, ValueKey(accessory: "lamp", service: service, characteristic: .on))
    }

    @Test("only a firing that stored a turn-back leaves its chain for it; the turn-back takes it, written or dropped")
    func turnBackChains() async throws {
        let (manager, home, trigger, key) = try await Self.lampAutomation()
        let chains = FiringChains(rule: .standard)
        func admit() throws -> Int {
            guard case .fires(let serial) = chains.admit(trigger, in: home, after: key, took: .bool(true), at: .now)
            else { throw TurnBackTestError("not admitted") }
            return serial
        }
        // Stored no turn-back (conditions, a removal, a failed write): nothing waits
        chains.finish(try admit(), at: .now)
        #expect(chains.pendingTurnBackChains == 0)
        // Stored one: its chain waits until the turn-back writes, or is dropped
        chains.finish(try admit(), at: .now, leftTurnBack: true)
        #expect(chains.pendingTurnBackChains == 1)
        chains.beginTurnBack(of: trigger.id, writing: [])
        chains.finishTurnBack(of: trigger.id, at: .now)
        #expect(chains.pendingTurnBackChains == 0)
        chains.finish(try admit(), at: .now, leftTurnBack: true)
        chains.finishTurnBack(of: trigger.id, at: .now)
        #expect(chains.pendingTurnBackChains == 0)
        await manager.shutdown()
    }

    @Test(
        "a turn-back due while its firing still runs takes that firing's chain, so a loop through it is seen, and the firing leaves none behind"
    )
    func turnBackDuringItsFiring() async throws {
        let (manager, home, trigger, key) = try await Self.lampAutomation()
        let chains = FiringChains(rule: .standard)
        func admit() -> FiringChains.Admission {
            chains.admit(trigger, in: home, after: key, took: .bool(true), at: .now)
        }
        guard case .fires(let first) = admit() else { throw TurnBackTestError("the first round not admitted") }
        chains.finish(first, at: .now)
        guard case .fires(let running) = admit() else { throw TurnBackTestError("the second round not admitted") }
        // Its turn-back comes due before it finished, and writes what sets the automation off again
        chains.beginTurnBack(
            of: trigger.id,
            writing: [Action(accessory: "lamp", service: key.service, characteristic: .on, value: .bool(true))])
        chains.finish(running, at: .now, leftTurnBack: true)
        #expect(chains.pendingTurnBackChains == 0)
        guard case .fires = admit() else { throw TurnBackTestError("the third round not admitted") }
        #expect(admit() == .loop([trigger.id]))
        chains.finishTurnBack(of: trigger.id, at: .now)
        await manager.shutdown()
    }

    struct TurnBackTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("a turn-back that sets off another automation that sets off the first again is stopped as a loop")
    func loopThroughTurnBack() async throws {
        // Given "Hall Light" (Lamp 2 turns on: Lamp on, turned back off after a minute) and "Echo"
        // (Lamp turns off: Lamp 2 off and on again), so each turn-back sets off Echo, which sets off
        // Hall Light, whose turn-back sets off Echo, ...
        let manager = try HomeManager(database: HomeDatabase.inMemory())
        try await manager.attach(
            VirtualDriver(
                devices: [
                    .init(id: "lamp", name: "Lamp", kind: .lightbulb),
                    .init(id: "lamp-2", name: "Lamp 2", kind: .lightbulb),
                ], tick: .seconds(86_400)))
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        let lamp2On = CharacteristicReference(accessory: "Lamp 2", service: "Lightbulb", characteristic: .on)
        for id: AccessoryID in ["lamp", "lamp-2"] {
            try await manager.edit(.addAccessory(home: "Home", id: id), account: "alice")
        }
        for (name, reference, on) in [
            ("Lamp On", Self.lampOn, true), ("Lamp 2 Off", lamp2On, false), ("Lamp 2 On", lamp2On, true),
        ] {
            try await manager.edit(
                .addActionSet(home: "Home", name: name, actions: [ActionRequest(reference, .bool(on))]),
                account: "alice")
            try await manager.writeValue(.bool(false), to: reference, home: "Home", account: "alice")
        }
        try await manager.edit(
            .addTrigger(
                home: "Home", name: "Hall Light", characteristic: lamp2On, value: .bool(true), actionSets: ["Lamp On"],
                options: TriggerOptions(turnBackAfter: .seconds(60))), account: "alice")
        try await manager.edit(
            .addTrigger(
                home: "Home", name: "Echo", characteristic: Self.lampOn, value: .bool(false),
                actionSets: ["Lamp 2 Off", "Lamp 2 On"]), account: "alice")
        let names = Dictionary(
            uniqueKeysWithValues: try await manager.home("Home", account: "alice").triggers.map { ($0.id, $0.name) })
        let logs = LogLines()
        let events = await manager.events()
        try await Self.withService(manager, from: Self.start, logs: logs, automations: true) { clock, _ in
            var firings = events.compactMap { event -> String? in
                guard case .didFireTrigger(_, let id, _) = event else { return nil }
                return names[id]
            }.makeAsyncIterator()
            // When a person turns Lamp 2 on, and each minute's turn-back comes
            try await manager.writeValue(.bool(true), to: lamp2On, home: "Home", account: "alice")
            var fired = [await firings.next()]
            for round in 1...3 {
                clock.advance(by: .seconds(60))
                fired.append(await firings.next())
                if round < 3 { fired.append(await firings.next()) }
            }

            // Then each fired three times, and the fourth firing of Hall Light is stopped as a loop
            #expect(fired == ["Hall Light", "Echo", "Hall Light", "Echo", "Hall Light", "Echo"])
            try await eventually("the loop is reported") { logs.contains("set each other off") }
            try await eventually("no return is left pending") { try manager.pendingTurnBacks().isEmpty }
        }
        let warnings = logs.all.filter { $0.level == .warning }.map(\.message)
        #expect(
            warnings == ["automations 'Hall Light', 'Echo' set each other off: stopped after 3 rounds"], "\(logs.all)")
        await manager.shutdown()
    }

    @Test("a turn-back duration out of range, or not in whole seconds, is invalidDuration")
    func badDurations() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory())
        for duration in [Duration.seconds(-5), .zero, .seconds(86_401), .milliseconds(1_500), .seconds(Int64.max)] {
            await #expect(throws: HomeError.self) {
                try await manager.edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Bad",
                        schedule: .timeOfDay(try TimeOfDay(hour: 23, minute: 0), weekdays: [.monday]),
                        actionSets: ["Lamp On"], options: TriggerOptions(turnBackAfter: duration)),
                    account: "alice")
            }
            do {
                try await manager.edit(
                    .addTrigger(
                        home: "Home", name: "Bad", characteristic: Self.lampOn, value: .bool(true),
                        actionSets: ["Lamp On"], options: TriggerOptions(turnBackAfter: duration)),
                    account: "alice")
                Issue.record("\(duration) was taken")
            } catch {
                #expect(error.code == .invalidDuration)
            }
        }
        await manager.shutdown()
    }
}

extension FiringChains {
    /// How many chains wait for a turn-back.
    var pendingTurnBackChains: Int { state.withLock { $0.turnBackChains.count } }
}
