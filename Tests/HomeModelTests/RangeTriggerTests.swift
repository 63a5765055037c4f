import Foundation
import GRDB
import HomeModel
import Schedules
import TestSupport
import Testing

/// Threshold-range automations in the model: their checks, the file, and a database a v7 gateway
/// wrote.
@Suite("Range triggers in the model")
struct RangeTriggerTests {
    let home = Fixture.home
    let admin = Fixture.admin

    func make(database: HomeDatabase? = nil) async throws -> Fixture {
        try await Fixture.withNight(database: database)
    }

    func range(_ minimum: Double?, _ maximum: Double?) throws -> ThresholdRange {
        try ThresholdRange(minimum: minimum, maximum: maximum)
    }

    @Test("a range is inclusive, open where a bound is left out, and refuses no bound or min above max")
    func rangeRules() throws {
        let both = try range(20, 30)
        #expect(both.contains(.float(20)) && both.contains(.int(30)) && both.contains(.float(25.5)))
        #expect(!both.contains(.float(19.99)) && !both.contains(.int(31)))
        #expect(!both.contains(.string("25")) && !both.contains(.bool(true)))
        #expect(try range(70, nil).contains(.int(1_000)))
        #expect(try range(nil, 5).contains(.float(-40)))
        #expect(try range(5, 5).contains(.int(5)))
        for (minimum, maximum) in [(nil, nil), (30.0, 20.0), (Double.nan, nil), (nil, Double.infinity)] {
            #expect(throws: HomeError.self) { try ThresholdRange(minimum: minimum, maximum: maximum) }
            do {
                _ = try ThresholdRange(minimum: minimum, maximum: maximum)
            } catch {
                #expect(error.code == .invalidRange)
            }
        }
    }

    @Test("a range trigger needs a numeric characteristic that reports; it is stored and redefined")
    func checksAndStorage() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await make(database: HomeDatabase.open(atPath: path))
            // A bool has no range to enter
            #expect(
                await errorCode {
                    try await f.manager.edit(
                        .addRangeTrigger(
                            home: home, name: "Bad", characteristic: Fixture.lampOn, range: try range(1, nil),
                            actionSets: ["Night"]), account: admin)
                } == .invalidRange)
            // A guest may not add one
            #expect(
                await errorCode {
                    try await f.manager.edit(
                        .addRangeTrigger(
                            home: home, name: "Bright", characteristic: Fixture.lampBrightness,
                            range: try range(80, nil), actionSets: ["Night"]), account: Fixture.guest)
                } == .insufficientPrivileges)
            try await f.manager.edit(
                .addRangeTrigger(
                    home: home, name: "Bright", characteristic: Fixture.lampBrightness, range: try range(80, nil),
                    actionSets: ["Night"]), account: admin)
            let lamp = try await f.home().accessory(named: "Lamp")
            let key = ValueKey(
                accessory: lamp.id, service: try lamp.service(named: "Lightbulb").id, characteristic: .brightness)
            #expect(try await f.home().triggers.first?.event == .threshold(key, try range(80, nil)))

            // Redefined with both bounds; a range on a bool is refused and leaves it as it was
            try await f.manager.edit(
                .updateTrigger(
                    home: home, trigger: "Bright",
                    definition: .addRangeTrigger(
                        home: home, name: "", characteristic: Fixture.lampBrightness, range: try range(10, 20),
                        actionSets: ["Night"])), account: admin)
            #expect(
                await errorCode {
                    try await f.manager.edit(
                        .updateTrigger(
                            home: home, trigger: "Bright",
                            definition: .addRangeTrigger(
                                home: home, name: "", characteristic: Fixture.lampOn, range: try range(1, 1),
                                actionSets: ["Night"])), account: admin)
                } == .invalidRange)
            let before = try await f.home().triggers
            #expect(before.first?.event == .threshold(key, try range(10, 20)))
            await f.manager.shutdown()

            let reloaded = try HomeManager(database: HomeDatabase.open(atPath: path))
            #expect(try await reloaded.home(home, account: admin).triggers == before)
            await reloaded.shutdown()
        }
    }

    @Test("a database a v7 gateway wrote migrates with its automations intact")
    func migratesVersion7() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            try HomeDatabase.create(atPath: path, migratedUpTo: "v7: execute once, turn back after")
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO home (id, name, position, isPrimary, latitude, longitude, timeZone)
                            VALUES ('h1', 'Home', 0, 1, 59.91, 10.75, 'Europe/Oslo');
                        INSERT INTO room (id, homeID, name, isDefault, position) VALUES ('r1', 'h1', 'Default Room', 1, 0);
                        INSERT INTO user (id, homeID, account, name, role, position)
                            VALUES ('u1', 'h1', 'alice', 'Alice', 'administrator', 0);
                        INSERT INTO actionSet (id, homeID, name, position) VALUES ('s1', 'h1', 'Night', 0);
                        INSERT INTO automationTrigger
                            (id, homeID, name, position, isEnabled, accessoryID, serviceID, characteristicType, value,
                             schedule, executeOnce, turnBackAfter)
                            VALUES ('t1', 'h1', 'Press', 0, 1, 'a1', 'sv1', 'ProgrammableSwitchEvent', '{"int":{"_0":0}}',
                                    NULL, 0, 300),
                                   ('t2', 'h1', 'Dusk', 1, 0, NULL, NULL, NULL, NULL,
                                    '{"kind":"sun","sun":"sunset","offset":-30,"weekdays":[1,2,3,4,5,6,7]}', 1, NULL);
                        INSERT INTO triggerActionSet (triggerID, position, actionSetID) VALUES ('t1', 0, 's1'), ('t2', 0, 's1');
                        INSERT INTO pendingTurnBack (triggerID, homeID, due, actions) VALUES ('t1', 'h1', 1000, '[]');
                        """)
            }
            try queue.close()

            let manager = try HomeManager(database: HomeDatabase.open(atPath: path))
            let triggers = try await manager.home("Home", account: "alice").triggers
            #expect(triggers.map(\.name) == ["Press", "Dusk"])
            #expect(triggers.map(\.isEnabled) == [true, false])
            #expect(triggers.map(\.actionSets) == [[ActionSetID("s1")], [ActionSetID("s1")]])
            let key = ValueKey(
                accessory: AccessoryID("a1"), service: ServiceID("sv1"), characteristic: .programmableSwitchEvent)
            #expect(triggers.first?.event == .characteristic(key, value: .int(0)))
            #expect(triggers.last?.event == .schedule(.sun(.sunset, offset: -30, weekdays: Set(Weekday.allCases))))
            #expect(
                triggers.map(\.options)
                    == [TriggerOptions(turnBackAfter: .seconds(300)), TriggerOptions(executeOnce: true)])
            #expect(try manager.pendingTurnBacks().map(\.trigger) == [TriggerID("t1")])
            #expect(try HomeDatabase.appliedMigrations(atPath: path).last == HomeDatabase.latestMigration)
            await manager.shutdown()
        }
    }
}
