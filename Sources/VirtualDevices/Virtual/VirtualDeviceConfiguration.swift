import HomeModel

/// The kinds of device the virtual driver can simulate.
package enum VirtualDeviceKind: String, Sendable, Hashable, Codable, CaseIterable {
    case lightbulb, `switch`, outlet, thermostat, lock, garageDoor, windowCovering, fan
    case temperatureSensor, humiditySensor, motionSensor, contactSensor
    /// A bridge: an accessory standing in for the devices listed under `bridged`.
    case bridge
}

/// One simulated device as the demo home's YAML declares it.
package struct VirtualDeviceConfiguration: Sendable, Hashable, Decodable {
    /// The accessory id the browser shows; stable across restarts.
    package var id: String
    package var name: String
    package var kind: VirtualDeviceKind
    package var manufacturer: String
    package var model: String
    /// How long the device takes to confirm a write.
    package var writeDelay: Duration
    /// The share of reads and writes (0...1) that fail with `communicationFailure`.
    package var failureRate: Double
    package var isReachable: Bool
    /// The battery level in percent when the device has a battery; it drains over time.
    package var battery: Int?
    /// How long a lock, a garage door or a state change takes to complete.
    package var transitionTime: Duration
    /// A lock that is jammed never reaches its target state (it reports jammed).
    var isJammed: Bool
    /// A garage door that is obstructed stops while closing.
    var isObstructed: Bool
    /// The devices behind a bridge.
    package var bridged: [VirtualDeviceConfiguration]

    package init(
        id: String, name: String, kind: VirtualDeviceKind, manufacturer: String = "homegate",
        model: String? = nil, writeDelay: Duration = .zero, failureRate: Double = 0, isReachable: Bool = true,
        battery: Int? = nil, transitionTime: Duration = .seconds(2), isJammed: Bool = false,
        isObstructed: Bool = false, bridged: [VirtualDeviceConfiguration] = []
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.manufacturer = manufacturer
        self.model = model ?? "Virtual \(kind.rawValue)"
        self.writeDelay = writeDelay
        self.failureRate = failureRate
        self.isReachable = isReachable
        self.battery = battery
        self.transitionTime = transitionTime
        self.isJammed = isJammed
        self.isObstructed = isObstructed
        self.bridged = bridged
    }

    /// The longest `writeDelay` or `transitionTime` the YAML form accepts, in seconds (a `Duration`
    /// traps beyond its range).
    static let longestDuration = 3_600.0

    private enum CodingKeys: String, CodingKey {
        case id, name, kind, manufacturer, model, writeDelay, failureRate, reachable, battery, transitionTime
        case jammed, obstructed, bridged
    }

    /// Reads the YAML form, each absent field at its default; durations are in seconds (`writeDelay: 0.5`).
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        for key in [CodingKeys.writeDelay, .transitionTime] {
            guard let seconds = try c.decodeIfPresent(Double.self, forKey: key),
                !(0...Self.longestDuration).contains(seconds)
            else { continue }
            throw DecodingError.dataCorruptedError(
                forKey: key, in: c,
                debugDescription: "\(key.stringValue) must be between 0 and \(Int(Self.longestDuration)) seconds")
        }
        self.init(
            id: try c.decode(String.self, forKey: .id),
            name: try c.decode(String.self, forKey: .name),
            kind: try c.decode(VirtualDeviceKind.self, forKey: .kind),
            manufacturer: try c.decodeIfPresent(String.self, forKey: .manufacturer) ?? "homegate",
            model: try c.decodeIfPresent(String.self, forKey: .model),
            writeDelay: .seconds(try c.decodeIfPresent(Double.self, forKey: .writeDelay) ?? 0),
            failureRate: try c.decodeIfPresent(Double.self, forKey: .failureRate) ?? 0,
            isReachable: try c.decodeIfPresent(Bool.self, forKey: .reachable) ?? true,
            battery: try c.decodeIfPresent(Int.self, forKey: .battery),
            transitionTime: .seconds(try c.decodeIfPresent(Double.self, forKey: .transitionTime) ?? 2),
            isJammed: try c.decodeIfPresent(Bool.self, forKey: .jammed) ?? false,
            isObstructed: try c.decodeIfPresent(Bool.self, forKey: .obstructed) ?? false,
            bridged: try c.decodeIfPresent([VirtualDeviceConfiguration].self, forKey: .bridged) ?? []
        )
        guard (0...1).contains(failureRate) else {
            throw DecodingError.dataCorruptedError(
                forKey: .failureRate, in: c, debugDescription: "failureRate must be between 0 and 1")
        }
    }
}
