import GRDB

extension HistoryStore {
    /// The history file's schema, one migration per change; the home database's migrations are
    /// its own.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE series (
                        id INTEGER PRIMARY KEY,
                        home TEXT NOT NULL,
                        accessory TEXT NOT NULL,
                        service TEXT NOT NULL,
                        characteristic TEXT NOT NULL,
                        UNIQUE (accessory, service, characteristic)
                    );
                    CREATE INDEX series_home ON series(home);
                    CREATE TABLE point (
                        series INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
                        time INTEGER NOT NULL,
                        value REAL NOT NULL,
                        PRIMARY KEY (series, time)
                    ) WITHOUT ROWID;
                    CREATE TABLE hourly (
                        series INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
                        hour INTEGER NOT NULL,
                        minimum REAL NOT NULL,
                        mean REAL NOT NULL,
                        maximum REAL NOT NULL,
                        samples INTEGER NOT NULL,
                        PRIMARY KEY (series, hour)
                    ) WITHOUT ROWID;
                    CREATE TABLE event (
                        id INTEGER PRIMARY KEY,
                        home TEXT NOT NULL,
                        time INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        accessory TEXT,
                        subject TEXT NOT NULL,
                        detail TEXT NOT NULL
                    );
                    CREATE INDEX event_home_time ON event(home, time);
                    CREATE INDEX event_time ON event(time);
                    CREATE INDEX event_accessory ON event(accessory);
                    """)
        }
        // The home page's last firing of each automation: its firings alone, by name and time.
        migrator.registerMigration("v2-automation-firings") { db in
            try db.execute(
                sql: "CREATE INDEX event_automation ON event(home, subject, time) WHERE kind = 'automation'")
        }
        // An automation's firing names the automation by identifier too: its last firing is found
        // after a rename.
        migrator.registerMigration("v3-automation-ids") { db in
            try db.execute(
                sql: """
                    ALTER TABLE event ADD COLUMN automation TEXT;
                    CREATE INDEX event_automation_id ON event(home, automation, time) WHERE kind = 'automation';
                    """)
        }
        // Points wait in `incoming`, appended as they come (a few pages a batch), and settle into
        // `point` together (``HistoryStore/settle(_:)``): written straight into `point`, a batch of
        // one point per series wrote a page of the WAL for each (docs/benchmarks.md).
        migrator.registerMigration("v4-incoming-points") { db in
            try db.execute(
                sql: "CREATE TABLE incoming (series INTEGER NOT NULL, time INTEGER NOT NULL, value REAL NOT NULL)")
        }
        return migrator
    }()
}
