import Foundation
import GRDB
import HomeModel
import Schedules
import TestSupport
import Testing

/// Schedule triggers and the home's location in the model: their checks, the file, and a database an
/// older gateway wrote.
@Suite("Schedule triggers in the model")
struct ScheduleTriggerTests {
    let home = Fixture.home
    let admin = Fixture.admin

    func make(database: HomeDatabase? = nil) async throws -> Fixture {
        try await Fixture.withNight(database: database)
    }

    static let oslo = try! HomeLocation(latitude: 59.9139, longitude: 10.7522, timeZone: "Europe/Oslo")

    @Test("a location is checked (coordinates, time zone) and set by the administrator only")
    func location() async throws {
        func code(_ make: () throws(HomeError) -> HomeLocation) -> HomeError.Code? {
            do {
                _ = try make()
                return nil
            } catch { return error.code }
        }
        #expect(
            code { () throws(HomeError) in try HomeLocation(latitude: 91, longitude: 0, timeZone: "UTC") }
                == .invalidCoordinates)
        #expect(
            code { () throws(HomeError) in try HomeLocation(latitude: 0, longitude: -181, timeZone: "UTC") }
                == .invalidCoordinates)
        #expect(
            code { () throws(HomeError) in try HomeLocation(latitude: 0, longitude: 0, timeZone: "Europe/Atlantis") }
                == .unknownTimeZone)
        #expect(try HomeLocation(latitude: -90, longitude: 180, timeZone: "UTC").latitude == -90)

        let f = try await make()
        #expect(
            await errorCode {
                try await f.manager.edit(.setLocation(home: home, location: Self.oslo), account: Fixture.guest)
            }
                == .insufficientPrivileges)
        try await f.manager.edit(.setLocation(home: home, location: Self.oslo), account: admin)
        #expect(try await f.home().location == Self.oslo)
    }

    @Test("schedule triggers are checked: a sun event needs the location, an impossible schedule is refused")
    func checks() async throws {
        let f = try await make()
        let sunset = TriggerSchedule.sun(.sunset, offset: -30, weekdays: Set(Weekday.allCases))
        func add(_ name: String, _ schedule: TriggerSchedule) async -> HomeError.Code? {
            await errorCode {
                try await f.manager.edit(
                    .addScheduleTrigger(home: home, name: name, schedule: schedule, actionSets: ["Night"]),
                    account: admin)
            }
        }
        #expect(await add("Dusk", sunset) == .locationRequired)
        let start = try LocalDateTime(year: 2026, month: 1, day: 1, hour: 7, minute: 0)
        #expect(await add("Often", .timer(start: start, recurrence: .everyMinutes(2))) == .invalidSchedule)
        #expect(await add("Never", .timeOfDay(start.time, weekdays: [])) == .invalidSchedule)
        #expect(await add("Far", .sun(.sunrise, offset: 721, weekdays: [.monday])) == .invalidSchedule)
        #expect(await add("Lamp", .timeOfDay(start.time, weekdays: [.monday])) == .objectWithSimilarNameExistsInHome)
        try await f.manager.edit(.setLocation(home: home, location: Self.oslo), account: admin)
        try await f.manager.edit(
            .addScheduleTrigger(home: home, name: "Dusk", schedule: sunset, actionSets: ["Night"]), account: admin)
        #expect(try await f.home().triggers.map(\.event) == [.schedule(sunset)])
    }

    @Test("schedule triggers, the location and a schedule's state are on disk after a restart")
    func persisted() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await make(database: HomeDatabase.open(atPath: path))
            let m = f.manager
            try await m.edit(.setLocation(home: home, location: Self.oslo), account: admin)
            let schedules: [TriggerSchedule] = [
                .timeOfDay(try TimeOfDay(hour: 22, minute: 30), weekdays: Weekday.workdays),
                .sun(.sunrise, offset: 15, weekdays: [.saturday, .sunday]),
                .timer(start: try LocalDateTime(year: 2026, month: 12, day: 1, hour: 7, minute: 30), recurrence: nil),
                .timer(
                    start: try LocalDateTime(year: 2026, month: 12, day: 1, hour: 7, minute: 30),
                    recurrence: .everyMinutes(15)),
                .timer(
                    start: try LocalDateTime(year: 2026, month: 12, day: 1, hour: 7, minute: 30),
                    recurrence: .onWeekdays([.monday, .friday])),
            ]
            for (index, schedule) in schedules.enumerated() {
                try await m.edit(
                    .addScheduleTrigger(
                        home: home, name: "Schedule \(index)", schedule: schedule, actionSets: ["Night"]),
                    account: admin)
            }
            let before = try await f.home().triggers
            let firing = Firing(
                instant: Date(timeIntervalSince1970: 1_800_000_000),
                slot: try LocalDateTime(year: 2027, month: 1, day: 15, hour: 8, minute: 0))
            let state = ScheduleState(since: Date(timeIntervalSince1970: 1_700_000_000), lastFiring: firing)
            try await m.recordScheduleStates([before[0].id: state])
            await m.shutdown()

            let reloaded = try HomeManager(database: HomeDatabase.open(atPath: path))
            let after = try await reloaded.home(home, account: admin)
            #expect(after.triggers == before)
            #expect(after.location == Self.oslo)
            #expect(try reloaded.scheduleStates() == [before[0].id: state])
        }
    }

    @Test("a database written before schedules (v5) migrates with its automations")
    func migratesVersion5() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            try HomeDatabase.create(atPath: path, migratedUpTo: "v5: automations")
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO home (id, name, position, isPrimary) VALUES ('h1', 'Home', 0, 1);
                        INSERT INTO room (id, homeID, name, isDefault, position) VALUES ('r1', 'h1', 'Default Room', 1, 0);
                        INSERT INTO user (id, homeID, account, name, role, position)
                            VALUES ('u1', 'h1', 'alice', 'Alice', 'administrator', 0);
                        INSERT INTO actionSet (id, homeID, name, position) VALUES ('s1', 'h1', 'Night', 0);
                        INSERT INTO automationTrigger
                            (id, homeID, name, position, isEnabled, accessoryID, serviceID, characteristicType, value)
                            VALUES ('t1', 'h1', 'Press', 0, 1, 'a1', 'sv1', 'ProgrammableSwitchEvent', '{"int":{"_0":0}}'),
                                   ('t2', 'h1', 'Any', 1, 0, 'a1', 'sv1', 'On', NULL);
                        INSERT INTO triggerActionSet (triggerID, position, actionSetID) VALUES ('t1', 0, 's1'), ('t2', 0, 's1');
                        """)
            }
            try queue.close()

            let manager = try HomeManager(database: HomeDatabase.open(atPath: path))
            let triggers = try await manager.home("Home", account: "alice").triggers
            #expect(triggers.map(\.name) == ["Press", "Any"])
            #expect(triggers.map(\.isEnabled) == [true, false])
            #expect(triggers.map(\.actionSets) == [[ActionSetID("s1")], [ActionSetID("s1")]])
            let key = ValueKey(
                accessory: AccessoryID("a1"), service: ServiceID("sv1"), characteristic: .programmableSwitchEvent)
            #expect(triggers.first?.event == .characteristic(key, value: .int(0)))
            #expect(triggers.last?.event.characteristic?.characteristic == .on)
            // Migrated on to the latest: the automations neither execute once nor turn back
            #expect(triggers.map(\.options) == [TriggerOptions(), TriggerOptions()])
            #expect(try HomeDatabase.appliedMigrations(atPath: path).last == HomeDatabase.latestMigration)
            await manager.shutdown()
        }
    }
}
