import Foundation
import GRDB

extension HistoryStore {
    /// Ages the history as of the store's clock: see ``applyRetention(_:now:)``.
    package func applyRetention() async throws {
        try await applyRetention(retention, now: clock.now)
    }

    /// Ages the history as of `now`, in one transaction: raw points of hours wholly older than
    /// `retention.raw` become hourly aggregates (merged into an hour already summed up, when late
    /// points came), aggregates older than `retention.hourly` and events older than
    /// `retention.events` go, and then the oldest hour of everything goes until the pages fit in
    /// `retention.maximumBytes`. Freed pages go back to the file system afterwards, and the WAL is
    /// checkpointed into the file and truncated, so the file and its WAL together (``fileBytes()``)
    /// end within the bound: the WAL holds what was written since the last checkpoint, the
    /// sweep's deletions too, and SQLite's automatic checkpoints never shrink it. It runs on the store's
    /// thread, after the writes given before.
    package func applyRetention(_ retention: HistoryRetention, now: Date) async throws {
        try await thread.run { [writer] in
            try writer.write { db in try RetentionSweep(retention: retention, now: now).run(db) }
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA incremental_vacuum")
                // A reader still on an old snapshot keeps the WAL past the busy timeout: the next
                // sweep truncates it then, and the values are safe either way.
                _ = try? db.checkpoint(.truncate)
            }
        }
    }
}

/// One pass of ``HistoryStore/applyRetention(_:now:)`` inside its transaction.
struct RetentionSweep {
    let retention: HistoryRetention
    let now: Date

    private static let hour = Date.millisecondsPerHour

    func run(_ db: Database) throws {
        let now = self.now.historyMilliseconds
        // Only whole hours age out, so each aggregate sums up its hour's points at once.
        let rawCutoff = floorDiv(now - retention.raw.milliseconds, Self.hour) * Self.hour
        let hourlyCutoff = floorDiv(now - retention.hourly.milliseconds, Self.hour)
        for series in try Int64.fetchAll(db, sql: "SELECT id FROM series") {
            try aggregate(series, before: rawCutoff, db)
            try db.cachedStatement(sql: "DELETE FROM hourly WHERE series = ? AND hour < ?")
                .execute(arguments: [series, hourlyCutoff])
        }
        try db.execute(
            sql: "DELETE FROM event WHERE time < ?", arguments: [now - retention.events.milliseconds])
        try dropSilentSeries(db)
        try bound(db)
    }

    /// Sums up `series`' points older than `cutoff` per hour into `hourly`, then deletes them.
    private func aggregate(_ series: Int64, before cutoff: Int64, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO hourly(series, hour, minimum, mean, maximum, samples)
                SELECT series, time / \(Self.hour), MIN(value), AVG(value), MAX(value), COUNT(*)
                FROM point WHERE series = ? AND time < ? GROUP BY time / \(Self.hour)
                ON CONFLICT(series, hour) DO UPDATE SET
                    minimum = MIN(minimum, excluded.minimum),
                    maximum = MAX(maximum, excluded.maximum),
                    mean = (mean * samples + excluded.mean * excluded.samples) / (samples + excluded.samples),
                    samples = samples + excluded.samples
                """
        ).execute(arguments: [series, cutoff])
        try db.cachedStatement(sql: "DELETE FROM point WHERE series = ? AND time < ?")
            .execute(arguments: [series, cutoff])
    }

    /// A characteristic with nothing left is forgotten.
    private func dropSilentSeries(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM series WHERE NOT EXISTS (SELECT 1 FROM point WHERE point.series = series.id)
                AND NOT EXISTS (SELECT 1 FROM hourly WHERE hourly.series = series.id)
                """)
    }

    /// Drops the oldest hour of points, aggregates and events, again, until the pages fit.
    private func bound(_ db: Database) throws {
        while try HistoryStore.usedBytes(db) > retention.maximumBytes, let oldest = try oldestTime(db) {
            let cutoff = (floorDiv(oldest, Self.hour) + 1) * Self.hour
            for series in try Int64.fetchAll(db, sql: "SELECT id FROM series") {
                try db.cachedStatement(sql: "DELETE FROM point WHERE series = ? AND time < ?")
                    .execute(arguments: [series, cutoff])
                try db.cachedStatement(sql: "DELETE FROM hourly WHERE series = ? AND hour < ?")
                    .execute(arguments: [series, cutoff / Self.hour])
            }
            try db.execute(sql: "DELETE FROM event WHERE time < ?", arguments: [cutoff])
            try dropSilentSeries(db)
        }
    }

    /// The time of the oldest row of any table, in milliseconds; `nil` when all are empty. Per
    /// series through the primary keys, so no table is scanned.
    private func oldestTime(_ db: Database) throws -> Int64? {
        let point = try Int64.fetchOne(
            db,
            sql: "SELECT MIN((SELECT MIN(time) FROM point WHERE point.series = series.id)) FROM series")
        let hourly = try Int64.fetchOne(
            db,
            sql: "SELECT MIN((SELECT MIN(hour) FROM hourly WHERE hourly.series = series.id)) FROM series")
        let event = try Int64.fetchOne(db, sql: "SELECT MIN(time) FROM event")
        return [point, hourly.map { $0 * Self.hour }, event].compactMap { $0 }.min()
    }
}

/// Division rounding towards minus infinity, so an hour before 1970 is still the hour it is in.
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
}
