import Foundation
import GRDB
import Synchronization

@testable import HomeModel

/// A home database's settings and rows as the model's tests check them, and disks that refuse or
/// stall writes.
extension HomeDatabase {
    /// SQLite's `synchronous` setting on the writer connection (2 = FULL), for tests.
    func synchronousMode() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// Makes every write fail (SQLite's `query_only`) until called with false: a disk that refuses
    /// writes, for tests.
    func refuseWrites(_ refuse: Bool) throws {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA query_only = \(refuse ? 1 : 0)") }
    }

    /// The journal mode in use (`wal` for a file database).
    func journalMode() throws -> String {
        try writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// The values stored apart from their accessories' services, for tests.
    func storedValues() throws -> [StoredValue] {
        try writer.read { db in try StoredValue.all(db) }
    }

    /// Makes every write from now on wait until `release` is signalled (a disk that stalls), for tests.
    func holdWrites(until release: DispatchSemaphore) {
        writer.asyncWriteWithoutTransaction { _ in release.wait() }
    }

    /// The services column of an accessory's row as it is on disk, for tests.
    func servicesText(of accessory: AccessoryID) throws -> String? {
        try writer.read { db in
            try String.fetchOne(
                db, sql: "SELECT services FROM \(AccessoryRecord.databaseTableName) WHERE id = ?",
                arguments: [accessory.rawValue])
        }
    }

    /// Runs `sql` on the writer: for tests that act as another writer of the file (an older gateway).
    func execute(sql: String, arguments: [String]) throws {
        try writer.write { db in try db.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }

    /// How many group commits of values ran.
    var valueCommits: Int { valueCommitCount.withLock { $0 } }

    /// How many of them failed (and left their values for the next).
    var failedValueCommits: Int { failedValueCommitCount.withLock { $0 } }
}
