/// zigbee2mqtt's topics under its base topic, and which of them a received topic is.
struct Zigbee2MQTTTopics: Sendable {
    let base: String

    var all: String { "\(base)/#" }
    var permitJoinRequest: String { "\(base)/bridge/request/permit_join" }
    func set(_ friendlyName: String) -> String { "\(base)/\(friendlyName)/set" }
    func get(_ friendlyName: String) -> String { "\(base)/\(friendlyName)/get" }

    enum Route: Equatable {
        case devices, bridgeState, event, logging, permitJoinResponse
        /// `<base>/<friendly_name>`: a device's state (friendly names may contain `/`).
        case device(String)
        case availability(String)
    }

    /// What `topic` is, or nil for one the driver does not follow (its own `/set` and `/get`, groups'
    /// and other bridge topics are resolved by the caller's device lookup).
    func route(_ topic: String) -> Route? {
        guard topic.hasPrefix(base + "/") else { return nil }
        let rest = String(topic.dropFirst(base.count + 1))
        switch rest {
        case "bridge/devices": return .devices
        case "bridge/state": return .bridgeState
        case "bridge/event": return .event
        case "bridge/logging": return .logging
        case "bridge/response/permit_join": return .permitJoinResponse
        default: break
        }
        if rest.hasPrefix("bridge/") || rest.hasSuffix("/set") || rest.hasSuffix("/get") || rest.contains("/set/")
            || rest.contains("/get/")
        {
            return nil
        }
        if rest.hasSuffix("/availability") { return .availability(String(rest.dropLast("/availability".count))) }
        return .device(rest)
    }
}
