import Foundation
import GRDB
import Synchronization

/// The durable store of the home database: one SQLite file in WAL mode with `synchronous = FULL`, so a
/// change is on disk when ``HomeManager`` acknowledges it and survives the process being killed.
///
/// Owned by one ``HomeManager``, which is its only writer.
package final class HomeDatabase: Sendable {
    /// The connection (a pool for a file); tests read the file's state through it.
    package let writer: any DatabaseWriter

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        try Self.migrator.migrate(writer)
    }

    /// Opens (creating if needed) the database file at `path` and migrates it.
    package static func open(atPath path: String) throws -> HomeDatabase {
        try HomeDatabase(writer: pool(atPath: path))
    }

    /// Creates the file at `path` with the schema as it was after `migration` (a database an older
    /// gateway wrote): for tests.
    package static func create(atPath path: String, migratedUpTo migration: String) throws {
        try migrator.migrate(pool(atPath: path), upTo: migration)
    }

    /// The names of the migrations applied to the file at `path`, in order: for tests.
    package static func appliedMigrations(atPath path: String) throws -> [String] {
        try pool(atPath: path).read { db in try migrator.appliedIdentifiers(db).sorted() }
    }

    static func pool(atPath path: String) throws -> DatabasePool {
        var configuration = Configuration()
        // Another process may hold the file for a moment (a backup, `sqlite3`, a reader recovering the
        // WAL after a crash): wait for it instead of failing to start.
        configuration.busyMode = .timeout(10)
        let pool = try DatabasePool(path: path, configuration: configuration)
        // After the pool is open: GRDB's WAL set-up sets `synchronous = NORMAL` on the writer after any
        // `prepareDatabase`, and NORMAL syncs only at checkpoints, so a power cut could lose answered
        // layout changes. FULL syncs every commit (device values are grouped, see HomeManager).
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        return pool
    }

    /// A private in-memory database: for tests, and for `data.inMemory` (nothing survives a restart).
    package static func inMemory() throws -> HomeDatabase {
        try HomeDatabase(writer: DatabaseQueue())
    }

    /// The model's error for a failed save: `storageFull` when the disk (or the size cap) is full, so
    /// the user learns what to do; `unexpectedError` with SQLite's words otherwise.
    static func failure(_ error: any Error) -> HomeError {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL {
            return HomeError(
                .storageFull, "The hub's storage is full: the change was not saved. Free some space and try again.")
        }
        return HomeError(.unexpectedError, "The change could not be saved: \(error)")
    }

    // MARK: Loading

    /// Everything that was acknowledged. Accessories load as unreachable until their driver reports.
    func load() throws -> HomeGraph {
        try writer.read { db in
            var rows = try Rows(db)
            rows.layStoredValues(try StoredValue.all(db))
            var graph = HomeGraph()
            for record in try HomeRecord.order(Column("position")).fetchAll(db) {
                let home = try rows.home(record)
                graph.homes.append(home)
                if record.isPrimary { graph.primaryHome = home.id }
            }
            return graph
        }
    }

    /// Every row below the home table, grouped by owner, for assembling homes.
    private struct Rows {
        let rooms: [HomeID: [RoomRecord]]
        let zones: [HomeID: [ZoneRecord]]
        let zoneRooms: [ZoneID: [ZoneRoomRecord]]
        let users: [HomeID: [UserRecord]]
        var accessories: [String: [AccessoryRecord]]
        let actionSets: [HomeID: [ActionSetRecord]]
        let actions: [ActionSetID: [ActionRecord]]
        let triggers: [HomeID: [TriggerRecord]]
        let triggerActionSets: [TriggerID: [TriggerActionSetRecord]]

        init(_ db: Database) throws {
            let position = Column("position")
            rooms = Dictionary(grouping: try RoomRecord.order(position).fetchAll(db), by: \.homeID)
            zones = Dictionary(grouping: try ZoneRecord.order(position).fetchAll(db), by: \.homeID)
            zoneRooms = Dictionary(grouping: try ZoneRoomRecord.order(position).fetchAll(db), by: \.zoneID)
            users = Dictionary(grouping: try UserRecord.order(position).fetchAll(db), by: \.homeID)
            // Sorted here, not by SQLite: its sorter would copy every row with its services (megabytes
            // at 10,000 accessories) and spill them to a temporary file, which a hub's SD card writes.
            accessories = Dictionary(grouping: try AccessoryRecord.fetchAll(db), by: \.homeID)
                .mapValues { $0.sorted { $0.position < $1.position } }
            actionSets = Dictionary(grouping: try ActionSetRecord.order(position).fetchAll(db), by: \.homeID)
            actions = Dictionary(grouping: try ActionRecord.order(position).fetchAll(db), by: \.actionSetID)
            triggers = Dictionary(grouping: try TriggerRecord.order(position).fetchAll(db), by: \.homeID)
            triggerActionSets = Dictionary(
                grouping: try TriggerActionSetRecord.order(position).fetchAll(db), by: \.triggerID)
        }

        /// Puts the values reported since each accessory's services were written into them; a value
        /// for a characteristic the services no longer have is left out.
        mutating func layStoredValues(_ values: [StoredValue]) {
            guard !values.isEmpty else { return }
            var places: [String: (homeID: String, index: Int)] = [:]
            for (homeID, records) in accessories {
                for (index, record) in records.enumerated() { places[record.id] = (homeID, index) }
            }
            for value in values {
                guard let (homeID, a) = places[value.accessoryID],
                    let (s, c) = Self.place(of: value, in: accessories[homeID]![a].services)
                else { continue }
                accessories[homeID]![a].services[s].characteristics[c].value = value.value
            }
        }

        private static func place(of value: StoredValue, in services: [Service]) -> (Int, Int)? {
            guard let s = services.firstIndex(where: { $0.id.rawValue == value.serviceID }),
                let c = services[s].characteristics.firstIndex(where: { $0.type.rawValue == value.characteristicType })
            else { return nil }
            return (s, c)
        }

        func home(_ record: HomeRecord) throws -> Home {
            let homeRooms = rooms[record.id] ?? []
            guard let defaultRoom = homeRooms.first(where: \.isDefault) else {
                throw HomeError(.unexpectedError, "The home '\(record.name)' has no default room in the database.")
            }
            return Home(
                id: record.id,
                name: record.name,
                isPrimary: record.isPrimary,
                defaultRoom: Room(id: defaultRoom.id, name: HomeName.defaultRoom, isDefault: true),
                rooms: homeRooms.filter { !$0.isDefault }.map { Room(id: $0.id, name: $0.name, isDefault: false) },
                zones: (zones[record.id] ?? []).map(zone),
                accessories: (accessories[record.id.rawValue] ?? []).map(Self.accessory),
                actionSets: (actionSets[record.id] ?? []).map(actionSet),
                users: (users[record.id] ?? []).map {
                    User(id: $0.id, name: $0.name, role: $0.role, account: $0.account)
                },
                triggers: (triggers[record.id] ?? []).compactMap(trigger),
                location: Self.location(record)
            )
        }

        /// The trigger a row holds; a row this gateway cannot read (a schedule of a later version) is
        /// kept on disk until the home is rewritten, and not loaded.
        private func trigger(_ record: TriggerRecord) -> Trigger? {
            let event: TriggerEvent
            if let schedule = record.schedule {
                guard let decoded = schedule.schedule else { return nil }
                event = .schedule(decoded)
            } else if let threshold = record.threshold {
                guard let decoded = threshold.event else { return nil }
                event = decoded
            } else {
                guard let accessory = record.accessoryID, let service = record.serviceID,
                    let type = record.characteristicType
                else { return nil }
                event = .characteristic(
                    ValueKey(accessory: accessory, service: service, characteristic: type), value: record.value)
            }
            // A condition this gateway cannot read leaves the automation unloaded: run without it,
            // it would fire when it must not.
            let conditions = (record.conditions ?? []).compactMap(\.condition)
            guard conditions.count == record.conditions?.count ?? 0 else { return nil }
            return Trigger(
                id: record.id, name: record.name, isEnabled: record.isEnabled, event: event,
                actionSets: (triggerActionSets[record.id] ?? []).map(\.actionSetID),
                options: TriggerOptions(
                    executeOnce: record.executeOnce, turnBackAfter: record.turnBackAfter.map { .seconds($0) },
                    catchUpGrace: record.catchUpGrace.map { .seconds($0) }),
                conditions: conditions)
        }

        private static func location(_ record: HomeRecord) -> HomeLocation? {
            guard let latitude = record.latitude, let longitude = record.longitude, let timeZone = record.timeZone
            else { return nil }
            return try? HomeLocation(latitude: latitude, longitude: longitude, timeZone: timeZone)
        }

        private func zone(_ record: ZoneRecord) -> Zone {
            Zone(id: record.id, name: record.name, rooms: (zoneRooms[record.id] ?? []).map(\.roomID))
        }

        private func actionSet(_ record: ActionSetRecord) -> ActionSet {
            let actions: [Action] = (self.actions[record.id] ?? []).map { row in
                Action(
                    accessory: row.accessoryID, service: row.serviceID, characteristic: row.characteristicType,
                    value: row.value)
            }
            return ActionSet(id: record.id, name: record.name, actions: actions)
        }

        private static func accessory(_ row: AccessoryRecord) -> Accessory {
            var accessory = Accessory(
                id: AccessoryID(row.id), name: row.name, category: AccessoryCategory(rawValue: row.category),
                manufacturer: row.manufacturer, model: row.model, bridge: row.bridgeID.map { AccessoryID($0) },
                bridgedAccessories: row.bridgedIDs.map { AccessoryID($0) }, services: row.services, isReachable: false)
            accessory.room = RoomID(row.roomID)
            accessory.deviceName = row.deviceName
            return accessory
        }
    }

    // MARK: Saving

    /// Makes the database hold `new`, given that it holds `old`, in one transaction.
    ///
    /// A home where only accessories changed (values, reachability, accessories added, removed,
    /// renamed or moved) has just those accessories' rows written, so a value change or a new
    /// accessory costs one row however big the home is; likewise automations (an automation added,
    /// changed, turned on or off, removed: its rows). Any other changed home is rewritten whole,
    /// which keeps the mapping obviously right.
    func save(from old: HomeGraph, to new: HomeGraph) throws {
        guard old != new else { return }
        try writer.write { db in try Self.write(from: old, to: new, db) }
    }

    /// ``save(from:to:)`` on the database's writer, awaited: the caller's thread (the manager's
    /// actor) serves others meanwhile.
    func saveAwaiting(
        from old: HomeGraph, to new: HomeGraph, values: [(ValueKey, CharacteristicValue)] = []
    ) async throws {
        guard old != new || !values.isEmpty else { return }
        try await writer.write { db in
            try Self.write(from: old, to: new, db)
            if !values.isEmpty { try Self.write(values, db) }
        }
    }

    /// Writes the homes that changed; when their automations may have (a home removed or
    /// rewritten), drops the turn-backs they cancelled.
    private static func write(from old: HomeGraph, to new: HomeGraph, _ db: Database) throws {
        let kept = Set(new.homes.map(\.id))
        var rewritten = false
        for home in old.homes where !kept.contains(home.id) {
            try HomeRecord.deleteOne(db, key: home.id.rawValue)
            rewritten = true
        }
        let before = Dictionary(uniqueKeysWithValues: old.homes.enumerated().map { ($1.id, ($0, $1)) })
        for (position, home) in new.homes.enumerated() {
            if let (oldPosition, oldHome) = before[home.id] {
                if oldHome == home && oldPosition == position { continue }
                if oldPosition == position
                    && oldHome.withoutAccessoriesAndTriggers == home.withoutAccessoriesAndTriggers
                {
                    if oldHome.accessories != home.accessories { try Self.saveAccessories(of: home, from: oldHome, db) }
                    if oldHome.triggers != home.triggers {
                        try Self.saveTriggers(of: home, from: oldHome, db)
                        rewritten = true
                    }
                    continue
                }
                try HomeRecord.deleteOne(db, key: home.id.rawValue)
                rewritten = true
            }
            try Self.insert(home, position: position, db)
        }
        if rewritten { try dropCancelledTurnBacks(db) }
    }

    /// Writes `values` in one transaction on the database's own queue, and returns at once;
    /// `completion` says how it went. Each is one small row (``StoredValue``), so a commit costs the
    /// values that changed, not the accessories' services. Writes keep their order with
    /// ``save(from:to:)`` and ``saveValues(_:)``, which wait on the same queue.
    func saveValuesLater(
        _ values: [(ValueKey, CharacteristicValue)], completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        writer.asyncWrite(
            { db in try Self.write(values, db) },
            completion: { [self] _, result in
                valueCommitCount.withLock { $0 += 1 }
                if case .failure(let error) = result {
                    failedValueCommitCount.withLock { $0 += 1 }
                    completion(error)
                } else {
                    completion(nil)
                }
            })
    }

    /// Writes `values` in one transaction and returns once they are on disk.
    func saveValues(_ values: [(ValueKey, CharacteristicValue)]) throws {
        try writer.write { db in try Self.write(values, db) }
    }

    /// A value whose accessory has no row (gone, or not written yet) is left out: the accessory's
    /// row, when written, carries its values.
    ///
    /// A characteristic that has a row is updated in place, which costs SQLite one seek and no
    /// foreign-key check; only one without a row takes the insert, with its check that the accessory
    /// is on disk. Both are bound through SQLite's own API (`StoredValueStatement`): at thousands of
    /// values a second, GRDB's arguments cost as much as the statements.
    private static func write(_ values: [(ValueKey, CharacteristicValue)], _ db: Database) throws {
        let update = StoredValueStatement(
            try db.cachedStatement(
                sql: """
                    UPDATE \(StoredValue.databaseTableName) SET format = ?1, value = ?2
                    WHERE accessoryID = ?3 AND serviceID = ?4 AND characteristicType = ?5
                    """))
        let insert = StoredValueStatement(
            try db.cachedStatement(
                sql: """
                    INSERT INTO \(StoredValue.databaseTableName)
                        (format, value, accessoryID, serviceID, characteristicType)
                    SELECT ?1, ?2, ?3, ?4, ?5
                    WHERE EXISTS (SELECT 1 FROM \(AccessoryRecord.databaseTableName) WHERE id = ?3)
                    """))
        for (key, value) in values where try update.run(key, value, db) == 0 {
            _ = try insert.run(key, value, db)
        }
    }

    /// How many group commits of values ran, and how many of them failed (and left their values for
    /// the next): for tests.
    let valueCommitCount = Mutex(0)
    let failedValueCommitCount = Mutex(0)

    /// Returns once every write queued before it (a group commit under way) is done.
    func waitForWrites() {
        writer.writeWithoutTransaction { _ in }
    }

    /// Writes the accessory rows of `home` that differ from `old`, the same home before the change.
    private static func saveAccessories(of home: Home, from old: Home, _ db: Database) throws {
        let samePlaces =
            old.accessories.count == home.accessories.count
            && zip(old.accessories, home.accessories).allSatisfy { $0.id == $1.id }
        if !samePlaces {
            let kept = Set(home.accessories.map(\.id))
            for accessory in old.accessories where !kept.contains(accessory.id) {
                try AccessoryRecord
                    .filter(AccessoryRecord.Columns.id == accessory.id.rawValue)
                    .filter(AccessoryRecord.Columns.homeID == home.id.rawValue)
                    .deleteAll(db)
            }
        }
        for (position, accessory) in home.accessories.enumerated() {
            let previous = position < old.accessories.count ? old.accessories[position] : nil
            if let previous, previous.id == accessory.id {
                if previous == accessory { continue }
                if previous.withoutValues == accessory.withoutValues {
                    if previous.services != accessory.services {
                        try AccessoryRecord
                            .filter(AccessoryRecord.Columns.id == accessory.id.rawValue)
                            .updateAll(
                                db, AccessoryRecord.Columns.services.set(to: ServicesJSON.encode(accessory.services)))
                    }
                    continue
                }
            }
            try record(of: accessory, in: home, position: position).save(db)
        }
    }

    private static func record(of accessory: Accessory, in home: Home, position: Int) -> AccessoryRecord {
        AccessoryRecord(
            id: accessory.id.rawValue, homeID: home.id.rawValue,
            roomID: (accessory.room ?? home.defaultRoom.id).rawValue, name: accessory.name,
            category: accessory.category.rawValue, manufacturer: accessory.manufacturer, model: accessory.model,
            bridgeID: accessory.bridge?.rawValue, bridgedIDs: accessory.bridgedAccessories.map(\.rawValue),
            services: accessory.services, position: position, deviceName: accessory.deviceName)
    }

    private static func insert(_ home: Home, position: Int, _ db: Database) throws {
        let homeID = home.id
        try HomeRecord(
            id: homeID, name: home.name, position: position, isPrimary: home.isPrimary,
            latitude: home.location?.latitude, longitude: home.location?.longitude,
            timeZone: home.location?.timeZoneIdentifier
        ).insert(db)
        for (index, room) in home.allRooms.enumerated() {
            try RoomRecord(id: room.id, homeID: homeID, name: room.name, isDefault: room.isDefault, position: index)
                .insert(db)
        }
        for (index, zone) in home.zones.enumerated() {
            try ZoneRecord(id: zone.id, homeID: homeID, name: zone.name, position: index).insert(db)
            for (roomIndex, room) in zone.rooms.enumerated() {
                try ZoneRoomRecord(zoneID: zone.id, roomID: room, position: roomIndex).insert(db)
            }
        }
        for (index, user) in home.users.enumerated() {
            try UserRecord(
                id: user.id, homeID: homeID, account: user.account, name: user.name, role: user.role, position: index
            ).insert(db)
        }
        for (index, accessory) in home.accessories.enumerated() {
            try record(of: accessory, in: home, position: index).insert(db)
        }
        for (index, actionSet) in home.actionSets.enumerated() {
            try ActionSetRecord(id: actionSet.id, homeID: homeID, name: actionSet.name, position: index).insert(db)
            for (actionIndex, action) in actionSet.actions.enumerated() {
                try ActionRecord(
                    actionSetID: actionSet.id, position: actionIndex, accessoryID: action.accessory,
                    serviceID: action.service, characteristicType: action.characteristic, value: action.value
                ).insert(db)
            }
        }
        for (index, trigger) in home.triggers.enumerated() { try insert(trigger, of: homeID, position: index, db) }
    }
}

extension Home {
    /// The home without its accessories and automations: what must be unchanged for a save to write
    /// only the rows of those that changed.
    var withoutAccessoriesAndTriggers: Home {
        var home = self
        home.accessories = []
        home.triggers = []
        return home
    }
}

extension Accessory {
    /// The accessory with characteristic values and reachability blanked: when only these changed, a
    /// save rewrites just its services.
    var withoutValues: Accessory {
        var accessory = self
        accessory.isReachable = false
        for s in accessory.services.indices {
            for c in accessory.services[s].characteristics.indices {
                accessory.services[s].characteristics[c].value = nil
            }
        }
        return accessory
    }
}
