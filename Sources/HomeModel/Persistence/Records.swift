import Foundation
import GRDB

struct HomeRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "home"
    var id: String
    var name: String
    var position: Int
    var isPrimary: Bool
}

struct RoomRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "room"
    var id: String
    var homeID: String
    var name: String
    var isDefault: Bool
    var position: Int
}

struct ZoneRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zone"
    var id: String
    var homeID: String
    var name: String
    var position: Int
}

struct ZoneRoomRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zoneRoom"
    var zoneID: String
    var roomID: String
    var position: Int
}

struct UserRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "user"
    var id: String
    var homeID: String
    var account: String
    var name: String
    var role: Role
    var position: Int
}

struct AccessoryRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
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

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let homeID = Column(CodingKeys.homeID)
        static let services = Column(CodingKeys.services)
    }
}

struct ActionSetRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "actionSet"
    var id: String
    var homeID: String
    var name: String
    var position: Int
}

struct ActionRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "action"
    var actionSetID: String
    var position: Int
    var accessoryID: String
    var serviceID: String
    var characteristicType: String
    var value: CharacteristicValue
}
