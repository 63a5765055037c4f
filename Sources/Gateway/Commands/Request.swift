import Foundation
import HomeModel

extension Command {
    /// A request of `B/$request/<account>/<operation>` (docs/mqtt.md, "Requests"), read from its
    /// operation and JSON body: every missing or mistyped field is refused with its name before
    /// anything runs.
    package enum Request: Sendable, Equatable {
        case homes
        case addHome(name: String)
        case removeHome(home: String)
        case renameHome(home: String, name: String)
        case setPrimaryHome(home: String)
        case addRoom(home: String, name: String)
        case removeRoom(home: String, room: String)
        case renameRoom(home: String, room: String, name: String)
        case addZone(home: String, name: String)
        case removeZone(home: String, zone: String)
        case renameZone(home: String, zone: String, name: String)
        case addRoomToZone(home: String, room: String, zone: String)
        case removeRoomFromZone(home: String, room: String, zone: String)
        case addAccessory(home: String, id: AccessoryID, room: String?, name: String?)
        case removeAccessory(home: String, accessory: String)
        case renameAccessory(home: String, accessory: String, name: String)
        case assignAccessory(home: String, accessory: String, room: String)
        /// The actions' values are read once their characteristics are found (by each one's format).
        case addActionSet(home: String, name: String, actions: [Action])
        case removeActionSet(home: String, actionSet: String)
        case renameActionSet(home: String, actionSet: String, name: String)
        case addUser(home: String, account: String, name: String)
        case removeUser(home: String, user: String)
        case read(home: String, accessory: String, service: String?, characteristic: String?)
        case permitJoin(seconds: Int)
        case pairAccessory(home: String, id: AccessoryID, setupCode: String, room: String?, name: String?)
        case unpairAccessory(home: String, accessory: String)
        case listPairings(home: String, accessory: String)
        case addPairing(home: String, accessory: String, controller: String, publicKey: [UInt8], admin: Bool)
        case removePairing(home: String, accessory: String, controller: String)

        /// One action of `addActionSet`, as named in the body.
        package struct Action: Sendable, Equatable {
            package var accessory: String
            package var service: String
            package var characteristic: String
            package var value: JSON
        }

        /// The operations, by name.
        package static let operations = [
            "homes", "addHome", "removeHome", "renameHome", "setPrimaryHome", "addRoom", "removeRoom", "renameRoom",
            "addZone", "removeZone", "renameZone", "addRoomToZone", "removeRoomFromZone", "addAccessory",
            "removeAccessory", "renameAccessory", "assignAccessory", "addActionSet", "removeActionSet",
            "renameActionSet", "addUser", "removeUser", "read", "permitJoin", "pairAccessory", "unpairAccessory",
            "listPairings", "addPairing", "removePairing",
        ]

        /// Reads `operation` with its body (a JSON object; `{}` for an empty payload).
        package init(operation: String, body json: JSON) throws(HomeError) {
            let body = RequestBody(json)
            switch operation {
            case "homes": self = .homes
            case "addHome": self = .addHome(name: try body.string("name"))
            case "removeHome": self = .removeHome(home: try body.string("home"))
            case "renameHome": self = .renameHome(home: try body.string("home"), name: try body.string("name"))
            case "setPrimaryHome": self = .setPrimaryHome(home: try body.string("home"))
            case "addRoom": self = .addRoom(home: try body.string("home"), name: try body.string("name"))
            case "removeRoom": self = .removeRoom(home: try body.string("home"), room: try body.string("room"))
            case "renameRoom":
                self = .renameRoom(
                    home: try body.string("home"), room: try body.string("room"), name: try body.string("name"))
            case "addZone": self = .addZone(home: try body.string("home"), name: try body.string("name"))
            case "removeZone": self = .removeZone(home: try body.string("home"), zone: try body.string("zone"))
            case "renameZone":
                self = .renameZone(
                    home: try body.string("home"), zone: try body.string("zone"), name: try body.string("name"))
            case "addRoomToZone":
                self = .addRoomToZone(
                    home: try body.string("home"), room: try body.string("room"), zone: try body.string("zone"))
            case "removeRoomFromZone":
                self = .removeRoomFromZone(
                    home: try body.string("home"), room: try body.string("room"), zone: try body.string("zone"))
            case "addAccessory":
                self = .addAccessory(
                    home: try body.string("home"), id: AccessoryID(try body.string("accessory")),
                    room: try body.optionalString("room"), name: try body.optionalString("name"))
            case "removeAccessory":
                self = .removeAccessory(home: try body.string("home"), accessory: try body.string("accessory"))
            case "renameAccessory":
                self = .renameAccessory(
                    home: try body.string("home"), accessory: try body.string("accessory"),
                    name: try body.string("name"))
            case "assignAccessory":
                self = .assignAccessory(
                    home: try body.string("home"), accessory: try body.string("accessory"),
                    room: try body.string("room"))
            case "addActionSet":
                self = .addActionSet(
                    home: try body.string("home"), name: try body.string("name"), actions: try Self.actions(body))
            case "removeActionSet":
                self = .removeActionSet(home: try body.string("home"), actionSet: try body.string("actionSet"))
            case "renameActionSet":
                self = .renameActionSet(
                    home: try body.string("home"), actionSet: try body.string("actionSet"),
                    name: try body.string("name"))
            case "addUser":
                self = .addUser(
                    home: try body.string("home"), account: try body.string("account"), name: try body.string("name"))
            case "removeUser": self = .removeUser(home: try body.string("home"), user: try body.string("user"))
            case "read":
                self = .read(
                    home: try body.string("home"), accessory: try body.string("accessory"),
                    service: try body.optionalString("service"),
                    characteristic: try body.optionalString("characteristic"))
            case "permitJoin":
                guard case .integer(let seconds) = try body.value("seconds") else {
                    throw HomeError(.invalidParameter, "\"seconds\" must be a whole number of seconds.")
                }
                self = .permitJoin(seconds: seconds)
            case "pairAccessory":
                self = .pairAccessory(
                    home: try body.string("home"), id: AccessoryID(try body.string("id")),
                    setupCode: try body.string("setupCode"), room: try body.optionalString("room"),
                    name: try body.optionalString("name"))
            case "unpairAccessory":
                self = .unpairAccessory(home: try body.string("home"), accessory: try body.string("accessory"))
            case "listPairings":
                self = .listPairings(home: try body.string("home"), accessory: try body.string("accessory"))
            case "addPairing":
                guard let key = Data(base64Encoded: try body.string("publicKey")) else {
                    throw HomeError(
                        .invalidParameter, "\"publicKey\" is the controller's Ed25519 public key in base64.")
                }
                guard case .bool(let admin) = try body.value("admin") else {
                    throw HomeError(.invalidParameter, "\"admin\" is true or false.")
                }
                self = .addPairing(
                    home: try body.string("home"), accessory: try body.string("accessory"),
                    controller: try body.string("controller"), publicKey: Array(key), admin: admin)
            case "removePairing":
                self = .removePairing(
                    home: try body.string("home"), accessory: try body.string("accessory"),
                    controller: try body.string("controller"))
            default:
                throw HomeError(
                    .invalidParameter,
                    "Unknown operation '\(operation)'; the operations are \(Self.operations.joined(separator: ", ")).")
            }
        }

        /// The home the request is about, if it names one.
        package var home: String? {
            switch self {
            case .homes, .addHome, .permitJoin: nil
            case .removeHome(let home), .renameHome(let home, _), .setPrimaryHome(let home), .addRoom(let home, _),
                .removeRoom(let home, _), .renameRoom(let home, _, _), .addZone(let home, _), .removeZone(let home, _),
                .renameZone(let home, _, _), .addRoomToZone(let home, _, _), .removeRoomFromZone(let home, _, _),
                .addAccessory(let home, _, _, _), .removeAccessory(let home, _), .renameAccessory(let home, _, _),
                .assignAccessory(let home, _, _), .addActionSet(let home, _, _), .removeActionSet(let home, _),
                .renameActionSet(let home, _, _), .addUser(let home, _, _), .removeUser(let home, _),
                .read(let home, _, _, _), .pairAccessory(let home, _, _, _, _), .unpairAccessory(let home, _),
                .listPairings(let home, _), .addPairing(let home, _, _, _, _), .removePairing(let home, _, _):
                home
            }
        }

        private static func actions(_ body: RequestBody) throws(HomeError) -> [Action] {
            guard case .array(let entries) = try body.value("actions") else {
                throw HomeError(
                    .invalidParameter, "\"actions\" is a list of {accessory, service, characteristic, value}.")
            }
            var actions: [Action] = []
            for entry in entries {
                let action = RequestBody(entry)
                actions.append(
                    Action(
                        accessory: try action.string("accessory"), service: try action.string("service"),
                        characteristic: try action.string("characteristic"), value: try action.value("value")))
            }
            return actions
        }
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
