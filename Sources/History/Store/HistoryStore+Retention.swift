import Foundation
import GRDB
import Synchronization

extension HistoryStore {
    /// Ages the history as of the store's clock: see ``applyRetention(_:now:afterStep:)``.
    package func applyRetention() async throws {
        try await applyRetention(retention, now: clock.now)
    }

    /// The most free pages one step of a sweep gives back to the file system (40 MB of 4 KB pages).
    static let vacuumPagesPerStep = 10_240

    /// Ages the history as of `now`: raw points of hours wholly older than `retention.raw` become
    /// hourly aggregates (merged into an hour already summed up, when late points came), aggregates
    /// older than `retention.hourly` and events older than `retention.events` go, and then the oldest
    /// hour of everything goes until the pages fit in `retention.maximumBytes`. Freed pages go back to
    /// the file system afterwards, and the WAL is checkpointed into the file and truncated, so the
    /// file and its WAL together (``fileBytes()``) end within the bound: the WAL holds what was
    /// written since the last checkpoint, the sweep's deletions too, and SQLite's automatic
    /// checkpoints never shrink it.
    ///
    /// It runs on the store's thread in steps (``RetentionSweep/Step``), each its own transaction
    /// and at most a day of one characteristic's points, so the writes given meanwhile run between
    /// them. A cancelled task stops it after the step under way, with `CancellationError`: each
    /// step leaves the history whole (an hour's aggregate is written with the deletion of its
    /// points), and the next sweep does what is left. `afterStep` runs after each step, before
    /// cancellation is checked (tests hold a sweep there).
    package func applyRetention(
        _ retention: HistoryRetention, now: Date, afterStep: @Sendable () async -> Void = {}
    ) async throws {
        let sweep = RetentionSweep(retention: retention, now: now)
        // The waiting points first, so the sweep sees every point in `point`.
        try await thread.run { [self] in
            try writer.write { db in try Self.settle(db) }
            settling.withLock { $0 = Settling(since: clock.now) }
        }
        var step = RetentionSweep.Step.aging(fromSeries: .min)
        while true {
            let current = step
            let next = try await thread.run { [self] in
                seriesNumbers.withLock { $0 = [:] }
                return try writer.write { db in try sweep.run(current, db) }
            }
            guard let next else { break }
            step = next
            await afterStep()
            try Task.checkCancellation()
        }
        // Until none is free, or none was given back (a file made without incremental vacuum).
        var free = Int.max
        while free > 0 {
            let left = try await thread.run { [writer] in
                try writer.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA incremental_vacuum(\(Self.vacuumPagesPerStep))")
                    return try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                }
            }
            free = left < free ? left : 0
            await afterStep()
            try Task.checkCancellation()
        }
        try await thread.run { [writer] in
            // A reader still on an old snapshot keeps the WAL past the busy timeout: the next
            // sweep truncates it then, and the values are safe either way.
            writer.writeWithoutTransaction { db in _ = try? db.checkpoint(.truncate) }
        }
    }
}

/// One sweep of ``HistoryStore/applyRetention(_:now:afterStep:)``, a step at a time.
struct RetentionSweep: Sendable {
    let retention: HistoryRetention
    let now: Date

    /// What a sweep does next; each is one transaction.
    enum Step: Sendable, Hashable {
        /// Ages the first series whose id is at least this: its old aggregates go and at most a day
        /// of its points older than the raw retention become hours.
        case aging(fromSeries: Int64)
        /// Old events go and characteristics with nothing left are forgotten.
        case forgetting
        /// The oldest hour of everything goes, when the pages are over the bound.
        case bounding
    }

    private static let hour = Date.millisecondsPerHour
    /// The most of one series' points a step sums up: a day's.
    private static let chunk = 24 * hour

    private var nowMilliseconds: Int64 { now.historyMilliseconds }
    /// Only whole hours age out, so each aggregate sums up its hour's points at once.
    private var rawCutoff: Int64 { floorDiv(nowMilliseconds - retention.raw.milliseconds, Self.hour) * Self.hour }

    /// Runs `step` in `db`'s transaction; the step after it, nil when the sweep is done.
    func run(_ step: Step, _ db: Database) throws -> Step? {
        switch step {
        case .aging(let first):
            guard
                let series = try Int64.fetchOne(
                    db, sql: "SELECT MIN(id) FROM series WHERE id >= ?", arguments: [first])
            else { return .forgetting }
            return try age(series, db) ? .aging(fromSeries: series) : .aging(fromSeries: series + 1)
        case .forgetting:
            try db.execute(
                sql: "DELETE FROM event WHERE time < ?",
                arguments: [nowMilliseconds - retention.events.milliseconds])
            try dropSilentSeries(db)
            return .bounding
        case .bounding:
            return try dropOldestHour(db) ? .bounding : nil
        }
    }

    /// Drops `series`' aggregates older than the hourly retention and sums up the first day of its
    /// points older than the raw retention; true when older points are left for the next step.
    private func age(_ series: Int64, _ db: Database) throws -> Bool {
        let hourlyCutoff = floorDiv(nowMilliseconds - retention.hourly.milliseconds, Self.hour)
        try db.cachedStatement(sql: "DELETE FROM hourly WHERE series = ? AND hour < ?")
            .execute(arguments: [series, hourlyCutoff])
        guard
            let oldest = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT MIN(time) FROM point WHERE series = ?"), arguments: [series]),
            oldest < rawCutoff
        else { return false }
        let end = min(rawCutoff, floorDiv(oldest, Self.hour) * Self.hour + Self.chunk)
        try aggregate(series, before: end, db)
        return end < rawCutoff
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

    /// A characteristic with nothing left is forgotten: no point, no hour, and none waiting (a batch
    /// written between two steps may have brought its first).
    private func dropSilentSeries(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM series WHERE NOT EXISTS (SELECT 1 FROM point WHERE point.series = series.id)
                AND NOT EXISTS (SELECT 1 FROM hourly WHERE hourly.series = series.id)
                AND id NOT IN (SELECT series FROM incoming)
                """)
    }

    /// Drops the oldest hour of points, aggregates and events when the pages are over the bound;
    /// true when it did (the pages are measured again in the next step).
    private func dropOldestHour(_ db: Database) throws -> Bool {
        guard try HistoryStore.usedBytes(db) > retention.maximumBytes, let oldest = try oldestTime(db) else {
            return false
        }
        let cutoff = (floorDiv(oldest, Self.hour) + 1) * Self.hour
        for series in try Int64.fetchAll(db, sql: "SELECT id FROM series") {
            try db.cachedStatement(sql: "DELETE FROM point WHERE series = ? AND time < ?")
                .execute(arguments: [series, cutoff])
            try db.cachedStatement(sql: "DELETE FROM hourly WHERE series = ? AND hour < ?")
                .execute(arguments: [series, cutoff / Self.hour])
        }
        try db.execute(sql: "DELETE FROM event WHERE time < ?", arguments: [cutoff])
        try dropSilentSeries(db)
        return true
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
