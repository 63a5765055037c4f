import Foundation
import GRDB

extension HomeDatabase {
    /// Every pending turn-back, earliest first.
    func pendingTurnBacks() throws -> [PendingTurnBack] {
        try writer.read { db in
            try PendingTurnBackRecord.order(Column("due")).fetchAll(db).map {
                PendingTurnBack(
                    trigger: $0.triggerID, home: $0.homeID, due: Date(timeIntervalSince1970: $0.due), values: $0.actions
                )
            }
        }
    }

    /// The pending turn-back of `trigger`, if any.
    func pendingTurnBack(_ trigger: TriggerID) throws -> PendingTurnBack? {
        try pendingTurnBacks().first { $0.trigger == trigger }
    }

    /// The triggers that keep a pending turn-back (``PendingTurnBack/isKept(by:)``), as SQL.
    static let keepingTriggers = "SELECT id FROM \(TriggerRecord.databaseTableName) WHERE isEnabled OR executeOnce"

    /// Stores `pending`, replacing the trigger's earlier one, unless the trigger no longer keeps one
    /// (removed or turned off meanwhile: checked in the same transaction, so that such a change saved
    /// first is not undone); returns whether it was stored.
    func savePendingTurnBack(_ pending: PendingTurnBack) async throws -> Bool {
        let record = PendingTurnBackRecord(
            triggerID: pending.trigger, homeID: pending.home,
            due: pending.due.timeIntervalSince1970, actions: pending.values)
        return try await writer.write { db in
            let kept = try Bool.fetchOne(
                db, sql: "SELECT ? IN (\(Self.keepingTriggers))", arguments: [pending.trigger.rawValue])
            guard kept == true else { return false }
            try record.save(db)
            return true
        }
    }

    /// Drops the pending turn-backs of triggers removed or turned off, in a layout change's transaction.
    static func dropCancelledTurnBacks(_ db: Database) throws {
        try db.execute(
            sql: "DELETE FROM \(PendingTurnBackRecord.databaseTableName) WHERE triggerID NOT IN (\(keepingTriggers))")
    }

    /// Drops the trigger's pending turn-back if it is still the one due at `due` (a firing since
    /// moved it, and it waits on).
    func removePendingTurnBack(_ trigger: TriggerID, due: Date) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "DELETE FROM \(PendingTurnBackRecord.databaseTableName) WHERE triggerID = ? AND due = ?",
                arguments: [trigger.rawValue, due.timeIntervalSince1970])
        }
    }
}

extension HomeManager {
    /// The stored pending turn-backs, earliest first, for the turn-back service.
    package nonisolated func pendingTurnBacks() throws(HomeError) -> [PendingTurnBack] {
        do { return try database.pendingTurnBacks() } catch { throw HomeDatabase.failure(error) }
    }
}
