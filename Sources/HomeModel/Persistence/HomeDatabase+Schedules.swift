import Foundation
import GRDB
import Schedules

/// Where a schedule trigger stands between runs of the hub: since when it has been run, and its last
/// firing. What ``CatchUp`` needs at start, so that a restart neither repeats a firing nor loses one.
package struct ScheduleState: Sendable, Hashable {
    /// When the hub first ran the trigger's schedule: nothing before it came due.
    package var since: Date
    /// The last firing, run or missed; nil before the first.
    package var lastFiring: Firing?

    package init(since: Date, lastFiring: Firing? = nil) {
        self.since = since
        self.lastFiring = lastFiring
    }
}

extension HomeDatabase {
    /// Every schedule trigger's state, by trigger; a row that cannot be read is left out (the trigger
    /// starts afresh).
    func scheduleStates() throws -> [TriggerID: ScheduleState] {
        try writer.read { db in
            var states: [TriggerID: ScheduleState] = [:]
            for record in try ScheduleStateRecord.fetchAll(db) {
                var state = ScheduleState(since: Date(timeIntervalSince1970: record.since))
                if let slot = record.lastSlot.flatMap(ScheduleJSON.slot), let instant = record.lastInstant {
                    state.lastFiring = Firing(instant: Date(timeIntervalSince1970: instant), slot: slot)
                }
                states[TriggerID(record.triggerID)] = state
            }
            return states
        }
    }

    /// Writes `state` for `trigger`, and drops the states of triggers no longer on disk.
    func saveScheduleState(_ state: ScheduleState, for trigger: TriggerID) async throws {
        let record = ScheduleStateRecord(
            triggerID: trigger.rawValue, since: state.since.timeIntervalSince1970,
            lastSlot: state.lastFiring.map { "\($0.slot.date)T\($0.slot.time)" },
            lastInstant: state.lastFiring?.instant.timeIntervalSince1970)
        try await writer.write { db in
            try record.save(db)
            try db.execute(
                sql: """
                    DELETE FROM \(ScheduleStateRecord.databaseTableName)
                    WHERE triggerID != ? AND triggerID NOT IN (SELECT id FROM \(TriggerRecord.databaseTableName))
                    """, arguments: [trigger.rawValue])
        }
    }
}

extension HomeManager {
    /// Every schedule trigger's stored state (``ScheduleState``), for the automation service's start.
    package nonisolated func scheduleStates() throws(HomeError) -> [TriggerID: ScheduleState] {
        do { return try database.scheduleStates() } catch { throw HomeDatabase.failure(error) }
    }

    /// Stores where `trigger`'s schedule stands, awaited on the database's writer (not on the
    /// manager), before the firing it records runs.
    package nonisolated func recordScheduleState(_ state: ScheduleState, for trigger: TriggerID) async throws(HomeError)
    {
        do { try await database.saveScheduleState(state, for: trigger) } catch { throw HomeDatabase.failure(error) }
    }
}
