import Foundation
import HomeModel
import Schedules
import Synchronization
import TestSupport
import Testing

@testable import Automations

/// Two lamps, the slow one's writes held until the test lets them go.
final class GatedDriver: AccessoryDriver, Sendable {
    let name = "gated"
    let updates: AsyncStream<DriverUpdate>
    private let sink: AsyncStream<DriverUpdate>.Continuation
    private let gate: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation
    /// How many writes to the slow lamp are waiting at the gate.
    let waiting = Mutex(0)

    init() {
        (updates, sink) = AsyncStream.makeStream()
        (gate, opener) = AsyncStream.makeStream()
    }

    static func lamp(_ id: AccessoryID, _ name: String) -> Accessory {
        Accessory(
            id: id, name: name, category: .lightbulb,
            services: [
                Service(
                    id: "light", type: .lightbulb, name: "Lightbulb", characteristics: [.standard(.on, .bool(false))])
            ])
    }

    func open() { opener.finish() }
    func restore(_ accessories: [Accessory]) async {}
    func start() async throws {}
    func stop() async {
        sink.finish()
        opener.finish()
    }
    func accessories() async -> [Accessory] { [Self.lamp("slow", "Slow"), Self.lamp("fast", "Fast")] }
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    { .bool(false) }
    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        guard accessory == "slow" else { return }
        waiting.withLock { $0 += 1 }
        for await _ in gate {}
    }
    func identify(_ accessory: AccessoryID) async throws {}
}

/// Firings due together: stored and run side by side, so that one waiting on a slow device does not
/// hold up the others; a removed automation's stored state goes with it.
@Suite("Schedules due together", .timeLimit(.minutes(5)))
struct ScheduleBurstTests {
    static func value(_ manager: HomeManager, _ lamp: AccessoryID) async throws -> CharacteristicValue? {
        try await manager.home("Home", account: "alice").accessory(lamp)?.services.first?.characteristic(.on)?.value
    }

    /// A manager with the gated driver attached and a home at Berlin.
    static func gatedHome() async throws -> (HomeManager, GatedDriver) {
        let manager = try HomeManager(database: HomeDatabase.inMemory())
        let driver = GatedDriver()
        try await manager.attach(driver)
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.setLocation(home: "Home", location: ScheduleServiceTests.berlin), account: "alice")
        return (manager, driver)
    }

    @Test("two automations due in the same minute: the one on a fast lamp runs while the slow lamp's write still waits")
    func sideBySide() async throws {
        let (manager, driver) = try await Self.gatedHome()
        let at = try TimeOfDay(hour: 7, minute: 30)
        // The slow one first: by its identifier's order it would fire first one after another.
        for (lamp, name) in [("Slow", "A Slow"), ("Fast", "B Fast")] {
            try await manager.edit(.addAccessory(home: "Home", id: AccessoryID(lamp.lowercased())), account: "alice")
            let on = CharacteristicReference(accessory: lamp, service: "Lightbulb", characteristic: .on)
            try await manager.edit(
                .addActionSet(home: "Home", name: "\(lamp) On", actions: [ActionRequest(on, .bool(true))]),
                account: "alice")
            try await manager.edit(
                .addScheduleTrigger(
                    home: "Home", name: name, schedule: .timeOfDay(at, weekdays: Set(Weekday.allCases)),
                    actionSets: ["\(lamp) On"]), account: "alice")
        }
        try await ScheduleServiceTests.withService(
            manager, from: ScheduleServiceTests.date("2026-03-02T07:29:30+01:00")
        ) { clock in
            clock.advance(by: .seconds(30))
            try await eventually("the slow lamp's write waits") { driver.waiting.withLock { $0 } == 1 }
            try await eventually("the fast lamp is on meanwhile") {
                try await Self.value(manager, "fast") == .bool(true)
            }
            #expect(try await Self.value(manager, "slow") != .bool(true))
            driver.open()
            try await eventually("the slow lamp is on") { try await Self.value(manager, "slow") == .bool(true) }
            let states = try manager.scheduleStates()
            #expect(states.count == 2 && states.values.allSatisfy { $0.lastFiring?.slot.time == at })
        }
        await manager.shutdown()
    }

    @Test("firings due together that write one accessory run one after another in due order; the others beside them")
    func sharedAccessoryInOrder() async throws {
        let (manager, driver) = try await Self.gatedHome()
        let at = try TimeOfDay(hour: 7, minute: 30)
        for lamp in ["Slow", "Fast"] {
            try await manager.edit(.addAccessory(home: "Home", id: AccessoryID(lamp.lowercased())), account: "alice")
        }
        let slow = CharacteristicReference(accessory: "Slow", service: "Lightbulb", characteristic: .on)
        let fast = CharacteristicReference(accessory: "Fast", service: "Lightbulb", characteristic: .on)
        for (name, target, value) in [("Slow On", slow, true), ("Slow Off", slow, false), ("Fast On", fast, true)] {
            try await manager.edit(
                .addActionSet(home: "Home", name: name, actions: [ActionRequest(target, .bool(value))]),
                account: "alice")
            try await manager.edit(
                .addScheduleTrigger(
                    home: "Home", name: "\(name) Mornings", schedule: .timeOfDay(at, weekdays: Set(Weekday.allCases)),
                    actionSets: [name]), account: "alice")
        }
        let triggers = try await manager.home("Home", account: "alice").triggers.filter { $0.name.hasPrefix("Slow") }
        let lastDue = try #require(triggers.max { $0.id.rawValue < $1.id.rawValue })
        try await ScheduleServiceTests.withService(
            manager, from: ScheduleServiceTests.date("2026-03-02T07:29:30+01:00")
        ) { clock in
            clock.advance(by: .seconds(30))
            try await eventually("the fast lamp is on") { try await Self.value(manager, "fast") == .bool(true) }
            try await eventually("the first write to the slow lamp waits") { driver.waiting.withLock { $0 } == 1 }
            #expect(
                driver.waiting.withLock { $0 } == 1, "the second write to the slow lamp began before the first ended")
            driver.open()
            try await eventually("both writes ran") { driver.waiting.withLock { $0 } == 2 }
            try await eventually("the last due wins") {
                try await Self.value(manager, "slow") == .bool(lastDue.name == "Slow On Mornings")
            }
        }
        await manager.shutdown()
    }

    @Test("lanes: firings that share an accessory, directly or through another, run in one lane in due order")
    func lanes() {
        let lanes = SchedulePlanner.lanes([["a"], ["b"], ["c"], ["a", "c"], ["d"], []])
        #expect(Set(lanes) == [[1], [0, 2, 3], [4], [5]])
    }

    @Test("a removed automation's stored state is dropped")
    func removedState() async throws {
        let manager = try await ScheduleServiceTests.manager(
            HomeDatabase.inMemory(), location: ScheduleServiceTests.berlin)
        try await ScheduleServiceTests.addMorning(manager)
        let id = try #require(try await manager.home("Home", account: "alice").triggers.first?.id)
        try await ScheduleServiceTests.withService(
            manager, from: ScheduleServiceTests.date("2026-03-02T07:00:00+01:00")
        ) { _ in
            try await eventually("its state is stored") { try manager.scheduleStates()[id] != nil }
            try await manager.edit(.removeTrigger(home: "Home", trigger: "Morning"), account: "alice")
            try await eventually("its state is dropped") { try manager.scheduleStates().isEmpty }
        }
        await manager.shutdown()
    }
}
