import HomeModel

/// The topic names of the MQTT contract (docs/mqtt.md) under one base topic, in both directions: the topics the gateway
/// publishes, and the parsing of the command and request topics it receives.
///
/// Every level the gateway adds itself starts with `$`, which no object name can start with, so the
/// gateway's topics never collide with names. Pure code: no broker needed to test it.
package struct Topics: Sendable, Hashable {
    /// The base topic (config `mqtt.baseTopic`), without a trailing slash; may have several levels.
    package let base: String
    /// `base`'s UTF-8, for matching received topics byte by byte.
    private let baseBytes: [UInt8]

    package init(base: String = "homegate") {
        self.base = base
        self.baseBytes = Array(base.utf8)
    }

    // MARK: Published by the gateway

    /// `B/$status`: `online` while the gateway is connected, `offline` as its will and on shutdown.
    package var status: String { "\(base)/$status" }
    /// `B/$homes`: the homes, which one is primary.
    package var homes: String { "\(base)/$homes" }
    /// `B/$discovered`: accessories the drivers found that belong to no home.
    package var discovered: String { "\(base)/$discovered" }
    /// `B/$health`: version, uptime, memory, counters.
    package var health: String { "\(base)/$health" }
    /// `B/$events`: manager-level events (homes added, removed, primary home).
    var managerEvents: String { "\(base)/$events" }

    /// `B/<home>`: everything of one home lives below it.
    package func home(_ home: String) -> String { "\(base)/\(home)" }
    /// `B/<home>/$layout`.
    package func layout(home: String) -> String { "\(base)/\(home)/$layout" }
    /// `B/<home>/$events`.
    package func events(home: String) -> String { Self.joined(base, home, "$events") }

    /// `B/<home>/<room>/<accessory>`: the accessory's own topics live below it.
    package func accessory(home: String, room: String, accessory: String) -> String {
        Self.joined(base, home, room, accessory)
    }
    /// `B/<home>/<room>/<accessory>/<service>/<characteristic>`: the value as plain text.
    package func value(home: String, room: String, accessory: String, service: String, characteristic: String) -> String
    {
        Self.joined(base, home, room, accessory, service, characteristic)
    }
    /// `B/<home>/<room>/<accessory>/$reachable`.
    package func reachable(home: String, room: String, accessory: String) -> String {
        Self.joined(base, home, room, accessory, "$reachable")
    }
    /// `B/<home>/<room>/<accessory>/$state`.
    package func state(home: String, room: String, accessory: String) -> String {
        Self.joined(base, home, room, accessory, "$state")
    }

    /// `B/<home>/<room>/<accessory>/<service>/$ha`: the service's state in Home Assistant's words
    /// (JSON), published when Home Assistant discovery is on.
    package func homeAssistantState(home: String, room: String, accessory: String, service: String) -> String {
        Self.joined(base, home, room, accessory, service, "$ha")
    }

    /// `B/<home>/$actionsets/<action set>/$run`: runs an action set (add `/<account>`).
    package func runActionSet(home: String, actionSet: String) -> String {
        "\(base)/\(home)/$actionsets/\(actionSet)/$run"
    }

    /// `B/$response/<account>`: answers for clients that gave no MQTT v5 response topic.
    /// `B/$request/<account>/<operation>`: where `account` sends a request.
    package func request(_ operation: String, account: String) -> String { "\(base)/$request/\(account)/\(operation)" }

    package func response(account: String) -> String { "\(responseRoot)/\(account)" }
    /// `B/$response`: every account's answers live below it.
    var responseRoot: String { "\(base)/$response" }

    /// `levels` joined by `/`, the string allocated once at its length: the topics a value change
    /// publishes are built on every change, and interpolation grows its string level by level.
    private static func joined(_ levels: String...) -> String {
        var length = levels.count - 1
        for level in levels { length += level.utf8.count }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var offset = 0
            for (index, var level) in levels.enumerated() {
                if index > 0 {
                    buffer[offset] = UInt8(ascii: "/")
                    offset += 1
                }
                offset = level.withUTF8 { bytes in
                    UnsafeMutableBufferPointer(rebasing: buffer[offset...]).initialize(fromContentsOf: bytes) + offset
                }
            }
            return offset
        }
    }

    // MARK: Received by the gateway

    /// The command topics below a home's level, without the account level: the gateway subscribes
    /// to them under every home, and the access rules grant each member those of its homes.
    /// `+/+/+/+/set` (room, accessory, service, characteristic) also covers `<service>/$ha/set`.
    static let homeCommandPatterns = ["+/+/+/+/set", "+/+/$set", "+/+/$identify", "$actionsets/+/$run"]

    /// The filters the gateway subscribes to for commands and requests, with and without the account.
    package var commandFilters: [String] {
        Self.homeCommandPatterns.flatMap { ["\(base)/+/\($0)/+", "\(base)/+/\($0)"] } + ["\(base)/$request/+/+"]
    }

    /// Whether `topic` is one the gateway takes commands or requests on (well-formed or not).
    func isCommandTopic(_ topic: String) -> Bool {
        do {
            return try parse(topic) != nil
        } catch {
            return true
        }
    }

    /// Whether `topic` is a request topic (`B/$request/…`).
    func isRequestTopic(_ topic: String) -> Bool {
        let bytes = topic.utf8
        return bytes.starts(with: base.utf8) && bytes.dropFirst(base.utf8.count).starts(with: "/$request/".utf8)
    }

    /// Reads a topic the gateway received. Returns nil for topics that are not under the base topic
    /// or are not commands at all (the gateway's own publications); throws for a command topic that
    /// is malformed, with a message that says what is wrong.
    package func parse(_ topic: String) throws(TopicError) -> CommandTopic? {
        guard let levels = levels(below: topic) else { return nil }
        if levels.first == "$request" {
            guard levels.count == 3 else {
                throw TopicError("a request topic is \(base)/$request/<account>/<operation>")
            }
            try Self.checkLevel(levels[1], "account")
            try Self.checkLevel(levels[2], "operation")
            return .request(account: levels[1], operation: levels[2])
        }
        guard let home = levels.first, !home.hasPrefix("$") else { return nil }

        if levels.count >= 4, levels[1] == "$actionsets", levels[3] == "$run" {
            let account = try Self.account(levels, after: 4, topic: topic)
            try Self.checkLevel(home, "home")
            try Self.checkLevel(levels[2], "action set")
            return .runActionSet(home: home, actionSet: levels[2], account: account)
        }
        if levels.count >= 4, levels[3] == "$set" || levels[3] == "$identify" {
            let account = try Self.account(levels, after: 4, topic: topic)
            let path = AccessoryPath(home: home, room: levels[1], accessory: levels[2])
            try Self.check(path)
            return levels[3] == "$set" ? .setAccessory(path, account: account) : .identify(path, account: account)
        }
        if levels.count >= 6, levels[5] == "set" {
            let account = try Self.account(levels, after: 6, topic: topic)
            let path = AccessoryPath(home: home, room: levels[1], accessory: levels[2])
            try Self.check(path)
            try Self.checkLevel(levels[3], "service")
            if levels[4] == "$ha" { return .setHomeAssistant(path, service: levels[3], account: account) }
            try Self.checkLevel(levels[4], "characteristic")
            return .setCharacteristic(path, service: levels[3], characteristic: levels[4], account: account)
        }
        return nil
    }

    /// The levels of `topic` below the base topic, or nil for a topic not under it. Split at the `/`
    /// bytes, as a broker splits them: a `/` followed by a combining mark is one `Character`, but it
    /// still ends a level (and UTF-8 never hides an ASCII byte inside another character).
    private func levels(below topic: String) -> [String]? {
        // Every command passes here: one pass over the bytes (withUTF8 makes them contiguous).
        var topic = topic
        return topic.withUTF8 { bytes -> [String]? in
            let prefix = baseBytes.count
            guard bytes.count > prefix, bytes[prefix] == UInt8(ascii: "/"), bytes[..<prefix].elementsEqual(baseBytes)
            else { return nil }
            var levels: [String] = []
            levels.reserveCapacity(8)
            var start = prefix + 1
            for index in start..<bytes.count where bytes[index] == UInt8(ascii: "/") {
                levels.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                start = index + 1
            }
            levels.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
            return levels
        }
    }

    /// The account level after a command's keyword: absent (the default account applies) or one level.
    private static func account(_ levels: [String], after index: Int, topic: String) throws(TopicError) -> String? {
        switch levels.count - index {
        case 0: return nil
        case 1:
            try checkLevel(levels[index], "account")
            return levels[index]
        default: throw TopicError("'\(topic)' has \(levels.count - index - 1) level(s) too many after the account")
        }
    }

    private static func check(_ path: AccessoryPath) throws(TopicError) {
        try checkLevel(path.home, "home")
        try checkLevel(path.room, "room")
        try checkLevel(path.accessory, "accessory")
    }

    private static func checkLevel(_ level: String, _ what: String) throws(TopicError) {
        guard !level.isEmpty else { throw TopicError("the \(what) level is empty") }
        // On the bytes: every command's levels pass here. '+' and '#' are ASCII, and UTF-8 never
        // hides an ASCII byte inside another character.
        var isASCII = true
        for byte in level.utf8 {
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") {
                throw TopicError("the \(what) level '\(level)' contains an MQTT wildcard")
            }
            if byte < 0x20 || byte == 0x7F { throw TopicError("the \(what) level contains a control character") }
            if byte >= 0x80 { isASCII = false }
        }
        // Other control characters (U+0080...U+009F) only in text beyond ASCII
        guard isASCII || !level.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw TopicError("the \(what) level contains a control character")
        }
    }
}

/// A command or request read from its topic. `account` is nil when the topic had none (the
/// configured default account applies).
package enum CommandTopic: Sendable, Hashable {
    case setCharacteristic(AccessoryPath, service: String, characteristic: String, account: String?)
    case setAccessory(AccessoryPath, account: String?)
    /// Home Assistant's JSON light command on `B/<home>/<room>/<accessory>/<service>/$ha/set`.
    case setHomeAssistant(AccessoryPath, service: String, account: String?)
    case identify(AccessoryPath, account: String?)
    case runActionSet(home: String, actionSet: String, account: String?)
    case request(account: String, operation: String)

    /// The account the topic names, if any.
    package var account: String? {
        switch self {
        case .setCharacteristic(_, _, _, let account), .setAccessory(_, let account), .identify(_, let account),
            .runActionSet(_, _, let account), .setHomeAssistant(_, _, let account):
            account
        case .request(let account, _): account
        }
    }
}

/// A command topic that cannot be read, or a base topic that cannot be used, and why.
package struct TopicError: Error, CustomStringConvertible, Sendable, Hashable {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Checks a base topic from config or the command line: it becomes the first levels of every topic,
/// so it must be a valid MQTT topic with no wildcards and no empty level.
package enum BaseTopic {
    package static func validate(_ base: String) throws(TopicError) {
        guard !base.isEmpty else {
            throw TopicError("the base topic is empty; use e.g. 'homegate'")
        }
        guard !base.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) else {
            throw TopicError("the base topic '\(base)' contains an MQTT wildcard (+ or #) or NUL")
        }
        guard !base.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            throw TopicError(
                "the base topic '\(base)' has an empty level (leading, trailing or double '/')")
        }
        guard !base.hasPrefix("$") else {
            throw TopicError("the base topic '\(base)' starts with '$', which brokers reserve")
        }
    }
}
