/// zigbee2mqtt's topics under its base topic, and which of them a received topic is.
struct Zigbee2MQTTTopics: Sendable {
    let base: String

    var all: String { "\(base)/#" }
    var permitJoinRequest: String { "\(base)/bridge/request/permit_join" }
    func set(_ friendlyName: String) -> String { "\(base)/\(friendlyName)/set" }
    func get(_ friendlyName: String) -> String { "\(base)/\(friendlyName)/get" }

    enum Route: Equatable {
        case devices, groups, bridgeState, event, logging, permitJoinResponse
        /// `<base>/<friendly_name>`: a device's state (friendly names may contain `/`).
        case device(String)
        case availability(String)
    }

    /// What `topic` is, or nil for one the driver does not follow (its own `/set` and `/get`, groups'
    /// and other bridge topics are resolved by the caller's device lookup).
    func route(_ topic: String) -> Route? {
        let prefix = base.utf8.count + 1
        guard topic.utf8.starts(with: base.utf8), topic.utf8.dropFirst(prefix - 1).first == UInt8(ascii: "/") else {
            return nil
        }
        let rest = String(Substring(topic.utf8.dropFirst(prefix)))
        switch rest {
        case "bridge/devices": return .devices
        case "bridge/groups": return .groups
        case "bridge/state": return .bridgeState
        case "bridge/event": return .event
        case "bridge/logging": return .logging
        case "bridge/response/permit_join": return .permitJoinResponse
        default: break
        }
        if rest.utf8.starts(with: "bridge/".utf8) || Self.hasCommandLevel(rest) { return nil }
        if rest.utf8.count >= Self.availability.count, rest.utf8.reversed().starts(with: Self.availability.reversed()) {
            return .availability(String(Substring(rest.utf8.dropLast(Self.availability.count))))
        }
        return .device(rest)
    }

    private static let availability = Array("/availability".utf8)

    /// Whether a level after the first is `set` or `get`: the driver's own commands to a device
    /// (`<name>/set`, `<name>/set/<attribute>`), which it does not read back. Compared byte by byte:
    /// `String.contains` of a substring cost more than the rest of taking a state publish.
    private static func hasCommandLevel(_ rest: String) -> Bool {
        let utf8 = rest.utf8
        var levelStart = utf8.startIndex
        var isFirst = true
        var index = utf8.startIndex
        while true {
            let atEnd = index == utf8.endIndex
            if atEnd || utf8[index] == UInt8(ascii: "/") {
                let level = utf8[levelStart..<index]
                if !isFirst, level.elementsEqual("set".utf8) || level.elementsEqual("get".utf8) { return true }
                if atEnd { return false }
                isFirst = false
                levelStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
    }
}
