/// A home: HomeKit's `HMHome`, as a value. Snapshots of it are what the model hands out.
public struct Home: Sendable, Hashable, Identifiable {
    public let id: HomeID
    public internal(set) var name: String
    /// Whether this is the manager's primary home.
    public internal(set) var isPrimary: Bool
    /// The room for the entire home (`roomForEntireHome`); its name is ``HomeName/defaultRoom``.
    public internal(set) var defaultRoom: Room
    /// The rooms users made, in the order they were added (the default room is not among them).
    public internal(set) var rooms: [Room]
    public internal(set) var zones: [Zone]
    /// Every accessory, bridges and bridged accessories alike, in the order they were added.
    public internal(set) var accessories: [Accessory]
    public internal(set) var actionSets: [ActionSet]
    public internal(set) var users: [User]
    /// Where names were found among `accessories`, a hint for ``accessoryIndex(named:)``; shared by
    /// copies, and not part of the value.
    let accessoryNamePositions = PositionHint<String>()
    /// Where rooms were found among `rooms`, a hint for ``room(_:)``; shared and not part of the value alike.
    let roomPositions = PositionHint<RoomID>()

    /// The default room followed by the user-made rooms.
    public var allRooms: [Room] { [defaultRoom] + rooms }

    /// By index: `first(where:)` copies each accessory it passes (at 10,000, megabytes per lookup).
    public func accessory(_ id: AccessoryID) -> Accessory? {
        for index in accessories.indices where accessories[index].id == id { return accessories[index] }
        return nil
    }
    public func zone(_ id: ZoneID) -> Zone? { zones.first { $0.id == id } }
    public func actionSet(_ id: ActionSetID) -> ActionSet? { actionSets.first { $0.id == id } }
    public func accessories(in room: RoomID) -> [Accessory] { accessories.filter { $0.room == room } }
    /// Whether `account` is a user of this home (the account itself stays inside the model).
    public func isMember(_ account: String) -> Bool { users.contains { $0.account == account } }
}

/// A room. It belongs to one home.
public struct Room: Sendable, Hashable, Identifiable {
    public let id: RoomID
    public internal(set) var name: String
    /// Whether this is the home's default room, which cannot be renamed, removed or zoned.
    public let isDefault: Bool
}

/// A zone: a named group of rooms (upstairs, bedrooms). A room may be in several zones.
public struct Zone: Sendable, Hashable, Identifiable {
    public let id: ZoneID
    public internal(set) var name: String
    public internal(set) var rooms: [RoomID]
}

/// A member's role in a home.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    /// The account that created the home: may do everything.
    case administrator
    /// An account the administrator added: may identify, read, write, observe and execute action sets.
    case guest

    /// Whether the role may change the layout (homes, rooms, zones, accessories, action sets, names)
    /// and the users.
    public var mayChangeLayout: Bool { self == .administrator }
}

/// A member of a home. Others see only its display name and role; the account stays inside the model.
public struct User: Sendable, Hashable, Identifiable {
    public let id: UserID
    public internal(set) var name: String
    public let role: Role
    let account: String
}

/// A device in a home, or found by a driver and not yet in a home.
public struct Accessory: Sendable, Hashable, Identifiable {
    public let id: AccessoryID
    public internal(set) var name: String {
        didSet { nameKeyHash = HomeName.keyHash(name) }
    }
    /// ``HomeName/keyHash(_:)`` of `name`: lookups and the namespace check compare it before the
    /// names, so a home of 10,000 accessories is built without comparing 50 million names.
    private(set) var nameKeyHash: Int
    public var category: AccessoryCategory
    public var manufacturer: String
    public var model: String
    /// The bridge this accessory sits behind, if any.
    public var bridge: AccessoryID?
    /// The accessories behind this one when it is a bridge.
    public var bridgedAccessories: [AccessoryID]
    public var services: [Service]
    /// Whether the accessory can be reached now. Not persisted: after a restart it is false until its
    /// driver reports it.
    public var isReachable: Bool
    /// The room it is in; `nil` only while it belongs to no home.
    public internal(set) var room: RoomID?
    /// What the driver found on the device but cannot offer as a characteristic (a zigbee2mqtt
    /// expose with no mapping), so the accessory browser can say so. Not persisted.
    public var unmappedFeatures: [String] = []
    /// The accessory must be paired with its setup code before it can join a home (an unpaired
    /// HomeKit accessory: `pairAccessory`, not `addAccessory`). Not persisted.
    public var needsPairing = false

    public var isBridge: Bool { category == .bridge || !bridgedAccessories.isEmpty }
    public var isBridged: Bool { bridge != nil }

    /// Describes an accessory the way a driver reports it.
    public init(
        id: AccessoryID,
        name: String,
        category: AccessoryCategory,
        manufacturer: String = "",
        model: String = "",
        bridge: AccessoryID? = nil,
        bridgedAccessories: [AccessoryID] = [],
        services: [Service],
        isReachable: Bool = true
    ) {
        self.id = id
        self.name = name
        self.nameKeyHash = HomeName.keyHash(name)
        self.category = category
        self.manufacturer = manufacturer
        self.model = model
        self.bridge = bridge
        self.bridgedAccessories = bridgedAccessories
        self.services = services
        self.isReachable = isReachable
        self.room = nil
    }

    public func service(_ id: ServiceID) -> Service? { services.first { $0.id == id } }

    public func characteristic(_ service: ServiceID, _ type: CharacteristicType) -> Characteristic? {
        self.service(service)?.characteristics.first { $0.type == type }
    }

    /// Sets one characteristic's value; returns whether it changed (false also when there is no such
    /// characteristic). For drivers keeping their own copy; the model's copy changes only through the manager.
    @discardableResult
    public mutating func setValue(_ value: CharacteristicValue, service: ServiceID, type: CharacteristicType) -> Bool {
        guard let s = services.firstIndex(where: { $0.id == service }),
            let c = services[s].characteristics.firstIndex(where: { $0.type == type }),
            services[s].characteristics[c].value != value
        else { return false }
        services[s].characteristics[c].value = value
        return true
    }
}

/// A function of an accessory, with its characteristics.
public struct Service: Sendable, Hashable, Codable, Identifiable {
    public let id: ServiceID
    public var type: ServiceType
    public var name: String
    public var characteristics: [Characteristic]

    public init(id: ServiceID, type: ServiceType, name: String, characteristics: [Characteristic]) {
        self.id = id
        self.type = type
        self.name = name
        self.characteristics = characteristics
    }

    public func characteristic(_ type: CharacteristicType) -> Characteristic? {
        characteristics.first { $0.type == type }
    }
}

/// A typed value with its metadata. `value` is the last one known (read, written or reported).
public struct Characteristic: Sendable, Hashable, Codable {
    public let type: CharacteristicType
    public var metadata: CharacteristicMetadata
    public var value: CharacteristicValue?

    public init(type: CharacteristicType, metadata: CharacteristicMetadata, value: CharacteristicValue?) {
        self.type = type
        self.metadata = metadata
        self.value = value
    }

    /// A standard characteristic with HAP's metadata (``CharacteristicMetadata/standard(for:)``).
    public static func standard(_ type: CharacteristicType, _ value: CharacteristicValue?) -> Characteristic {
        Characteristic(
            type: type,
            metadata: .standard(for: type) ?? .init(format: .string, permissions: [.read]),
            value: value
        )
    }
}

/// A scene: named actions executed together.
public struct ActionSet: Sendable, Hashable, Identifiable {
    public let id: ActionSetID
    public internal(set) var name: String
    public internal(set) var actions: [Action]
}

/// One action of an action set: write `value` to a characteristic.
public struct Action: Sendable, Hashable, Codable {
    public let accessory: AccessoryID
    public let service: ServiceID
    public let characteristic: CharacteristicType
    public let value: CharacteristicValue
}

/// The outcome of one action when an action set runs.
public struct ActionResult: Sendable, Hashable {
    public let action: Action
    /// Why the action failed; `nil` when it succeeded.
    public let error: HomeError?
    public var succeeded: Bool { error == nil }
}

/// A characteristic named the way requests name it: accessory and service by name, the characteristic
/// by type.
public struct CharacteristicReference: Sendable, Hashable {
    public var accessory: String
    public var service: String
    public var characteristic: CharacteristicType

    public init(accessory: String, service: String, characteristic: CharacteristicType) {
        self.accessory = accessory
        self.service = service
        self.characteristic = characteristic
    }
}

/// An action as a request names it.
public struct ActionRequest: Sendable, Hashable {
    public var target: CharacteristicReference
    public var value: CharacteristicValue

    public init(_ target: CharacteristicReference, _ value: CharacteristicValue) {
        self.target = target
        self.value = value
    }
}

/// A value read from an accessory.
public struct CharacteristicRead: Sendable, Hashable {
    public let accessory: AccessoryID
    public let service: ServiceID
    public let serviceName: String
    public let characteristic: CharacteristicType
    public let value: CharacteristicValue
}

/// A home as the home list shows it to one account.
public struct HomeSummary: Sendable, Hashable, Identifiable {
    public let id: HomeID
    public let name: String
    public let isPrimary: Bool
    /// The account's role in this home.
    public let role: Role
}

/// Who is a member of which home, with the account: for the Gateway's broker access rules only, never
/// to be shown to other users.
public struct Membership: Sendable, Hashable {
    public let home: HomeID
    public let homeName: String
    public let account: String
    public let role: Role
}
