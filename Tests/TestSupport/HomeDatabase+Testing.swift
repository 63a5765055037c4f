import GRDB
import HomeModel

/// What tests ask of a home database's SQLite file: whether it is sound, and how big it may grow.
extension HomeDatabase {
    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound file.
    package func integrityCheck() throws -> [String] {
        try writer.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Caps the database at `pages` pages (SQLite's `max_page_count`), or lifts the cap (`nil`): a
    /// way to see what the gateway does when the disk fills up, without filling a disk.
    package func limitSize(toPages pages: Int?) throws {
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA max_page_count = \(pages ?? 4_294_967_294)")
        }
    }

    /// The number of pages the database has now (SQLite's `page_count`).
    package func pageCount() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
    }
}
