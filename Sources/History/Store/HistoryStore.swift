import Foundation
import GRDB
import HomeModel
import Synchronization

/// The history database: a second SQLite file beside the home database (``fileName`` in the data
/// directory), so recording never grows or locks the file the model commits to. It owns its
/// writer; writes and retention run on a thread of their own (``WriterThread``, at the lowest
/// priority unless asked otherwise) and are awaited, so no caller's thread waits for the disk and
/// no write takes a core from the gateway's command path.
///
/// Values are kept by series (one row per characteristic in `series`) and time in milliseconds,
/// in tables without row ids: a point costs about 20 bytes on disk. A batch's points are appended to
/// `incoming` (in the order they came, by row id) and settle into `point` about once a minute
/// (``settle(_:)``); queries read both. Of two points of one series and millisecond (possible only
/// when the system clock went back by more than a second) the raw points answer the later, while
/// hours and lines count both until they settle.
package final class HistoryStore: Sendable {
    /// The file's name in the data directory.
    package static let fileName = "history.sqlite"

    /// The connection (a pool for a file); tests look at the tables through it.
    package let writer: any DatabaseWriter
    package let retention: HistoryRetention
    /// The time queries and retention measure from.
    package let clock: HistoryClock
    /// The most raw points a query answers with; a span holding more is answered hour by hour.
    package let maximumPoints: Int
    /// Where the writes and the retention sweeps run.
    let thread: WriterThread
    /// The series' numbers by characteristic, kept from one batch to the next: a batch of a thousand
    /// characteristics' points looked each series up again (a query per point, on the writer). Used
    /// on the writer only; forgotten when series may go (a sweep's step, a forgotten accessory or
    /// home) and when a batch fails, since what it made was rolled back.
    let seriesNumbers = Mutex<[ValueKey: Int64]>([:])
    /// When points last settled into `point`, and how many were written to `incoming` since.
    let settling: Mutex<Settling>

    /// How long points wait in `incoming` at most (by the store's clock) before they settle.
    static let settleInterval: TimeInterval = 60
    /// The most points that wait in `incoming`: queries scan it.
    static let settleRows = 50_000

    private init(
        writer: any DatabaseWriter, retention: HistoryRetention, clock: HistoryClock, maximumPoints: Int,
        lowPriority: Bool
    ) throws {
        self.writer = writer
        self.retention = retention
        self.clock = clock
        self.maximumPoints = maximumPoints
        settling = Mutex(Settling(since: clock.now))
        thread = WriterThread(name: "homegate-history", lowPriority: lowPriority)
        try Self.migrator.migrate(writer)
        // What an earlier run left waiting.
        try writer.write { db in try Self.settle(db) }
    }

    private static var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Before the file's first page is written (GRDB's WAL set-up comes after): freed pages
            // can then be given back to the file system after a sweep (`PRAGMA incremental_vacuum`).
            // A no-op on a file that exists.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL") }
        }
        return configuration
    }

    /// Opens (creating if needed) the history file at `path` and migrates it. Its writes run at the
    /// lowest priority unless `lowPriority` is false (`homegate bench-history`, which measures the
    /// writes' own speed on a machine that may be busy).
    package static func open(
        atPath path: String, retention: HistoryRetention = .standard, clock: HistoryClock = .system,
        maximumPoints: Int = 10_000, lowPriority: Bool = true
    ) throws -> HistoryStore {
        // History may lose its last seconds to a power cut; the home database may not. NORMAL in
        // WAL mode syncs at checkpoints only, so recording adds no fsync to the SD card per batch.
        let pool = try DatabasePool(path: path, configuration: Self.configuration)
        return try HistoryStore(
            writer: pool, retention: retention, clock: clock, maximumPoints: maximumPoints, lowPriority: lowPriority)
    }

    /// A private in-memory history: for tests and for `data.inMemory`. Its writes run at normal
    /// priority unless `lowPriority` is true: its reads share one queue with the writes (GRDB's
    /// `DatabaseQueue`), so a `history` request would wait behind a lowered write.
    package static func inMemory(
        retention: HistoryRetention = .standard, clock: HistoryClock = .system, maximumPoints: Int = 10_000,
        lowPriority: Bool = false
    ) throws -> HistoryStore {
        try HistoryStore(
            writer: DatabaseQueue(configuration: Self.configuration), retention: retention, clock: clock,
            maximumPoints: maximumPoints, lowPriority: lowPriority)
    }

    /// The bytes the database's pages hold now (free pages not counted): what
    /// ``HistoryRetention/maximumBytes`` bounds.
    package func usedBytes() async throws -> Int {
        try await writer.read { db in try Self.usedBytes(db) }
    }

    /// The bytes the history takes on disk: the file and its WAL (`history.sqlite-wal`), which
    /// holds what was written since the last checkpoint. 0 for an in-memory store.
    package func fileBytes() -> Int {
        let path = writer.path
        return [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int ?? 0)
        }
    }

    static func usedBytes(_ db: Database) throws -> Int {
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        return pageSize * (pages - free)
    }
}

// MARK: Writing

extension HistoryStore: HistoryWriting {
    /// Writes `batch` in one transaction on the store's thread: the group commit of everything
    /// recorded since the last.
    package func write(_ batch: [HistoryEntry]) async throws {
        guard !batch.isEmpty else { return }
        try await thread.run { [self] in
            var known: [ValueKey: Int64] = [:]
            seriesNumbers.withLock { swap(&known, &$0) }
            let now = clock.now
            let settles = settling.withLock { $0.add(batch.count, now: now) }
            try writer.write { db in try Self.write(batch, db, seriesIDs: &known, settling: settles) }
            if settles { settling.withLock { $0 = Settling(since: now) } }
            seriesNumbers.withLock { $0 = known }
        }
    }

    /// Moves the points waiting in `incoming` into `point`, series by series in time order, so each
    /// series' last page is written once for all its points; a later point of the same series and
    /// millisecond replaces an earlier one, and points of a series forgotten meanwhile go.
    static func settle(_ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO point(series, time, value)
                SELECT series, time, value FROM incoming WHERE series IN (SELECT id FROM series)
                ORDER BY series, time, rowid
                ON CONFLICT(series, time) DO UPDATE SET value = excluded.value;
                DELETE FROM incoming;
                """)
    }

    /// Writes `batch`'s entries in order. Its points are appended to `incoming`, unless the batch
    /// is `settling`: then what waits settles first and its own points go straight into `point`,
    /// sorted as settling sorts them (a batch a minute, a quiet home's, would otherwise write each
    /// point twice).
    static func write(
        _ batch: [HistoryEntry], _ db: Database, seriesIDs: inout [ValueKey: Int64], settling: Bool
    ) throws {
        if settling { try settle(db) }
        var settled = PointsInOrder()
        for entry in batch {
            switch entry {
            case .point(let key, let point):
                let id: Int64
                if let known = seriesIDs[key.value] {
                    id = known
                } else {
                    id = try seriesID(key, db)
                    seriesIDs[key.value] = id
                }
                if settling {
                    settled.append(series: id, point)
                } else {
                    try db.cachedStatement(sql: "INSERT INTO incoming(series, time, value) VALUES (?, ?, ?)")
                        .execute(arguments: [id, point.time.historyMilliseconds, point.value])
                }
            case .event(let event):
                try TimelineRecord(event).insert(db)
            case .forgetAccessory(let accessory):
                try settled.write(db)
                seriesIDs.removeAll()
                try settle(db)
                try db.execute(sql: "DELETE FROM series WHERE accessory = ?", arguments: [accessory.rawValue])
                try db.execute(sql: "DELETE FROM event WHERE accessory = ?", arguments: [accessory.rawValue])
            case .forgetHome(let home):
                try settled.write(db)
                seriesIDs.removeAll()
                try settle(db)
                try db.execute(sql: "DELETE FROM series WHERE home = ?", arguments: [home.rawValue])
                try db.execute(sql: "DELETE FROM event WHERE home = ?", arguments: [home.rawValue])
            }
        }
        try settled.write(db)
    }

    /// The series' number, made on its first point.
    private static func seriesID(_ key: SeriesKey, _ db: Database) throws -> Int64 {
        if let id = try existingSeriesID(key.value, db) { return id }
        try db.cachedStatement(
            sql: "INSERT INTO series(home, accessory, service, characteristic) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [
            key.home.rawValue, key.value.accessory.rawValue, key.value.service.rawValue,
            key.value.characteristic.rawValue,
        ])
        return db.lastInsertedRowID
    }

    static func existingSeriesID(_ key: ValueKey, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM series WHERE accessory = ? AND service = ? AND characteristic = ?"),
            arguments: [key.accessory.rawValue, key.service.rawValue, key.characteristic.rawValue])
    }
}

/// A settling batch's points, written into `point` sorted by series and time, a later point of the
/// same series and millisecond after an earlier one (which it replaces).
private struct PointsInOrder {
    private var points: [(series: Int64, time: Int64, arrival: Int, value: Double)] = []

    mutating func append(series: Int64, _ point: HistoryPoint) {
        points.append((series, point.time.historyMilliseconds, points.count, point.value))
    }

    mutating func write(_ db: Database) throws {
        points.sort { ($0.series, $0.time, $0.arrival) < ($1.series, $1.time, $1.arrival) }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO point(series, time, value) VALUES (?, ?, ?)
                ON CONFLICT(series, time) DO UPDATE SET value = excluded.value
                """)
        for point in points { try statement.execute(arguments: [point.series, point.time, point.value]) }
        points.removeAll()
    }
}

/// When the points waiting in `incoming` settle: a minute after the last settling, or once
/// ``HistoryStore/settleRows`` wait.
struct Settling {
    var since: Date
    var waiting = 0

    /// Counts `count` more waiting points; true when the batch that brings them settles them all.
    mutating func add(_ count: Int, now: Date) -> Bool {
        waiting += count
        let waited = now.timeIntervalSince(since)
        // A clock set back (waited < 0) settles too, so the wait is not as long as the step back.
        return waiting >= HistoryStore.settleRows || waited >= HistoryStore.settleInterval || waited < 0
    }
}

/// A timeline row.
struct TimelineRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "event"
    var home: String
    var time: Int64
    var kind: String
    var accessory: String?
    var subject: String
    var detail: String
    var automation: String?

    init(_ event: TimelineEvent) {
        home = event.home.rawValue
        time = event.time.historyMilliseconds
        kind = event.kind.rawValue
        accessory = event.accessory?.rawValue
        subject = event.subject
        detail = event.detail
        automation = event.automation?.rawValue
    }

    var event: TimelineEvent {
        TimelineEvent(
            home: HomeID(home), time: Date(historyMilliseconds: time), kind: TimelineKind(rawValue: kind),
            accessory: accessory.map { AccessoryID($0) }, subject: subject, detail: detail,
            automation: automation.map { TriggerID($0) })
    }
}

/// Milliseconds since 1970: how rows keep time.
extension Date {
    static let millisecondsPerHour: Int64 = 3_600_000

    var historyMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    init(historyMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
