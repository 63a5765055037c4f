import Foundation
import GRDB
import Schedules

/// The rows of the home database, with the model's types: an identifier or a characteristic type
/// is its text in its column, as `Codable` writes it.
struct HomeRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "home"
    var id: HomeID
    var name: String
    var position: Int
    var isPrimary: Bool
    /// The home's location (migration "v6: schedules"): all three or none.
    var latitude: Double?
    var longitude: Double?
    var timeZone: String?
}

struct RoomRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "room"
    var id: RoomID
    var homeID: HomeID
    var name: String
    var isDefault: Bool
    var position: Int
}

struct ZoneRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zone"
    var id: ZoneID
    var homeID: HomeID
    var name: String
    var position: Int
}

struct ZoneRoomRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zoneRoom"
    var zoneID: ZoneID
    var roomID: RoomID
    var position: Int
}

struct UserRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "user"
    var id: UserID
    var homeID: HomeID
    var account: String
    var name: String
    var role: Role
    var position: Int
}

/// An accessory's row, read and written column by column, its JSON columns (`bridgedIDs`,
/// `services`) through ``ServicesJSON``: a start at 10,000 accessories spent most of loading the
/// database in `Decodable`'s row and JSON decoding.
struct AccessoryRecord: Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "accessory"
    var id: String
    var homeID: String
    var roomID: String
    var name: String
    var category: String
    var manufacturer: String
    var model: String
    var bridgeID: String?
    var bridgedIDs: [String]
    /// Services with their characteristics, metadata and last known values, as JSON.
    var services: [Service]
    var position: Int
    var deviceName: String?

    enum Columns {
        static let id = Column("id")
        static let homeID = Column("homeID")
        static let services = Column("services")
    }
}

extension AccessoryRecord {
    init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        homeID = try row.decode(forColumn: "homeID")
        roomID = try row.decode(forColumn: "roomID")
        name = try row.decode(forColumn: "name")
        category = try row.decode(forColumn: "category")
        manufacturer = try row.decode(forColumn: "manufacturer")
        model = try row.decode(forColumn: "model")
        bridgeID = try row.decode(forColumn: "bridgeID")
        position = try row.decode(forColumn: "position")
        deviceName = row["deviceName"]
        bridgedIDs = try ServicesJSON.decodeStrings(try row.decode(forColumn: "bridgedIDs"))
        services = try ServicesJSON.decode(try row.decode(forColumn: "services"))
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["homeID"] = homeID
        container["roomID"] = roomID
        container["name"] = name
        container["category"] = category
        container["manufacturer"] = manufacturer
        container["model"] = model
        container["bridgeID"] = bridgeID
        container["bridgedIDs"] = ServicesJSON.encodeStrings(bridgedIDs)
        container["services"] = ServicesJSON.encode(services)
        container["position"] = position
        container["deviceName"] = deviceName
    }
}

struct ActionSetRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "actionSet"
    var id: ActionSetID
    var homeID: HomeID
    var name: String
    var position: Int
}

struct ActionRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "action"
    var actionSetID: ActionSetID
    var position: Int
    var accessoryID: AccessoryID
    var serviceID: ServiceID
    var characteristicType: CharacteristicType
    var value: CharacteristicValue
}

/// An automation (migration "v5: automations"); its action sets are ``TriggerActionSetRecord``s.
struct TriggerRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "automationTrigger"
    var id: TriggerID
    var homeID: HomeID
    var name: String
    var position: Int
    var isEnabled: Bool
    /// A characteristic event's characteristic; nil for a schedule (migration "v6: schedules").
    var accessoryID: AccessoryID?
    var serviceID: ServiceID?
    var characteristicType: CharacteristicType?
    var value: CharacteristicValue?
    /// A schedule trigger's event; nil for a characteristic's.
    var schedule: ScheduleJSON?
    /// ``TriggerOptions`` (migration "v7: execute once, turn back after"); the duration in seconds.
    var executeOnce = false
    var turnBackAfter: Int?
    /// A threshold event (migration "v8: ranges, conditions, catch-up grace"); the characteristic
    /// columns are nil.
    var threshold: ThresholdJSON?
    /// Its conditions (the same migration); nil for none.
    var conditions: [ConditionJSON]?
    /// ``TriggerOptions/catchUpGrace`` in seconds (the same migration); nil for the standard one.
    var catchUpGrace: Int?
}

/// A condition as its column holds it: a characteristic by ids with its comparison and value, or
/// a time window's points in their written form ("sunset-30", "06:00").
struct ConditionJSON: Codable, Sendable, Hashable {
    var accessory: AccessoryID?
    var service: ServiceID?
    var characteristic: CharacteristicType?
    var comparison: String?
    var value: CharacteristicValue?
    var from: String?
    var to: String?

    init(_ condition: TriggerCondition) {
        switch condition {
        case .characteristic(let key, let comparison, let value):
            accessory = key.accessory
            service = key.service
            characteristic = key.characteristic
            self.comparison = comparison.rawValue
            self.value = value
        case .time(let window):
            from = window.from.description
            to = window.to.description
        }
    }

    /// The condition, or nil for one this gateway cannot read.
    var condition: TriggerCondition? {
        if let from, let to {
            guard let from = try? TimePoint(from), let to = try? TimePoint(to),
                let window = try? TimeWindow(from: from, to: to)
            else { return nil }
            return .time(window)
        }
        guard let accessory, let service, let characteristic,
            let comparison = comparison.flatMap({ Comparison(rawValue: $0) }),
            let value
        else { return nil }
        return .characteristic(
            ValueKey(accessory: accessory, service: service, characteristic: characteristic), comparison, value)
    }
}

/// A threshold event as its column holds it: the characteristic by ids, the bounds as numbers.
struct ThresholdJSON: Codable, Sendable, Hashable {
    var accessory: AccessoryID
    var service: ServiceID
    var characteristic: CharacteristicType
    var min: Double?
    var max: Double?

    init(_ key: ValueKey, _ range: ThresholdRange) {
        accessory = key.accessory
        service = key.service
        characteristic = key.characteristic
        min = range.minimum
        max = range.maximum
    }

    /// The event, or nil for bounds no range has (a row changed by hand).
    var event: TriggerEvent? {
        guard let range = try? ThresholdRange(minimum: min, maximum: max) else { return nil }
        return .threshold(ValueKey(accessory: accessory, service: service, characteristic: characteristic), range)
    }
}

/// A return an automation's firing left pending (migration "v7: execute once, turn back after"):
/// the values to write back, as actions in JSON, and when. Without a foreign key, like
/// ``ScheduleStateRecord``: a layout change rewrites the trigger's row.
struct PendingTurnBackRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "pendingTurnBack"
    var triggerID: TriggerID
    var homeID: HomeID
    var due: Double
    var actions: [Action]
}

/// Where a schedule trigger stands (migration "v6: schedules"): since when the hub has run it, and
/// its last firing's slot and instant, stored before the firing runs: a restart repeats none. Kept
/// apart from the trigger's row, which a layout change rewrites, and without a foreign key, so a
/// rewrite does not drop it; the schedule service drops the rows of triggers removed (at start and
/// when it sees them go), and a firing's row is written only while its trigger is on disk.
struct ScheduleStateRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "scheduleState"
    var triggerID: TriggerID
    var since: Double
    var lastSlot: String?
    var lastInstant: Double?
}

struct TriggerActionSetRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "triggerActionSet"
    var triggerID: TriggerID
    var position: Int
    var actionSetID: ActionSetID
}

/// A device value stored apart from its accessory's services (migration "v3: characteristic
/// values"): `format` says which case of ``CharacteristicValue`` `value` holds, in SQLite's own
/// types (a bool as 0 or 1, data as a blob), so writing one costs no JSON.
struct StoredValue: Sendable {
    static let databaseTableName = "characteristicValue"
    let accessoryID: String
    let serviceID: String
    let characteristicType: String
    let value: CharacteristicValue

    /// Every stored value; a row this gateway cannot read (an unknown format) is left out, and the
    /// services' value stands.
    static func all(_ db: Database) throws -> [StoredValue] {
        try Row.fetchAll(
            db, sql: "SELECT accessoryID, serviceID, characteristicType, format, value FROM \(databaseTableName)"
        ).compactMap { row in
            guard let value = value(format: row[3], row[4]) else { return nil }
            return StoredValue(accessoryID: row[0], serviceID: row[1], characteristicType: row[2], value: value)
        }
    }

    private static func value(format: String, _ stored: DatabaseValue) -> CharacteristicValue? {
        switch (format, stored.storage) {
        case ("bool", .int64(let int)): .bool(int != 0)
        case ("int", .int64(let int)): .int(Int(int))
        case ("float", .double(let double)): .float(double)
        case ("float", .int64(let int)): .float(Double(int))
        case ("string", .string(let string)): .string(string)
        case ("data", .blob(let data)): .data(data)
        default: nil
        }
    }
}
