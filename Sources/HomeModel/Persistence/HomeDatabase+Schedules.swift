import Foundation
import GRDB
import Schedules

/// Where a schedule trigger stands between runs of the hub: since when it has been run, and its last
/// firing. What ``CatchUp`` needs at start, so that a restart repeats no firing and runs those that
/// came due while it was down (one stored before it ran and cut short by a crash is not run again).
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
                if let slot = record.lastSlot.flatMap(LocalDateTime.init), let instant = record.lastInstant {
                    state.lastFiring = Firing(instant: Date(timeIntervalSince1970: instant), slot: slot)
                }
                states[record.triggerID] = state
            }
            return states
        }
    }

    /// Writes `states` in one transaction (one sync for firings due together), each only while its
    /// trigger is on disk: a trigger removed meanwhile leaves no row behind.
    func saveScheduleStates(_ states: [TriggerID: ScheduleState]) async throws {
        guard !states.isEmpty else { return }
        try await writer.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO \(ScheduleStateRecord.databaseTableName)
                        (triggerID, since, lastSlot, lastInstant)
                    SELECT ?1, ?2, ?3, ?4
                    WHERE EXISTS (SELECT 1 FROM \(TriggerRecord.databaseTableName) WHERE id = ?1)
                    """)
            for (trigger, state) in states {
                try statement.execute(arguments: [
                    trigger.rawValue, state.since.timeIntervalSince1970,
                    state.lastFiring.map { "\($0.slot.date)T\($0.slot.time)" },
                    state.lastFiring?.instant.timeIntervalSince1970,
                ])
            }
        }
    }

    /// Drops the states of `triggers` (removed automations).
    func removeScheduleStates(_ triggers: [TriggerID]) async throws {
        guard !triggers.isEmpty else { return }
        try await writer.write { db in
            _ = try ScheduleStateRecord.deleteAll(db, keys: triggers.map(\.rawValue))
        }
    }
}

extension HomeManager {
    /// Every schedule trigger's stored state (``ScheduleState``), for the automation service's start.
    package nonisolated func scheduleStates() throws(HomeError) -> [TriggerID: ScheduleState] {
        do { return try database.scheduleStates() } catch { throw HomeDatabase.failure(error) }
    }

    /// Stores where each trigger's schedule stands in one transaction, awaited on the database's
    /// writer (not on the manager): firings due together are stored together, before any of them
    /// runs. A trigger no longer on disk gets no row.
    package nonisolated func recordScheduleStates(_ states: [TriggerID: ScheduleState]) async throws(HomeError) {
        do { try await database.saveScheduleStates(states) } catch { throw HomeDatabase.failure(error) }
    }

    /// Forgets the stored states of `triggers`, automations that were removed.
    package nonisolated func forgetScheduleStates(_ triggers: [TriggerID]) async throws(HomeError) {
        do { try await database.removeScheduleStates(triggers) } catch { throw HomeDatabase.failure(error) }
    }
}
