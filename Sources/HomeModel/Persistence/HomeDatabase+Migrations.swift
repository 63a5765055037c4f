import GRDB

/// The database's schema, one migration per change of it, in the order they were made: a file
/// written by any earlier release is brought up to date when it is opened, and never changed back.
extension HomeDatabase {
    /// The last migration's name: what a file this gateway wrote has applied.
    package static let latestMigration = "v8: ranges, conditions, catch-up grace"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "home") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("isPrimary", .boolean).notNull()
            }
            try db.create(table: "room") { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade).indexed()
                t.column("name", .text).notNull()
                t.column("isDefault", .boolean).notNull()
                t.column("position", .integer).notNull()
            }
            try db.create(table: "zone") { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade).indexed()
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
            }
            try db.create(table: "zoneRoom") { t in
                t.column("zoneID", .text).notNull().references("zone", onDelete: .cascade)
                t.column("roomID", .text).notNull().references("room", onDelete: .cascade).indexed()
                t.column("position", .integer).notNull()
                t.primaryKey(["zoneID", "roomID"])
            }
            try db.create(table: "user") { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade).indexed()
                t.column("account", .text).notNull()
                t.column("name", .text).notNull()
                t.column("role", .text).notNull()
                t.column("position", .integer).notNull()
                t.uniqueKey(["homeID", "account"])
            }
            try db.create(table: "accessory") { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade).indexed()
                t.column("roomID", .text).notNull().references("room", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("category", .text).notNull()
                t.column("manufacturer", .text).notNull()
                t.column("model", .text).notNull()
                t.column("bridgeID", .text)
                t.column("bridgedIDs", .jsonText).notNull()
                t.column("services", .jsonText).notNull()
                t.column("position", .integer).notNull()
            }
            try db.create(table: "actionSet") { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade).indexed()
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
            }
            try db.create(table: "action") { t in
                t.column("actionSetID", .text).notNull().references("actionSet", onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.column("accessoryID", .text).notNull()
                t.column("serviceID", .text).notNull()
                t.column("characteristicType", .text).notNull()
                t.column("value", .jsonText).notNull()
                t.primaryKey(["actionSetID", "position"])
            }
        }
        migrator.registerMigration("v2: driver secrets") { db in
            // What a driver must keep and nobody may see: a HAP controller's long-term key, the
            // accessories' pairings. Never on a topic, in a log or in a layout.
            try db.create(table: "driverSecret") { t in
                t.column("driver", .text).notNull()
                t.column("key", .text).notNull()
                t.column("value", .blob).notNull()
                t.primaryKey(["driver", "key"])
            }
        }
        migrator.registerMigration("v3: characteristic values") { db in
            // What devices reported since their accessory's services were last written: one small row
            // per characteristic, which the group commit writes instead of rewriting the accessory's
            // services (kilobytes of JSON, encoded again for every commit that touched it). Loading
            // lays these over the services' values. Writing an accessory's services (with its current
            // values) drops its rows: by a trigger, so that a writer that knows nothing of this table
            // (an older gateway on the same file) cannot leave rows older than the services behind.
            try db.create(table: StoredValue.databaseTableName, options: [.withoutRowID]) { t in
                t.column("accessoryID", .text).notNull().references("accessory", onDelete: .cascade)
                t.column("serviceID", .text).notNull()
                t.column("characteristicType", .text).notNull()
                t.column("format", .text).notNull()
                t.column("value").notNull()
                t.primaryKey(["accessoryID", "serviceID", "characteristicType"])
            }
            try db.execute(
                sql: """
                    CREATE TRIGGER characteristicValueFolded AFTER UPDATE OF services ON accessory
                    BEGIN DELETE FROM \(StoredValue.databaseTableName) WHERE accessoryID = NEW.id; END
                    """)
        }
        migrator.registerMigration("v4: device names") { db in
            // The name a device gives itself where it is not a valid name here (`Fan-2 (Bedroom)`).
            try db.alter(table: "accessory") { t in t.add(column: "deviceName", .text) }
        }
        migrator.registerMigration("v5: automations") { db in
            // `trigger` is an SQL keyword: the table is named for what it holds.
            try db.create(table: TriggerRecord.databaseTableName) { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade).indexed()
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("isEnabled", .boolean).notNull()
                t.column("accessoryID", .text).notNull()
                t.column("serviceID", .text).notNull()
                t.column("characteristicType", .text).notNull()
                t.column("value", .jsonText)
            }
            try db.create(table: TriggerActionSetRecord.databaseTableName) { t in
                t.column("triggerID", .text).notNull().references(TriggerRecord.databaseTableName, onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.column("actionSetID", .text).notNull().references("actionSet", onDelete: .cascade).indexed()
                t.primaryKey(["triggerID", "position"])
            }
        }
        migrator.registerMigration("v6: schedules") { db in
            // A home's location; schedule triggers beside characteristic ones, so the characteristic
            // columns become optional (SQLite changes a constraint only by copying the table, which
            // GRDB's migrator does with foreign keys deferred: the action sets' rows stay).
            try db.alter(table: "home") { t in
                t.add(column: "latitude", .double)
                t.add(column: "longitude", .double)
                t.add(column: "timeZone", .text)
            }
            try db.create(table: "new_\(TriggerRecord.databaseTableName)") { t in
                t.primaryKey("id", .text)
                t.column("homeID", .text).notNull().references("home", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("isEnabled", .boolean).notNull()
                t.column("accessoryID", .text)
                t.column("serviceID", .text)
                t.column("characteristicType", .text)
                t.column("value", .jsonText)
                t.column("schedule", .jsonText)
            }
            try db.execute(
                sql: """
                    INSERT INTO new_\(TriggerRecord.databaseTableName)
                        (id, homeID, name, position, isEnabled, accessoryID, serviceID, characteristicType, value)
                    SELECT id, homeID, name, position, isEnabled, accessoryID, serviceID, characteristicType, value
                    FROM \(TriggerRecord.databaseTableName)
                    """)
            try db.drop(table: TriggerRecord.databaseTableName)
            try db.rename(table: "new_\(TriggerRecord.databaseTableName)", to: TriggerRecord.databaseTableName)
            try db.create(
                index: "\(TriggerRecord.databaseTableName)_on_homeID", on: TriggerRecord.databaseTableName,
                columns: ["homeID"])
            try db.create(table: ScheduleStateRecord.databaseTableName) { t in
                t.primaryKey("triggerID", .text)
                t.column("since", .double).notNull()
                t.column("lastSlot", .text)
                t.column("lastInstant", .double)
            }
        }
        migrator.registerMigration("v7: execute once, turn back after") { db in
            try db.alter(table: TriggerRecord.databaseTableName) { t in
                t.add(column: "executeOnce", .boolean).notNull().defaults(to: false)
                t.add(column: "turnBackAfter", .integer)
            }
            try db.create(table: PendingTurnBackRecord.databaseTableName) { t in
                t.primaryKey("triggerID", .text)
                t.column("homeID", .text).notNull()
                t.column("due", .double).notNull()
                t.column("actions", .jsonText).notNull()
            }
        }
        migrator.registerMigration(Self.latestMigration) { db in
            // A threshold event keeps its characteristic in its own JSON column, not in the
            // characteristic columns: a v7 gateway skips a row with neither, where it would read
            // a range as "fires on every change".
            try db.alter(table: TriggerRecord.databaseTableName) { t in
                t.add(column: "threshold", .jsonText)
                t.add(column: "conditions", .jsonText)
                t.add(column: "catchUpGrace", .integer)
            }
        }
        return migrator
    }
}
