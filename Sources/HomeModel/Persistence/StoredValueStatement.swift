import Foundation
import GRDB
import GRDBSQLite

/// A statement about one stored value, with the parameters `?1` format, `?2` value, `?3`
/// accessoryID, `?4` serviceID and `?5` characteristicType, bound and run with SQLite's C API.
///
/// GRDB's `execute(arguments:)` makes an array of `DatabaseValue`s, binds each through nested
/// closures and asks the database before and after every step; for one small row that cost as much
/// as SQLite's own work (about 11,000 instructions of 28,000 per value). The strings are bound
/// without a copy and the statement is reset before they go, so GRDB finds it as it left it.
struct StoredValueStatement {
    private let statement: Statement

    init(_ statement: Statement) { self.statement = statement }

    /// Runs the statement for `value` of `key`; how many rows it changed.
    func run(_ key: ValueKey, _ value: CharacteristicValue, _ db: Database) throws -> Int {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var accessory = key.accessory.rawValue
        var service = key.service.rawValue
        var characteristic = key.characteristic.rawValue
        let code = accessory.withUTF8 { accessory in
            service.withUTF8 { service in
                characteristic.withUTF8 { characteristic in
                    bindText(accessory, at: 3)
                    bindText(service, at: 4)
                    bindText(characteristic, at: 5)
                    return bind(value) { sqlite3_step(handle) }
                }
            }
        }
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
        }
        return db.changesCount
    }

    /// Binds `value` and its format (those ``StoredValue`` reads back) while `body` runs.
    private func bind(_ value: CharacteristicValue, _ body: () -> Int32) -> Int32 {
        let handle = statement.sqliteStatement
        switch value {
        case .bool(let bool):
            bindFormat("bool")
            sqlite3_bind_int64(handle, 2, bool ? 1 : 0)
        case .int(let int):
            bindFormat("int")
            sqlite3_bind_int64(handle, 2, Int64(int))
        case .float(let float):
            bindFormat("float")
            // Not finite never reaches the model through validation; should one, it is stored as 0, as
            // in the services' JSON, rather than as SQLite's NULL, which the column refuses.
            sqlite3_bind_double(handle, 2, float.isFinite ? float : 0)
        case .string(var string):
            bindFormat("string")
            return string.withUTF8 { bytes in
                bindText(bytes, at: 2)
                return body()
            }
        case .data(let data):
            bindFormat("data")
            return data.withUnsafeBytes { bytes in
                // A null pointer would bind NULL, not an empty blob.
                if bytes.isEmpty {
                    sqlite3_bind_zeroblob(handle, 2, 0)
                } else {
                    sqlite3_bind_blob(handle, 2, bytes.baseAddress, Int32(bytes.count), nil)
                }
                return body()
            }
        }
        return body()
    }

    private func bindFormat(_ format: StaticString) {
        sqlite3_bind_text(
            statement.sqliteStatement, 1, UnsafeRawPointer(format.utf8Start).assumingMemoryBound(to: CChar.self),
            Int32(format.utf8CodeUnitCount), nil)
    }

    /// Binds `bytes` as text without a copy (nil destructor: SQLITE_STATIC); they must outlive the step.
    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) {
        sqlite3_bind_text(
            statement.sqliteStatement, index,
            // An empty string has no address; a null pointer would bind NULL, not "".
            UnsafeRawPointer(bytes.baseAddress ?? ("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self),
            Int32(bytes.count), nil)
    }
}
