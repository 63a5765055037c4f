import Foundation
import GRDB

/// One driver's secrets in the home database (table `driverSecret`): keys it must keep across
/// restarts and that must never leave the hub's disk (no topic, log or layout shows them). Each
/// change is durable when the call returns (the database's `synchronous = FULL`).
package struct DriverSecrets: Sendable {
    let database: HomeDatabase
    /// The driver's name, which keeps its keys apart from other drivers'.
    package let driver: String

    /// Every key and value of this driver.
    package func all() throws -> [String: [UInt8]] {
        try database.writer.read { db in
            let rows = try DriverSecretRecord.filter(Column("driver") == driver).fetchAll(db)
            return Dictionary(uniqueKeysWithValues: rows.map { ($0.key, Array($0.value)) })
        }
    }

    package func value(_ key: String) throws -> [UInt8]? {
        try database.writer.read { db in try record(key, db).map { Array($0.value) } }
    }

    /// The value of `key`; `made()` stored first when there is none, in one transaction, so that
    /// two callers racing for a first value both get the one that was stored.
    package func value(_ key: String, storingIfAbsent made: () -> [UInt8]) throws -> [UInt8] {
        try database.writer.write { db in
            try DriverSecretRecord(driver: driver, key: key, value: Data(made())).insert(db, onConflict: .ignore)
            return try record(key, db).map { Array($0.value) } ?? []
        }
    }

    /// ``set(_:_:)`` on GRDB's writer queue, awaited: the caller's thread (an actor on the gateway's
    /// loop) waits for no fsync.
    package func store(_ key: String, _ value: [UInt8]) async throws {
        let record = DriverSecretRecord(driver: driver, key: key, value: Data(value))
        try await database.writer.write { db in try record.insert(db, onConflict: .replace) }
    }

    package func set(_ key: String, _ value: [UInt8]) throws {
        try database.writer.write { db in
            try DriverSecretRecord(driver: driver, key: key, value: Data(value)).insert(db, onConflict: .replace)
        }
    }

    package func remove(_ key: String) throws {
        try database.writer.write { db in
            _ = try DriverSecretRecord.deleteOne(db, key: ["driver": driver, "key": key])
        }
    }

    private func record(_ key: String, _ db: Database) throws -> DriverSecretRecord? {
        try DriverSecretRecord.fetchOne(db, key: ["driver": driver, "key": key])
    }
}

/// A row of the `driverSecret` table (migration "v2: driver secrets").
private struct DriverSecretRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "driverSecret"
    var driver: String
    var key: String
    var value: Data
}

extension HomeDatabase {
    /// The secrets of the driver named `driver`.
    package func secrets(for driver: String) -> DriverSecrets { DriverSecrets(database: self, driver: driver) }
}
