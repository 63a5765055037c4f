import Foundation
import History
import HomeModel
import JSON

extension Command {
    /// A request of `B/$request/<account>/<operation>` (docs/mqtt.md, "Requests"), read from its
    /// operation and JSON body: every missing or mistyped field is refused with its name before
    /// anything runs.
    package enum Request: Sendable, Equatable {
        case homes
        /// A change to a home's layout; `addActionSet`'s is built once its actions' characteristics
        /// are found.
        case edit(HomeEdit)
        /// The actions' values are read once their characteristics are found (by each one's format).
        case addActionSet(home: String, name: String, actions: [Action])
        /// An automation on a characteristic's event, added or, `updating`, the automation `name` defined
        /// anew (a schedule's or a range's is an edit); its value (optional) is read once its
        /// characteristic is found, like an action's.
        case addTrigger(
            home: String, name: String, event: Event, actionSets: [String], options: TriggerOptions = TriggerOptions(),
            conditions: [ConditionRequest] = [], updating: Bool = false)
        case read(home: String, accessory: String, service: String?, characteristic: String?, bridged: Bool)
        case permitJoin(seconds: Int)
        case pairAccessory(home: String, id: AccessoryID, setupCode: String, room: String?, name: String?)
        case unpairAccessory(home: String, accessory: String)
        case listPairings(home: String, accessory: String)
        case addPairing(home: String, accessory: String, controller: String, publicKey: [UInt8], admin: Bool)
        case removePairing(home: String, accessory: String, controller: String)
        /// One characteristic's recorded values over a span (docs/history.md).
        case history(HistoryQuery)
        /// A home's events over a span, oldest first.
        case timeline(home: String, from: Date, to: Date)

        /// What `history` asks for, as named in the body.
        package struct HistoryQuery: Sendable, Equatable {
            package var home: String
            package var accessory: String
            package var service: String
            package var characteristic: String
            package var from: Date
            package var to: Date
            /// Nil leaves it to the store: raw points when the span is recent and small enough.
            package var resolution: HistoryResolution?
        }

        /// One action of `addActionSet`, as named in the body.
        package struct Action: Sendable, Equatable {
            package var accessory: String
            package var service: String
            package var characteristic: String
            package var value: JSON
        }

        /// The characteristic change that fires `addTrigger`, as named in the body; no value fires on
        /// every change.
        package struct Event: Sendable, Equatable {
            package var accessory: String
            package var service: String
            package var characteristic: String
            package var value: JSON?
        }

        /// The operations each copy of which runs (``RequestLedger``): those that only read, asked
        /// again, are read again; `pairAccessory`'s `id` names the accessory, not the request (a second
        /// pairing of a paired accessory is refused by the model).
        static let runEveryTime: Set<String> = [
            "homes", "read", "listPairings", "pairAccessory", "history", "timeline",
        ]

        /// The operations, by name.
        static let operations = [
            "homes", "addHome", "removeHome", "renameHome", "setPrimaryHome", "addRoom", "removeRoom", "renameRoom",
            "addZone", "removeZone", "renameZone", "addRoomToZone", "removeRoomFromZone", "addAccessory",
            "removeAccessory", "renameAccessory", "assignAccessory", "addActionSet", "removeActionSet",
            "renameActionSet", "addTrigger", "updateTrigger", "removeTrigger", "renameTrigger", "enableTrigger",
            "addUser", "removeUser",
            "setLocation", "read", "permitJoin", "pairAccessory", "unpairAccessory",
            "listPairings", "addPairing", "removePairing", "history", "timeline",
        ]

        /// Reads `operation` with its body (a JSON object; `{}` for an empty payload).
        package init(operation: String, body json: JSON) throws(HomeError) {
            let body = RequestBody(json)
            func text(_ key: String) throws(HomeError) -> String { try body.string(key) }
            func optionalText(_ key: String) throws(HomeError) -> String? { try body.optionalString(key) }
            switch operation {
            case "homes": self = .homes
            case "addHome": self = try .edit(.addHome(name: text("name")))
            case "removeHome": self = try .edit(.removeHome(home: text("home")))
            case "renameHome": self = try .edit(.renameHome(home: text("home"), name: text("name")))
            case "setPrimaryHome": self = try .edit(.setPrimaryHome(home: text("home")))
            case "addRoom": self = try .edit(.addRoom(home: text("home"), name: text("name")))
            case "removeRoom": self = try .edit(.removeRoom(home: text("home"), room: text("room")))
            case "renameRoom":
                self = try .edit(.renameRoom(home: text("home"), room: text("room"), name: text("name")))
            case "addZone": self = try .edit(.addZone(home: text("home"), name: text("name")))
            case "removeZone": self = try .edit(.removeZone(home: text("home"), zone: text("zone")))
            case "renameZone":
                self = try .edit(.renameZone(home: text("home"), zone: text("zone"), name: text("name")))
            case "addRoomToZone":
                self = try .edit(.addRoomToZone(home: text("home"), room: text("room"), zone: text("zone")))
            case "removeRoomFromZone":
                self = try .edit(.removeRoomFromZone(home: text("home"), room: text("room"), zone: text("zone")))
            case "addAccessory":
                self = try .edit(
                    .addAccessory(
                        home: text("home"), id: AccessoryID(text("accessory")), room: optionalText("room"),
                        name: optionalText("name")))
            case "removeAccessory":
                self = try .edit(.removeAccessory(home: text("home"), accessory: text("accessory")))
            case "renameAccessory":
                self = try .edit(.renameAccessory(home: text("home"), accessory: text("accessory"), name: text("name")))
            case "assignAccessory":
                self = try .edit(.assignAccessory(home: text("home"), accessory: text("accessory"), room: text("room")))
            case "addActionSet":
                self = try .addActionSet(home: text("home"), name: text("name"), actions: Self.actions(body))
            case "removeActionSet":
                self = try .edit(.removeActionSet(home: text("home"), actionSet: text("actionSet")))
            case "renameActionSet":
                self = try .edit(.renameActionSet(home: text("home"), actionSet: text("actionSet"), name: text("name")))
            case "addTrigger": self = try Self.trigger(body, named: text("name"), updating: false)
            case "updateTrigger": self = try Self.trigger(body, named: text("trigger"), updating: true)
            case "setLocation":
                self = try .edit(.setLocation(home: text("home"), location: ScheduleFields.location(body)))
            case "removeTrigger":
                self = try .edit(.removeTrigger(home: text("home"), trigger: text("trigger")))
            case "renameTrigger":
                self = try .edit(.renameTrigger(home: text("home"), trigger: text("trigger"), name: text("name")))
            case "enableTrigger":
                guard case .bool(let enabled) = try body.value("enabled") else {
                    throw HomeError(.invalidParameter, "\"enabled\" is true or false.")
                }
                self = try .edit(.enableTrigger(home: text("home"), trigger: text("trigger"), enabled: enabled))
            case "addUser":
                self = try .edit(.addUser(home: text("home"), account: text("account"), name: text("name")))
            case "removeUser":
                switch try (optionalText("user"), optionalText("userId")) {
                case (let user?, nil): self = .edit(.removeUser(home: try text("home"), user: user))
                case (nil, let id?): self = .edit(.removeMember(home: try text("home"), id: UserID(id)))
                default:
                    throw HomeError(
                        .invalidParameter,
                        "removeUser takes the user's display name (\"user\"), or the web page's user id (\"userId\"): one of them."
                    )
                }
            case "read":
                self = try .read(
                    home: text("home"), accessory: text("accessory"), service: optionalText("service"),
                    characteristic: optionalText("characteristic"), bridged: body.optionalFlag("bridged"))
            case "permitJoin":
                guard case .integer(let seconds) = try body.value("seconds") else {
                    throw HomeError(.invalidParameter, "\"seconds\" must be a whole number of seconds.")
                }
                self = .permitJoin(seconds: seconds)
            case "pairAccessory":
                self = try .pairAccessory(
                    home: text("home"), id: AccessoryID(text("id")), setupCode: text("setupCode"),
                    room: optionalText("room"), name: optionalText("name"))
            case "unpairAccessory":
                self = try .unpairAccessory(home: text("home"), accessory: text("accessory"))
            case "listPairings":
                self = try .listPairings(home: text("home"), accessory: text("accessory"))
            case "addPairing":
                guard let key = try Data(base64Encoded: text("publicKey")) else {
                    throw HomeError(
                        .invalidParameter, "\"publicKey\" is the controller's Ed25519 public key in base64.")
                }
                guard case .bool(let admin) = try body.value("admin") else {
                    throw HomeError(.invalidParameter, "\"admin\" is true or false.")
                }
                self = try .addPairing(
                    home: text("home"), accessory: text("accessory"), controller: text("controller"),
                    publicKey: Array(key), admin: admin)
            case "removePairing":
                self = try .removePairing(
                    home: text("home"), accessory: text("accessory"), controller: text("controller"))
            case "history":
                self = try .history(
                    HistoryQuery(
                        home: text("home"), accessory: text("accessory"), service: text("service"),
                        characteristic: text("characteristic"), from: body.time("from"), to: body.time("to"),
                        resolution: body.resolution("resolution")))
            case "timeline":
                self = try .timeline(home: text("home"), from: body.time("from"), to: body.time("to"))
            default:
                throw HomeError(
                    .invalidParameter,
                    "Unknown operation '\(operation)'; the operations are \(Self.operations.joined(separator: ", ")).")
            }
        }

        /// The home the request is about, if it names one.
        package var home: String? {
            switch self {
            case .homes, .permitJoin, .edit(.addHome): nil
            case .edit(let edit): edit.home
            case .addActionSet(let home, _, _), .addTrigger(let home, _, _, _, _, _, _),
                .read(let home, _, _, _, _),
                .pairAccessory(let home, _, _, _, _),
                .unpairAccessory(let home, _), .listPairings(let home, _), .addPairing(let home, _, _, _, _),
                .removePairing(let home, _, _), .timeline(let home, _, _):
                home
            case .history(let query): query.home
            }
        }

        /// `addTrigger` (or, `updating`, `updateTrigger`) with any of its events: a schedule's or a
        /// range's is an edit as it is; a characteristic event's value is read once its
        /// characteristic is found.
        private static func trigger(_ body: RequestBody, named name: String, updating: Bool) throws(HomeError)
            -> Request
        {
            let home = try body.string("home")
            let options = TriggerOptions(
                executeOnce: try body.optionalFlag("executeOnce"), turnBackAfter: try body.seconds("turnBackAfter"),
                catchUpGrace: try body.seconds("catchUpGrace"))
            let conditions = try TriggerFields.conditions(body)
            let schedule = try ScheduleFields.schedule(body)
            let range = schedule == nil ? try TriggerFields.range(body) : nil
            let actionSets = try body.strings("actionSets")
            let definition: HomeEdit
            if let schedule {
                definition = .addScheduleTrigger(
                    home: home, name: name, schedule: schedule, actionSets: actionSets, options: options,
                    conditions: conditions)
            } else if let range {
                definition = .addRangeTrigger(
                    home: home, name: name, characteristic: try TriggerFields.characteristic(body), range: range,
                    actionSets: actionSets, options: options, conditions: conditions)
            } else {
                let event = Event(
                    accessory: try body.string("accessory"), service: try body.string("service"),
                    characteristic: try body.string("characteristic"), value: try body.optionalValue("value"))
                return .addTrigger(
                    home: home, name: name, event: event, actionSets: actionSets, options: options,
                    conditions: conditions, updating: updating)
            }
            return .edit(updating ? .updateTrigger(home: home, trigger: name, definition: definition) : definition)
        }

        private static func actions(_ body: RequestBody) throws(HomeError) -> [Action] {
            guard case .array(let entries) = try body.value("actions") else {
                throw HomeError(
                    .invalidParameter, "\"actions\" is a list of {accessory, service, characteristic, value}.")
            }
            return try entries.map { entry throws(HomeError) in
                let action = RequestBody(entry)
                return Action(
                    accessory: try action.string("accessory"), service: try action.string("service"),
                    characteristic: try action.string("characteristic"), value: try action.value("value"))
            }
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

    /// A value that may be left out (or null).
    func optionalValue(_ key: String) throws(HomeError) -> JSON? {
        guard json[key] != nil, json[key] != .null else { return nil }
        return try value(key)
    }

    /// A list of strings.
    func strings(_ key: String) throws(HomeError) -> [String] {
        guard case .array(let entries) = try value(key) else {
            throw HomeError(.invalidParameter, "\"\(key)\" must be a list of names.")
        }
        return try entries.map { entry throws(HomeError) in
            guard case .string(let string) = entry else {
                throw HomeError(.invalidParameter, "\"\(key)\" must be a list of names.")
            }
            return string
        }
    }

    /// A duration in seconds that may be left out (`addTrigger`'s `turnBackAfter` and `catchUpGrace`):
    /// its range is the model's to check (`invalidDuration`), a duration that is no number
    /// `invalidParameter`.
    func seconds(_ key: String) throws(HomeError) -> Duration? {
        switch try optionalValue(key) {
        case nil: return nil
        case .integer(let seconds)?: return .seconds(seconds)
        case .number(let seconds)?:
            guard seconds.isFinite, abs(seconds) < 1e15 else {
                throw HomeError(.invalidDuration, "\"\(key)\" is whole seconds, at most 86400.")
            }
            return .seconds(seconds)
        default: throw HomeError(.invalidParameter, "\"\(key)\" must be a number of seconds.")
        }
    }

    /// A time in ISO 8601 with its offset (`2026-11-29T08:00:00Z`, `2026-11-29T09:00:00.250+01:00`).
    func time(_ key: String) throws(HomeError) -> Date {
        let text = try string(key)
        guard let date = WireTime.date(text) else {
            throw HomeError(
                .invalidParameter,
                "\"\(key)\" is a time in ISO 8601 with its offset, e.g. \"2026-11-29T08:00:00Z\", not '\(text)'.")
        }
        return date
    }

    /// A history resolution that may be left out (nil: the store's choice).
    func resolution(_ key: String) throws(HomeError) -> HistoryResolution? {
        guard let text = try optionalString(key) else { return nil }
        guard let resolution = HistoryResolution(rawValue: text) else {
            throw HomeError(.invalidParameter, "\"\(key)\" is \"raw\" or \"hour\", not '\(text)'.")
        }
        return resolution
    }

    /// A `true` or `false` that may be left out (false).
    func optionalFlag(_ key: String) throws(HomeError) -> Bool {
        guard json[key] != nil, json[key] != .null else { return false }
        guard case .bool(let flag) = try value(key) else {
            throw HomeError(.invalidParameter, "\"\(key)\" must be true or false.")
        }
        return flag
    }
}

/// Times on the wire: ISO 8601 with an offset, read with or without fractional seconds, written in
/// UTC to the millisecond (`2026-11-29T08:00:00.000Z`), the precision history keeps.
package enum WireTime {
    private static let precise = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let whole = Date.ISO8601FormatStyle()

    /// The time `text` names, or nil when it is not ISO 8601 with an offset.
    package static func date(_ text: String) -> Date? {
        (try? precise.parse(text)) ?? (try? whole.parse(text))
    }

    package static func text(_ date: Date) -> String { precise.format(date) }
}
