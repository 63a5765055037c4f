import Foundation
import HomeModel

extension CommandRouter {
    /// The request operations of docs/mqtt.md, by name.
    static let operations = [
        "homes", "addHome", "removeHome", "renameHome", "setPrimaryHome", "addRoom", "removeRoom", "renameRoom",
        "addZone", "removeZone", "renameZone", "addRoomToZone", "removeRoomFromZone", "addAccessory",
        "removeAccessory", "renameAccessory", "assignAccessory", "addActionSet", "removeActionSet",
        "renameActionSet", "addUser", "removeUser", "read", "permitJoin", "pairAccessory", "unpairAccessory",
        "listPairings", "addPairing", "removePairing",
    ]

    /// Runs request `operation` (`B/$request/<account>/<operation>`) with its JSON body; returns the
    /// answer's `data`.
    func request(_ operation: String, body json: JSON, account: String) async throws(HomeError) -> JSON? {
        let body = RequestBody(json)
        switch operation {
        case "homes":
            let homes = await manager.homes(for: account)
            return .array(
                homes.map {
                    .object([
                        ("name", .string($0.name)), ("primary", .bool($0.isPrimary)),
                        ("role", .string($0.role.rawValue)),
                    ])
                })
        case "addHome":
            let home = try await manager.addHome(named: try body.string("name"), account: account)
            return .object([("name", .string(home.name))])
        case "removeHome":
            try await manager.removeHome(try body.string("home"), account: account)
        case "renameHome":
            try await manager.renameHome(try body.string("home"), to: try body.string("name"), account: account)
        case "setPrimaryHome":
            try await manager.setPrimaryHome(try body.string("home"), account: account)
        case "addRoom":
            let room = try await manager.addRoom(
                named: try body.string("name"), home: try body.string("home"), account: account)
            return .object([("name", .string(room.name))])
        case "removeRoom":
            try await manager.removeRoom(try body.string("room"), home: try body.string("home"), account: account)
        case "renameRoom":
            try await manager.renameRoom(
                try body.string("room"), to: try body.string("name"), home: try body.string("home"), account: account)
        case "addZone":
            let zone = try await manager.addZone(
                named: try body.string("name"), home: try body.string("home"), account: account)
            return .object([("name", .string(zone.name))])
        case "removeZone":
            try await manager.removeZone(try body.string("zone"), home: try body.string("home"), account: account)
        case "renameZone":
            try await manager.renameZone(
                try body.string("zone"), to: try body.string("name"), home: try body.string("home"), account: account)
        case "addRoomToZone":
            try await manager.addRoom(
                try body.string("room"), toZone: try body.string("zone"), home: try body.string("home"),
                account: account)
        case "removeRoomFromZone":
            try await manager.removeRoom(
                try body.string("room"), fromZone: try body.string("zone"), home: try body.string("home"),
                account: account)
        case "addAccessory":
            let accessory = try await manager.addAccessory(
                AccessoryID(try body.string("accessory")), home: try body.string("home"),
                room: try body.optionalString("room"), name: try body.optionalString("name"), account: account)
            return .object([("name", .string(accessory.name))])
        case "removeAccessory":
            try await manager.removeAccessory(
                try body.string("accessory"), home: try body.string("home"), account: account)
        case "renameAccessory":
            try await manager.renameAccessory(
                try body.string("accessory"), to: try body.string("name"), home: try body.string("home"),
                account: account)
        case "assignAccessory":
            try await manager.assignAccessory(
                try body.string("accessory"), toRoom: try body.string("room"), home: try body.string("home"),
                account: account)
        case "addActionSet":
            let homeName = try body.string("home")
            let home = try await manager.home(homeName, account: account)
            let actionSet = try await manager.addActionSet(
                named: try body.string("name"), actions: try actions(body, in: home), home: home.name, account: account)
            return .object([("name", .string(actionSet.name))])
        case "removeActionSet":
            try await manager.removeActionSet(
                try body.string("actionSet"), home: try body.string("home"), account: account)
        case "renameActionSet":
            try await manager.renameActionSet(
                try body.string("actionSet"), to: try body.string("name"), home: try body.string("home"),
                account: account)
        case "addUser":
            try await manager.addUser(
                account: try body.string("account"), name: try body.string("name"), home: try body.string("home"),
                account: account)
        case "removeUser":
            try await manager.removeUser(
                named: try body.string("user"), home: try body.string("home"), account: account)
        case "read":
            let type = try body.optionalString("characteristic").map { CharacteristicType(rawValue: $0) }
            let reads = try await manager.readValues(
                accessory: try body.string("accessory"), service: try body.optionalString("service"),
                characteristic: type, home: try body.string("home"), account: account)
            return .array(
                reads.map {
                    .object([
                        ("service", .string($0.serviceName)), ("characteristic", .string($0.characteristic.rawValue)),
                        ("value", Rendering.value($0.value)),
                    ])
                })
        case "permitJoin":
            guard case .integer(let seconds) = try body.value("seconds") else {
                throw HomeError(.invalidParameter, "\"seconds\" must be a whole number of seconds.")
            }
            let permits = try await manager.permitJoin(seconds: seconds, account: account)
            return .array(
                permits.map { .object([("network", .string($0.network)), ("seconds", .integer($0.seconds))]) })
        case "pairAccessory":
            let accessory = try await manager.pairAccessory(
                AccessoryID(try body.string("id")), setupCode: try body.string("setupCode"),
                home: try body.string("home"), room: try body.optionalString("room"),
                name: try body.optionalString("name"), account: account)
            return .object([("name", .string(accessory.name))])
        case "unpairAccessory":
            try await manager.unpairAccessory(
                try body.string("accessory"), home: try body.string("home"), account: account)
        case "listPairings":
            let pairings = try await manager.pairings(
                ofAccessory: try body.string("accessory"), home: try body.string("home"), account: account)
            return .array(
                pairings.map {
                    .object([
                        ("controller", .string($0.identifier)), ("admin", .bool($0.isAdministrator)),
                        ("thisGateway", .bool($0.isThisGateway)),
                    ])
                })
        case "addPairing":
            guard let key = Data(base64Encoded: try body.string("publicKey")) else {
                throw HomeError(.invalidParameter, "\"publicKey\" is the controller's Ed25519 public key in base64.")
            }
            let admin: Bool
            switch try body.value("admin") {
            case .bool(let flag): admin = flag
            default: throw HomeError(.invalidParameter, "\"admin\" is true or false.")
            }
            try await manager.addPairing(
                ControllerPairing(
                    identifier: try body.string("controller"), isAdministrator: admin, isThisGateway: false),
                publicKey: Array(key), toAccessory: try body.string("accessory"), home: try body.string("home"),
                account: account)
        case "removePairing":
            try await manager.removePairing(
                controller: try body.string("controller"), fromAccessory: try body.string("accessory"),
                home: try body.string("home"), account: account)
        default:
            throw HomeError(
                .invalidParameter,
                "Unknown operation '\(operation)'; the operations are \(Self.operations.joined(separator: ", ")).")
        }
        return nil
    }

    /// The `actions` of an `addActionSet` body, with values read by each target's format.
    private func actions(_ body: RequestBody, in home: Home) throws(HomeError) -> [ActionRequest] {
        guard case .array(let entries) = try body.value("actions") else {
            throw HomeError(.invalidParameter, "\"actions\" is a list of {accessory, service, characteristic, value}.")
        }
        var requests: [ActionRequest] = []
        for entry in entries {
            let action = RequestBody(entry)
            let accessory = try Self.accessory(try action.string("accessory"), in: home)
            let (service, characteristic) = try Self.characteristic(
                try action.string("characteristic"), of: try action.string("service"), in: accessory)
            requests.append(
                ActionRequest(
                    CharacteristicReference(
                        accessory: accessory.name, service: service.name, characteristic: characteristic.type),
                    try ValueDecoding.value(
                        fromJSON: try action.value("value"), for: characteristic.metadata, type: characteristic.type)))
        }
        return requests
    }
}

/// Reads the fields of a request body, each missing or mistyped field answered with its name.
struct RequestBody {
    let json: JSON
    init(_ json: JSON) { self.json = json }

    func value(_ key: String) throws(HomeError) -> JSON {
        guard case .object = json else { throw HomeError(.invalidParameter, "Expected a JSON object.") }
        guard let value = json[key], value != .null else {
            throw HomeError(.missingParameter, "The request needs \"\(key)\".")
        }
        return value
    }

    func string(_ key: String) throws(HomeError) -> String {
        guard case .string(let string) = try value(key) else {
            throw HomeError(.invalidParameter, "\"\(key)\" must be a string.")
        }
        return string
    }

    func optionalString(_ key: String) throws(HomeError) -> String? {
        guard json[key] != nil, json[key] != .null else { return nil }
        return try string(key)
    }
}
