import JSON

/// One entry of a zigbee2mqtt device's `exposes`: what the device offers, as zigbee2mqtt describes
/// it in `bridge/devices` (a generic `numeric`/`binary`/`enum`/`text`/`composite`/`list`, or a
/// specific `light`/`switch`/`cover`/`lock`/`climate`/`fan` with its `features`).
package struct Expose: Sendable, Hashable {
    /// What the device does with the property, from zigbee2mqtt's `access` bits.
    package struct Access: OptionSet, Sendable, Hashable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Bit 1: the property appears in the device's state publishes.
        package static let published = Access(rawValue: 1)
        /// Bit 2: the property can be set with `<device>/set`.
        static let settable = Access(rawValue: 2)
        /// Bit 4: the property can be asked for with `<device>/get`.
        static let gettable = Access(rawValue: 4)
    }

    package var type: String
    package var name: String?
    /// The key in the state payload and in `/set` (`state_l1` for an endpoint's state).
    package var property: String?
    var endpoint: String?
    package var access: Access
    package var unit: String?
    var valueMin: Double?
    var valueMax: Double?
    var valueStep: Double?
    /// An enum's values (strings in every exposes seen; kept as JSON in case one is not).
    package var values: [JSON]
    /// A binary's values for on and off, e.g. `"ON"`/`"OFF"`, `true`/`false`, or inverted for `contact`.
    var valueOn: JSON?
    var valueOff: JSON?
    package var features: [Expose]

    /// Reads one expose; nil when `json` is not an object with a string `type`.
    package init?(_ json: JSON, depth: Int = 0) {
        guard case .object = json, let type = json["type"]?.stringValue, depth < 8 else { return nil }
        self.type = type
        name = json["name"]?.stringValue
        property = json["property"]?.stringValue
        endpoint = json["endpoint"]?.stringValue
        access = Access(rawValue: json["access"]?.integerValue ?? 0)
        unit = json["unit"]?.stringValue
        valueMin = json["value_min"]?.numberValue
        valueMax = json["value_max"]?.numberValue
        valueStep = json["value_step"]?.numberValue
        values = json["values"]?.arrayValue ?? []
        valueOn = json["value_on"]
        valueOff = json["value_off"]
        features = (json["features"]?.arrayValue ?? []).compactMap { Expose($0, depth: depth + 1) }
        // A composite without access bits of its own (zigbee2mqtt's documentation shows such
        // `color_xy`) can do what its features can.
        if json["access"] == nil, !features.isEmpty {
            access = features.reduce(into: Access()) { $0.formUnion($1.access) }
        }
    }

    /// The feature named `name`, searched one level down.
    func feature(_ name: String) -> Expose? { features.first { $0.name == name } }

    /// How the expose is named in logs and in `$discovered`'s list of what is not mapped:
    /// its property, else its name, else its type (with the endpoint, if any).
    var displayName: String {
        let base = property ?? name ?? type
        if property == nil, let endpoint { return "\(base)_\(endpoint)" }
        return base
    }

    /// The enum's values that are strings.
    var stringValues: [String] { values.compactMap(\.stringValue) }
}
