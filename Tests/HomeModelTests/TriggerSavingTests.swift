import Foundation
import GRDB
import HomeModel
import Schedules
import TestSupport
import Testing

/// An automation's edit writes that automation's rows, not the home's: what stays on disk is the
/// model, and the rows of the automations it did not touch are left as they were.
@Suite("Saving automations row by row")
struct TriggerSavingTests {
    let home = Fixture.home
    let admin = Fixture.admin

    /// Each automation row's SQLite rowid, by id: a row written again gets a new one.
    func rowids(_ database: HomeDatabase) throws -> [String: Int64] {
        try database.writer.read { db in
            var rows: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, rowid FROM automationTrigger") { rows[row[0]] = row[1] }
            return rows
        }
    }

    @Test(
        "adding, changing, turning off and removing one automation leave the others' rows alone; a restart reads them back"
    )
    func rowByRow() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let database = try HomeDatabase.open(atPath: path)
            let f = try await Fixture.withNight(database: database)
            let m = f.manager
            let start = try LocalDateTime(year: 2027, month: 1, day: 1, hour: 7, minute: 0)
            func add(_ name: String) async throws {
                try await m.edit(
                    .addScheduleTrigger(
                        home: home, name: name, schedule: .timer(start: start, recurrence: nil), actionSets: ["Night"]),
                    account: admin)
            }
            for index in 1...5 { try await add("Timer \(index)") }
            let ids = try await f.home().triggers.map(\.id.rawValue)
            let first = try rowids(database)

            try await add("Timer 6")
            try await m.edit(
                .updateTrigger(
                    home: home, trigger: "Timer 2",
                    definition: .addScheduleTrigger(
                        home: home, name: "", schedule: .timeOfDay(start.time, weekdays: [.monday]),
                        actionSets: ["Night"])),
                account: admin)
            try await m.edit(.enableTrigger(home: home, trigger: "Timer 3", enabled: false), account: admin)
            try await m.edit(.removeTrigger(home: home, trigger: "Timer 1"), account: admin)

            let after = try rowids(database)
            // Timer 4 and 5 only moved up one place: the same rows.
            #expect(after[ids[3]] == first[ids[3]] && after[ids[4]] == first[ids[4]])
            #expect(after[ids[0]] == nil && after[ids[1]] != first[ids[1]] && after[ids[2]] != first[ids[2]])
            #expect(after.count == 5)

            let expected = try await f.home().triggers
            await m.shutdown()
            let reloaded = try HomeManager(database: HomeDatabase.open(atPath: path))
            #expect(try await reloaded.home(home, account: admin).triggers == expected)
            #expect(expected.map(\.name) == ["Timer 2", "Timer 3", "Timer 4", "Timer 5", "Timer 6"])
        }
    }
}
