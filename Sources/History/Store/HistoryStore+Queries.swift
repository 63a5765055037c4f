import Foundation
import GRDB
import HomeModel

extension HistoryStore {
    /// The most timeline events one query answers with (the newest of the span).
    static let maximumEvents = 10_000

    /// The values of one characteristic from `from` to `to` (both included).
    ///
    /// Left to the store (`resolution` nil), its raw points when the whole span is within the raw
    /// retention and holds at most ``maximumPoints``, else one aggregate per hour (raw points of
    /// recent hours summed up on the way). Asked for `.hour`, the aggregates whatever the span;
    /// asked for `.raw`, the points, refused (`spanBeyondRetention`, `tooManyPoints`) when the
    /// store would have answered by the hour. Never more than a year of hours, so no answer is
    /// large.
    package func points(
        accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType, from: Date, to: Date,
        resolution: HistoryResolution? = nil
    ) async throws(HistoryError) -> HistoryAnswer {
        let now = clock.now
        try checkSpan(from: from, to: to, keptFor: retention.hourly, now: now)
        let key = ValueKey(accessory: accessory, service: service, characteristic: characteristic)
        let rawFrom = now.addingTimeInterval(-retention.raw.timeInterval)
        let recentEnough = from >= rawFrom
        if resolution == .raw, !recentEnough {
            throw HistoryError(
                .spanBeyondRetention,
                "The span starts at \(from); raw points are kept from \(rawFrom) only. Ask by the hour for older ones.")
        }
        let maximumPoints = maximumPoints
        let answer = try await reading { db -> Result<HistoryAnswer, HistoryError>? in
            guard let series = try Self.existingSeriesID(key, db) else { return nil }
            let query = SpanQuery(series: series, from: from.historyMilliseconds, to: to.historyMilliseconds)
            if resolution == .hour { return .success(.hourly(try query.hourly(db))) }
            let count = recentEnough ? try query.pointCount(db) : .max
            if count <= maximumPoints { return .success(.points(try query.points(db))) }
            guard resolution == nil else {
                return .failure(
                    HistoryError(
                        .tooManyPoints,
                        "The span holds \(count) points, more than the \(maximumPoints) one answer carries; ask for a shorter span, or by the hour."
                    ))
            }
            return .success(.hourly(try query.hourly(db)))
        }
        guard let answer else {
            throw HistoryError(
                .unknownCharacteristic,
                "Nothing is recorded for \(characteristic) of service \(service) of accessory \(accessory).")
        }
        return try answer.get()
    }

    /// The home's timeline from `from` to `to` (both included), oldest first; at most
    /// ``maximumEvents``, the newest of the span.
    package func timeline(home: HomeID, from: Date, to: Date) async throws(HistoryError) -> [TimelineEvent] {
        try checkSpan(from: from, to: to, keptFor: retention.events, now: clock.now)
        let records = try await reading { db in
            try TimelineRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM (
                        SELECT home, time, kind, accessory, subject, detail, automation FROM event
                        WHERE home = ? AND time BETWEEN ? AND ? ORDER BY time DESC, id DESC LIMIT ?
                    ) ORDER BY time
                    """,
                arguments: [home.rawValue, from.historyMilliseconds, to.historyMilliseconds, Self.maximumEvents])
        }
        return records.map(\.event)
    }

    /// When each automation of `home` last fired, among the timeline's entries still kept: by its
    /// identifier, and, for entries written before those were kept, by its name when it fired. One
    /// pass over the home's automation firings each (partial indexes hold only those), whatever else
    /// the timeline holds.
    package func lastFirings(home: HomeID) async throws(HistoryError) -> AutomationFirings {
        try await reading { db in
            var firings = AutomationFirings()
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT automation, MAX(time) FROM event
                    WHERE kind = 'automation' AND home = ? AND automation IS NOT NULL GROUP BY automation
                    """, arguments: [home.rawValue])
            while let row = try rows.next() { firings.byID[TriggerID(row[0])] = Date(historyMilliseconds: row[1]) }
            let older = try Row.fetchCursor(
                db,
                sql: """
                    SELECT subject, MAX(time) FROM event
                    WHERE kind = 'automation' AND home = ? AND automation IS NULL GROUP BY subject
                    """, arguments: [home.rawValue])
            while let row = try older.next() { firings.byName[row[0]] = Date(historyMilliseconds: row[1]) }
            return firings
        }
    }

    /// Every characteristic of `home` recorded from `from` to `to`, each as the mean of its points
    /// in each of `slices` equal slices of the span that hold any, placed at the slice's middle.
    /// One query for the whole home, so a page with a small line on every card reads the history
    /// once; each slice is one range of the point table's key (no sort of the span's points), so
    /// the cost is the characteristics times the slices plus a pass over the span's points, and a
    /// pass over the points still waiting (a minute or so) with a count of the settled points in
    /// each slice they fall in. Only raw points are read: the span is meant to be within the raw
    /// retention (the last day).
    package func recentLines(home: HomeID, from: Date, to: Date, slices: Int = 48) async throws(HistoryError)
        -> [ValueKey: [HistoryPoint]]
    {
        try checkSpan(from: from, to: to, keptFor: retention.raw, now: clock.now)
        let (start, end, slices) = (from.historyMilliseconds, to.historyMilliseconds, Int64(max(slices, 1)))
        // Rounded up, so the last slice ends at `to` or after it.
        let width = max((end - start + slices) / slices, 1)
        return try await reading { db in
            // The mean of each slice's settled points, by series and slice; NULL where it has none.
            var keys: [Int64: ValueKey] = [:]
            var means: [Int64: [Int64: Double]] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    WITH RECURSIVE slice(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM slice WHERE k + 1 < ?1)
                    SELECT series.id, series.accessory, series.service, series.characteristic, slice.k,
                        (SELECT AVG(value) FROM point WHERE point.series = series.id
                            AND point.time >= ?2 + slice.k * ?3 AND point.time < ?2 + (slice.k + 1) * ?3
                            AND point.time <= ?4) AS value
                    FROM series, slice WHERE series.home = ?5
                    """, arguments: [slices, start, width, end, home.rawValue])
            while let row = try rows.next() {
                let id: Int64 = row[0]
                if keys[id] == nil {
                    keys[id] = ValueKey(
                        accessory: AccessoryID(row[1] as String), service: ServiceID(row[2] as String),
                        characteristic: CharacteristicType(rawValue: row[3]))
                }
                if let value = row[5] as Double? { means[id, default: [:]][row[4]] = value }
            }
            // The points still waiting (the last minute or so) join their slices' means, weighed
            // against the settled points there.
            let waiting = try Row.fetchCursor(
                db,
                sql: """
                    SELECT incoming.series, (incoming.time - ?1) / ?2 AS k, SUM(incoming.value), COUNT(*)
                    FROM incoming JOIN series ON series.id = incoming.series
                    WHERE series.home = ?3 AND incoming.time BETWEEN ?1 AND ?4 GROUP BY incoming.series, k
                    """, arguments: [start, width, home.rawValue, end])
            while let row = try waiting.next() {
                let (id, k, sum, count): (Int64, Int64, Double, Int) = (row[0], row[1], row[2], row[3])
                let settledMean = means[id]?[k]
                let settled =
                    settledMean == nil
                    ? 0
                    : try Int.fetchOne(
                        db, sql: "SELECT COUNT(*) FROM point WHERE series = ? AND time >= ? AND time < ? AND time <= ?",
                        arguments: [id, start + k * width, start + (k + 1) * width, end]) ?? 0
                means[id, default: [:]][k] = ((settledMean ?? 0) * Double(settled) + sum) / Double(settled + count)
            }
            var lines: [ValueKey: [HistoryPoint]] = [:]
            for (id, sliceMeans) in means {
                guard let key = keys[id] else { continue }
                lines[key] = sliceMeans.sorted { $0.key < $1.key }.map { k, mean in
                    HistoryPoint(time: Date(historyMilliseconds: min(start + k * width + width / 2, end)), value: mean)
                }
            }
            return lines
        }
    }

    private func checkSpan(from: Date, to: Date, keptFor kept: Duration, now: Date) throws(HistoryError) {
        guard from <= to else {
            throw HistoryError(.reversedSpan, "The span ends (\(to)) before it starts (\(from)).")
        }
        let oldest = now.addingTimeInterval(-kept.timeInterval)
        guard from >= oldest else {
            throw HistoryError(
                .spanBeyondRetention, "The span starts at \(from); history is kept from \(oldest) only.")
        }
    }

    private func reading<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(HistoryError)
        -> T
    {
        do {
            return try await writer.read(body)
        } catch {
            throw HistoryError(.unavailable, "The history could not be read: \(error)")
        }
    }
}

/// One series' rows within a span, in milliseconds.
private struct SpanQuery {
    let series: Int64
    let from: Int64
    let to: Int64

    private static let hour = Date.millisecondsPerHour

    /// The span's points, settled and waiting (`incoming`, scanned: it holds a minute or so).
    private var spanPoints: String {
        """
        SELECT time, value, 0 AS waiting, 0 AS arrival FROM point WHERE series = ?1 AND time BETWEEN ?2 AND ?3
        UNION ALL
        SELECT time, value, 1, rowid FROM incoming WHERE series = ?1 AND time BETWEEN ?2 AND ?3
        """
    }

    func pointCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(spanPoints))", arguments: [series, from, to]) ?? 0
    }

    /// In time order; of points of one millisecond, the one that came last (as settling keeps it).
    func points(_ db: Database) throws -> [HistoryPoint] {
        var points: [HistoryPoint] = []
        let rows = try Row.fetchCursor(
            db, sql: "\(spanPoints) ORDER BY time, waiting, arrival", arguments: [series, from, to])
        while let row = try rows.next() {
            let point = HistoryPoint(time: Date(historyMilliseconds: row["time"]), value: row["value"])
            if points.last?.time == point.time { points.removeLast() }
            points.append(point)
        }
        return points
    }

    /// The stored aggregates of the hours the span touches, with the raw points still kept for
    /// those hours summed up the same way; an hour in both (late points) is merged.
    func hourly(_ db: Database) throws -> [HourlyAggregate] {
        let (firstHour, lastHour) = (floorDiv(from, Self.hour), floorDiv(to, Self.hour))
        var hours: [Int64: HourlyAggregate] = [:]
        let stored = try Row.fetchAll(
            db,
            sql: """
                SELECT hour, minimum, mean, maximum, samples FROM hourly
                WHERE series = ? AND hour BETWEEN ? AND ?
                """, arguments: [series, firstHour, lastHour])
        let recent = try Row.fetchAll(
            db,
            sql: """
                SELECT time / \(Self.hour) AS hour, MIN(value) AS minimum, AVG(value) AS mean,
                    MAX(value) AS maximum, COUNT(*) AS samples
                FROM (\(spanPoints)) GROUP BY time / \(Self.hour)
                """, arguments: [series, firstHour * Self.hour, (lastHour + 1) * Self.hour - 1])
        for row in stored + recent {
            let hour: Int64 = row["hour"]
            let aggregate = HourlyAggregate(
                hour: Date(historyMilliseconds: hour * Self.hour), minimum: row["minimum"], mean: row["mean"],
                maximum: row["maximum"], count: row["samples"])
            hours[hour] = hours[hour].map { $0.merged(with: aggregate) } ?? aggregate
        }
        return hours.keys.sorted().map { hours[$0]! }
    }
}

extension HourlyAggregate {
    /// The aggregate of both hours' points together.
    func merged(with other: HourlyAggregate) -> HourlyAggregate {
        let count = self.count + other.count
        return HourlyAggregate(
            hour: hour, minimum: Swift.min(minimum, other.minimum),
            mean: (mean * Double(self.count) + other.mean * Double(other.count)) / Double(count),
            maximum: Swift.max(maximum, other.maximum), count: count)
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
