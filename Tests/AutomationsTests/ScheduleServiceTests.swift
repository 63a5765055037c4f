import Foundation
import HomeModel
import Logging
import Schedules
import Synchronization
import TestSupport
import Testing
import VirtualDevices

@testable import Automations

/// The schedule service on a real manager and a virtual lamp, on a clock the test moves: a time of
/// day fires at its minute, a restart runs what came due within the grace and logs the rest as
/// missed, a sunrise fires at Oslo's.
@Suite("Schedules", .timeLimit(.minutes(5)))
struct ScheduleServiceTests {
    static let lampOn = CharacteristicReference(accessory: "Lamp", service: "Lightbulb", characteristic: .on)
    static let berlin = try! HomeLocation(latitude: 52.52, longitude: 13.405, timeZone: "Europe/Berlin")
    static let oslo = try! HomeLocation(latitude: 59.9139, longitude: 10.7522, timeZone: "Europe/Oslo")

    /// A manager over `database` with the lamp, the home at `location` and the action set "Lamp On".
    static func manager(_ database: HomeDatabase, location: HomeLocation, build: Bool = true) async throws
        -> HomeManager
    {
        let manager = try HomeManager(database: database)
        try await manager.attach(
            VirtualDriver(devices: [.init(id: "lamp", name: "Lamp", kind: .lightbulb)], tick: .seconds(86_400)))
        guard build else { return manager }
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "lamp"), account: "alice")
        try await manager.edit(.setLocation(home: "Home", location: location), account: "alice")
        try await manager.edit(
            .addActionSet(home: "Home", name: "Lamp On", actions: [ActionRequest(lampOn, .bool(true))]),
            account: "alice")
        return manager
    }

    static func lamp(_ manager: HomeManager) async throws -> CharacteristicValue? {
        try await manager.home("Home", account: "alice").accessory("lamp")?.services.first?.characteristic(.on)?.value
    }

    /// Runs the service from `start` (wall time) on a manual clock until `body` returns; `body` gets
    /// the clock, with the service waiting on it.
    static func withService(
        _ manager: HomeManager, from start: Date, logs: LogLines = LogLines(),
        _ body: (ManualClock) async throws -> Void
    ) async throws {
        let manual = ManualClock()
        let clock = ScheduleClock(clock: manual) {
            let offset = manual.now.offset.components
            return start + Double(offset.seconds) + Double(offset.attoseconds) * 1e-18
        }
        let service = ScheduleService(manager: manager, clock: clock, logger: logs.logger)
        let changes = await service.changes()
        let following = Task { await service.follow(changes) }
        try await eventually("the service waits") { manual.sleepers > 0 }
        try await body(manual)
        following.cancel()
        await following.value
    }

    /// Moves `clock` on and waits until the service waits again.
    static func advance(_ clock: ManualClock, by duration: Duration) async throws {
        clock.advance(by: duration)
        try await eventually("the service waits again") { clock.sleepers > 0 }
    }

    static func date(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    static func addMorning(_ manager: HomeManager) async throws {
        try await manager.edit(
            .addScheduleTrigger(
                home: "Home", name: "Morning",
                schedule: .timeOfDay(try TimeOfDay(hour: 7, minute: 30), weekdays: Set(Weekday.allCases)),
                actionSets: ["Lamp On"]), account: "alice")
    }

    @Test("a time of day fires at its minute and runs its action set, and its firing is stored")
    func timeOfDay() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory(), location: Self.berlin)
        try await Self.addMorning(manager)
        let id = try #require(try await manager.home("Home", account: "alice").triggers.first?.id)
        try await Self.withService(manager, from: Self.date("2026-03-02T07:28:30+01:00")) { clock in
            try await Self.advance(clock, by: .seconds(60))
            #expect(try await Self.lamp(manager) != .bool(true))
            try await Self.advance(clock, by: .seconds(30))
            try await eventually("the lamp is on") { try await Self.lamp(manager) == .bool(true) }
            let state = try #require(try manager.scheduleStates()[id])
            #expect(state.lastFiring?.slot == (try LocalDateTime(year: 2026, month: 3, day: 2, hour: 7, minute: 30)))
            #expect(state.lastFiring?.instant == Self.date("2026-03-02T07:30:00+01:00"))
        }
        await manager.shutdown()
    }

    @Test("a restart within the grace runs the firing missed once; beyond it the firing is logged as missed")
    func restart() async throws {
        try await withTemporaryDirectory { directory in
            // The hub runs the schedule from 07:00, then stops before 07:30
            let path = "\(directory)/home.sqlite"
            let first = try await Self.manager(HomeDatabase.open(atPath: path), location: Self.berlin)
            try await Self.addMorning(first)
            try await Self.withService(first, from: Self.date("2026-03-02T07:00:00+01:00")) { _ in }
            await first.shutdown()

            // Back at 07:40, ten minutes late: it runs once
            let logs = LogLines()
            let second = try await Self.manager(HomeDatabase.open(atPath: path), location: Self.berlin, build: false)
            try await Self.withService(second, from: Self.date("2026-03-02T07:40:00+01:00"), logs: logs) { _ in
                try await eventually("the lamp is on") { try await Self.lamp(second) == .bool(true) }
            }
            await second.shutdown()
            #expect(logs.contains("runs its firing of 2026-03-02 07:30"))
            #expect(logs.all.filter { $0.message.contains("ran 'Lamp On'") }.count == 1)

            // Back again at 07:45: nothing runs twice
            let again = LogLines()
            let third = try await Self.manager(HomeDatabase.open(atPath: path), location: Self.berlin, build: false)
            try await Self.withService(third, from: Self.date("2026-03-02T07:45:00+01:00"), logs: again) { _ in }
            #expect(!again.contains("ran 'Lamp On'"))
            #expect(!again.contains("07:30"))
            await third.shutdown()

            // Down from 07:46 to the next day's 07:50, twenty minutes late: missed, logged, not run
            let late = LogLines()
            let fourth = try await Self.manager(HomeDatabase.open(atPath: path), location: Self.berlin, build: false)
            try await Self.withService(fourth, from: Self.date("2026-03-03T07:50:00+01:00"), logs: late) { _ in }
            #expect(!late.contains("ran 'Lamp On'"))
            #expect(late.contains("missed its firing of 2026-03-03 07:30"), "\(late.all)")
            #expect(!late.contains("runs its firing"))
            await fourth.shutdown()
        }
    }

    @Test("each automation's own grace: an hour runs a firing missed by half an hour, zero never catches up")
    func ownGrace() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let first = try await Self.manager(HomeDatabase.open(atPath: path), location: Self.berlin)
            for (name, grace) in [("Patient", 3_600), ("Strict", 0)] {
                try await first.edit(
                    .addScheduleTrigger(
                        home: "Home", name: name,
                        schedule: .timeOfDay(try TimeOfDay(hour: 7, minute: 30), weekdays: Set(Weekday.allCases)),
                        actionSets: ["Lamp On"], options: TriggerOptions(catchUpGrace: .seconds(grace))),
                    account: "alice")
            }
            try await Self.withService(first, from: Self.date("2026-03-02T07:00:00+01:00")) { _ in }
            await first.shutdown()

            // Back at 08:00, half an hour late: Patient runs, Strict is missed
            let logs = LogLines()
            let second = try await Self.manager(HomeDatabase.open(atPath: path), location: Self.berlin, build: false)
            try await Self.withService(second, from: Self.date("2026-03-02T08:00:00+01:00"), logs: logs) { _ in
                try await eventually("the lamp is on") { try await Self.lamp(second) == .bool(true) }
            }
            await second.shutdown()
            #expect(logs.contains("automation 'Patient' runs its firing of 2026-03-02 07:30"), "\(logs.all)")
            #expect(logs.contains("automation 'Strict' missed its firing of 2026-03-02 07:30"), "\(logs.all)")
            #expect(logs.all.filter { $0.message.contains("ran 'Lamp On'") }.count == 1)
        }
    }

    @Test("a catch-up grace is whole seconds from 0 to a day")
    func graceRange() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory(), location: Self.berlin)
        for grace in [Duration.seconds(-1), .seconds(86_401), .milliseconds(1_500)] {
            await #expect(throws: HomeError.self) {
                try await manager.edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Bad",
                        schedule: .timeOfDay(try TimeOfDay(hour: 7, minute: 30), weekdays: [.monday]),
                        actionSets: ["Lamp On"], options: TriggerOptions(catchUpGrace: grace)), account: "alice")
            }
        }
        await manager.shutdown()
    }

    @Test("the model is told each automation's next firing, and told again when it fired")
    func nextFiring() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory(), location: Self.berlin)
        try await Self.addMorning(manager)
        let id = try #require(try await manager.home("Home", account: "alice").triggers.first?.id)
        func next() async throws -> Date? { try await manager.home("Home", account: "alice").nextFirings[id] }
        try await Self.withService(manager, from: Self.date("2026-03-02T07:00:00+01:00")) { clock in
            try await eventually("the first firing is told") {
                try await next() == Self.date("2026-03-02T07:30:00+01:00")
            }
            try await Self.advance(clock, by: .seconds(31 * 60))
            try await eventually("the next day's is told") {
                try await next() == Self.date("2026-03-03T07:30:00+01:00")
            }
            // Turned off, it has none
            try await manager.edit(.enableTrigger(home: "Home", trigger: "Morning", enabled: false), account: "alice")
            try await eventually("the firing is withdrawn") { try await next() == nil }
        }
        await manager.shutdown()
    }

    @Test("a polar night is logged once a local day, not at every plan; the next sunrise is planned for January")
    func polarNight() async throws {
        let tromso = try HomeLocation(latitude: 69.6492, longitude: 18.9553, timeZone: "Europe/Oslo")
        let manager = try await Self.manager(HomeDatabase.inMemory(), location: tromso)
        try await manager.edit(
            .addScheduleTrigger(
                home: "Home", name: "Dawn", schedule: .sun(.sunrise, offset: 0, weekdays: Set(Weekday.allCases)),
                actionSets: ["Lamp On"]), account: "alice")
        let id = try #require(try await manager.home("Home", account: "alice").triggers.first?.id)
        let logs = LogLines()
        func polarLines() -> Int { logs.all.count { $0.message.contains("is a polar night") } }
        try await Self.withService(manager, from: Self.date("2026-12-15T12:00:00+01:00"), logs: logs) { clock in
            try await eventually("the polar night is logged") { polarLines() == 1 }
            #expect(logs.contains("2026-12-15 is a polar night (the sun does not rise)"), "\(logs.all)")
            // Ten of the service's waits and a change of plan later, still once
            for _ in 0..<10 { try await Self.advance(clock, by: .seconds(60)) }
            try await manager.edit(.renameTrigger(home: "Home", trigger: "Dawn", name: "First Light"), account: "alice")
            try await Self.advance(clock, by: .seconds(60))
            #expect(polarLines() == 1)
            // The next local day says it again, once
            try await Self.advance(clock, by: .seconds(86_400))
            try await eventually("the next day is logged") { polarLines() == 2 }
            #expect(logs.contains("2026-12-16 is a polar night"))
            let next = try #require(try await manager.home("Home", account: "alice").nextFirings[id])
            #expect(next > Self.date("2027-01-01T00:00:00+01:00") && next < Self.date("2027-02-01T00:00:00+01:00"))
        }
        #expect(try await Self.lamp(manager) != .bool(true))
        await manager.shutdown()
    }

    @Test("a sunrise in a home at Oslo fires at Oslo's sunrise")
    func sunriseAtOslo() async throws {
        let manager = try await Self.manager(HomeDatabase.inMemory(), location: Self.oslo)
        try await manager.edit(
            .addScheduleTrigger(
                home: "Home", name: "Dawn", schedule: .sun(.sunrise, offset: 0, weekdays: Set(Weekday.allCases)),
                actionSets: ["Lamp On"]), account: "alice")
        let day = try LocalDate(year: 2025, month: 6, day: 21)
        let sunrise = try #require(
            SunCalculator.day(day, at: Self.oslo.coordinates, in: Self.oslo.timeZone).instant(of: .sunrise))
        // Oslo's sunrise on midsummer day is 03:53:46 (astral, Tests/SchedulesTests/Fixtures/sun-oslo.csv)
        #expect(abs(sunrise.timeIntervalSince(Self.date("2025-06-21T03:54:00+02:00"))) < 60)
        try await Self.withService(manager, from: sunrise - 600) { clock in
            try await Self.advance(clock, by: .seconds(599))
            #expect(try await Self.lamp(manager) != .bool(true))
            try await Self.advance(clock, by: .seconds(2))
            try await eventually("the lamp is on") { try await Self.lamp(manager) == .bool(true) }
        }
        await manager.shutdown()
    }
}
