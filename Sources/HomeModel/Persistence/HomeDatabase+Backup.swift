import Foundation
import GRDB

extension HomeDatabase {
    /// Why a backup or a restore did not happen; nothing was changed.
    struct BackupError: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    /// Writes one consistent copy of the database file at `path` to a new file at `destination`
    /// (SQLite's online backup: a gateway may go on writing meanwhile; the copy is the database as
    /// one moment left it, the WAL's committed changes included). The copy is written beside
    /// `destination` and moved there at the end, so a failed backup leaves no half file.
    package static func backup(databaseAt path: String, to destination: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw BackupError(description: "there is no home database at \(path)")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw BackupError(description: "\(destination) exists already; name a new file")
        }
        let partial = destination + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(10)
            let source = try DatabasePool(path: path, configuration: configuration)
            let copy = try DatabaseQueue(path: partial)
            try source.backup(to: copy)
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try copy.close()
            try FileManager.default.moveItem(atPath: partial, toPath: destination)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw BackupError(description: "cannot back up \(path): \(error)")
        }
    }

    /// Puts the backup at `backup` in place as the database file at `path`, which must not exist
    /// (restore into a new data folder, or move the old database away first). The backup is checked
    /// first: a file that is not a home database, or one a newer gateway wrote, is refused.
    package static func restore(from backup: String, toDatabaseAt path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw BackupError(
                description: "\(path) exists: restore into a new data folder, or move the home database away first")
        }
        let known = Set(migrator.migrations)
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let source = try DatabaseQueue(path: backup, configuration: configuration)
            let applied = try source.read { db -> [String] in
                guard try db.tableExists("grdb_migrations"), try db.tableExists("home") else {
                    throw BackupError(description: "\(backup) is not a backup of a home database")
                }
                return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            }
            guard Set(applied).isSubset(of: known) else {
                throw BackupError(
                    description: "\(backup) was written by a newer homegate (it has the migrations "
                        + "\(Set(applied).subtracting(known).sorted().joined(separator: ", "))); restore it with that one"
                )
            }
            let restored = try pool(atPath: path)
            try source.backup(to: restored)
            // A backup of an older gateway's database takes this one's schema as it opens.
            _ = try HomeDatabase.open(atPath: path)
        } catch let error as BackupError {
            throw error
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            throw BackupError(description: "cannot restore \(backup): \(error)")
        }
    }
}
