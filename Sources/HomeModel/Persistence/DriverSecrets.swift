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
            let rows = try Row.fetchAll(
                db, sql: "SELECT key, value FROM driverSecret WHERE driver = ?", arguments: [driver])
            return Dictionary(uniqueKeysWithValues: rows.map { ($0["key"] as String, Array($0["value"] as Data)) })
        }
    }

    package func value(_ key: String) throws -> [UInt8]? {
        try database.writer.read { db in
            try Data.fetchOne(
                db, sql: "SELECT value FROM driverSecret WHERE driver = ? AND key = ?", arguments: [driver, key]
            ).map(Array.init)
        }
    }

    /// The value of `key`; `made()` stored first when there is none, in one transaction, so that
    /// two callers racing for a first value both get the one that was stored.
    package func value(_ key: String, storingIfAbsent made: () -> [UInt8]) throws -> [UInt8] {
        try database.writer.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO driverSecret (driver, key, value) VALUES (?, ?, ?)",
                arguments: [driver, key, Data(made())])
            return try Data.fetchOne(
                db, sql: "SELECT value FROM driverSecret WHERE driver = ? AND key = ?", arguments: [driver, key]
            ).map(Array.init) ?? []
        }
    }

    /// ``set(_:_:)`` on GRDB's writer queue, awaited: the caller's thread (an actor on the gateway's
    /// loop) waits for no fsync.
    package func store(_ key: String, _ value: [UInt8]) async throws {
        try await database.writer.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO driverSecret (driver, key, value) VALUES (?, ?, ?)",
                arguments: [driver, key, Data(value)])
        }
    }

    package func set(_ key: String, _ value: [UInt8]) throws {
        try database.writer.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO driverSecret (driver, key, value) VALUES (?, ?, ?)",
                arguments: [driver, key, Data(value)])
        }
    }

    package func remove(_ key: String) throws {
        try database.writer.write { db in
            try db.execute(sql: "DELETE FROM driverSecret WHERE driver = ? AND key = ?", arguments: [driver, key])
        }
    }
}

extension HomeDatabase {
    /// The secrets of the driver named `driver`.
    package func secrets(for driver: String) -> DriverSecrets { DriverSecrets(database: self, driver: driver) }
}
