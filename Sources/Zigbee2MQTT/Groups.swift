import JSON
import OrderedCollections

/// One group of zigbee2mqtt's retained `bridge/groups`: the lights of a room switched as one.
/// zigbee2mqtt sends a group's `/set` to all its members in one Zigbee group command, and publishes
/// the group's state at `<base>/<group>` (and its availability, when that is on) as it does a device's.
struct GroupDescription: Sendable, Hashable, ListEntry {
    var id: Int
    var friendlyName: String
    /// The members' IEEE addresses, in the group's order (a device in it twice, on two endpoints, once).
    var members: [String]

    /// Reads one entry of `bridge/groups`; throws a ``Zigbee2MQTTPayloadError`` naming what is missing.
    init(_ json: JSON) throws(Zigbee2MQTTPayloadError) {
        guard case .object = json else { throw .init("a group entry is not an object") }
        guard let id = json["id"]?.integerValue else { throw .init("a group entry has no numeric id") }
        guard let friendlyName = json["friendly_name"]?.stringValue, !friendlyName.isEmpty else {
            throw .init("the group \(id) has no friendly_name")
        }
        self.id = id
        self.friendlyName = friendlyName
        members = Array(OrderedSet((json["members"]?.arrayValue ?? []).compactMap { $0["ieee_address"]?.stringValue }))
    }

    static let listTopic = "bridge/groups"

    /// The accessory id of the group: `group:<id>`, which no IEEE address can be.
    var accessoryKey: String { "group:\(id)" }

    /// The kinds a group can be: what a Zigbee group command reaches (zigbee2mqtt's Home Assistant
    /// discovery offers groups of the same kinds).
    static let kinds: Set<String> = ["light", "switch", "cover", "lock"]

    /// The group as a device for ``ExposeMapping``: of each kind its members have, one expose with
    /// every feature any member has (the first member's, by name, as zigbee2mqtt's own discovery
    /// merges a group), named by its plain property: a group's state and `/set` carry `state`, not
    /// an endpoint's `state_l1`. Nil when no member has a light, switch, cover or lock: a group of
    /// sensors, or one whose members are unknown, is no accessory.
    func asDevice(members known: [DeviceDescription]) -> DeviceDescription? {
        var merged: [Expose] = []
        for member in known {
            for expose in member.exposes where Self.kinds.contains(expose.type) {
                let plain = Self.withoutEndpoint(expose)
                if let index = merged.firstIndex(where: { $0.type == plain.type }) {
                    for feature in plain.features
                    where !merged[index].features.contains(where: { $0.name == feature.name }) {
                        merged[index].features.append(feature)
                    }
                } else {
                    merged.append(plain)
                }
            }
        }
        guard !merged.isEmpty else { return nil }
        // What kind of switch the group is comes from what its members are, never from their names.
        let switches = known.filter { member in member.exposes.contains { $0.type == "switch" } }
        // A group as zigbee2mqtt's devices are described: `type` `Group`, made by zigbee2mqtt.
        return DeviceDescription(
            ieeeAddress: accessoryKey, friendlyName: friendlyName, type: "Group", interviewCompleted: true,
            disabled: false, vendor: "zigbee2mqtt", model: "Group",
            description: "Group of \(known.map(\.friendlyName).joined(separator: ", "))", exposes: merged,
            isOutlet: !switches.isEmpty && switches.allSatisfy(\.isOutlet), malformedExposes: 0)
    }

    /// `expose` and its features without their endpoint: `state_l1` becomes `state`.
    static func withoutEndpoint(_ expose: Expose) -> Expose {
        var plain = expose
        if let endpoint = expose.endpoint, let property = expose.property, property.hasSuffix("_\(endpoint)") {
            plain.property = String(property.dropLast(endpoint.count + 1))
        }
        plain.endpoint = nil
        plain.features = expose.features.map { feature in
            var feature = feature
            if feature.endpoint == nil { feature.endpoint = expose.endpoint }
            return withoutEndpoint(feature)
        }
        return plain
    }
}
