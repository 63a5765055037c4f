/// A characteristic's type, named in PascalCase as HomeKit's `HMCharacteristicType…` constants are.
///
/// An open set: a driver may bring a type the model does not list and nothing breaks.
public struct CharacteristicType: RawRepresentable, Hashable, Sendable, Codable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public static let name: Self = "Name"
    public static let on: Self = "On"
    public static let brightness: Self = "Brightness"
    public static let hue: Self = "Hue"
    public static let saturation: Self = "Saturation"
    public static let colorTemperature: Self = "ColorTemperature"
    public static let outletInUse: Self = "OutletInUse"
    public static let currentTemperature: Self = "CurrentTemperature"
    public static let targetTemperature: Self = "TargetTemperature"
    public static let currentHeatingCoolingState: Self = "CurrentHeatingCoolingState"
    public static let targetHeatingCoolingState: Self = "TargetHeatingCoolingState"
    public static let temperatureDisplayUnits: Self = "TemperatureDisplayUnits"
    public static let lockCurrentState: Self = "LockCurrentState"
    public static let lockTargetState: Self = "LockTargetState"
    public static let currentDoorState: Self = "CurrentDoorState"
    public static let targetDoorState: Self = "TargetDoorState"
    public static let obstructionDetected: Self = "ObstructionDetected"
    public static let currentPosition: Self = "CurrentPosition"
    public static let targetPosition: Self = "TargetPosition"
    public static let positionState: Self = "PositionState"
    public static let rotationSpeed: Self = "RotationSpeed"
    public static let rotationDirection: Self = "RotationDirection"
    public static let currentRelativeHumidity: Self = "CurrentRelativeHumidity"
    public static let motionDetected: Self = "MotionDetected"
    public static let contactSensorState: Self = "ContactSensorState"
    public static let leakDetected: Self = "LeakDetected"
    public static let smokeDetected: Self = "SmokeDetected"
    public static let batteryLevel: Self = "BatteryLevel"
    public static let chargingState: Self = "ChargingState"
    public static let statusLowBattery: Self = "StatusLowBattery"
    public static let identify: Self = "Identify"
    public static let holdPosition: Self = "HoldPosition"
    public static let currentHorizontalTiltAngle: Self = "CurrentHorizontalTiltAngle"
    public static let targetHorizontalTiltAngle: Self = "TargetHorizontalTiltAngle"
    public static let currentAmbientLightLevel: Self = "CurrentAmbientLightLevel"
    public static let occupancyDetected: Self = "OccupancyDetected"
    /// Not HAP's (HAP has no air pressure); Eve's, in hPa.
    public static let airPressure: Self = "AirPressure"
}

/// A service's type (Lightbulb, Thermostat, ...). An open set, like ``CharacteristicType``.
public struct ServiceType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public static let lightbulb: Self = "Lightbulb"
    public static let `switch`: Self = "Switch"
    public static let outlet: Self = "Outlet"
    public static let thermostat: Self = "Thermostat"
    public static let lockMechanism: Self = "LockMechanism"
    public static let garageDoorOpener: Self = "GarageDoorOpener"
    public static let windowCovering: Self = "WindowCovering"
    public static let fan: Self = "Fan"
    public static let temperatureSensor: Self = "TemperatureSensor"
    public static let humiditySensor: Self = "HumiditySensor"
    public static let motionSensor: Self = "MotionSensor"
    public static let contactSensor: Self = "ContactSensor"
    public static let leakSensor: Self = "LeakSensor"
    public static let smokeSensor: Self = "SmokeSensor"
    public static let battery: Self = "Battery"
    public static let lightSensor: Self = "LightSensor"
    public static let occupancySensor: Self = "OccupancySensor"
    /// Not HAP's; named as Eve names its weather sensor's service.
    public static let airPressureSensor: Self = "AirPressureSensor"
}

/// The unit of a numeric characteristic. An open set.
public struct CharacteristicUnit: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let celsius = Self(rawValue: "celsius")
    public static let percentage = Self(rawValue: "percentage")
    public static let arcDegrees = Self(rawValue: "arcdegrees")
    public static let lux = Self(rawValue: "lux")
    public static let seconds = Self(rawValue: "seconds")
}

/// The wire format of a characteristic's value. An open set; an unknown format is not validated.
public struct CharacteristicFormat: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let bool = Self(rawValue: "bool")
    public static let int = Self(rawValue: "int")
    public static let uint8 = Self(rawValue: "uint8")
    public static let uint16 = Self(rawValue: "uint16")
    public static let uint32 = Self(rawValue: "uint32")
    public static let uint64 = Self(rawValue: "uint64")
    public static let float = Self(rawValue: "float")
    public static let string = Self(rawValue: "string")
    public static let data = Self(rawValue: "data")
    public static let tlv8 = Self(rawValue: "tlv8")

    /// The range an integer format can hold, or `nil` for a non-integer format.
    var integerRange: ClosedRange<Int>? {
        switch self {
        case .int: Int(Int32.min)...Int(Int32.max)
        case .uint8: 0...Int(UInt8.max)
        case .uint16: 0...Int(UInt16.max)
        case .uint32: 0...Int(UInt32.max)
        case .uint64: 0...Int.max
        default: nil
        }
    }
}

/// What may be done with a characteristic.
public struct CharacteristicPermissions: OptionSet, Hashable, Sendable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let read = Self(rawValue: 1 << 0)
    public static let write = Self(rawValue: 1 << 1)
    public static let notify = Self(rawValue: 1 << 2)
    public static let hidden = Self(rawValue: 1 << 3)

    /// The permissions as words (`read`, `write`, `notify`, `hidden`), for layouts and config.
    public var names: [String] {
        [(Self.read, "read"), (.write, "write"), (.notify, "notify"), (.hidden, "hidden")]
            .filter { contains($0.0) }.map(\.1)
    }

    /// Parses the words ``names`` produces; `nil` if one is unknown.
    public init?(names: [String]) {
        var permissions: Self = []
        for name in names {
            switch name {
            case "read": permissions.insert(.read)
            case "write": permissions.insert(.write)
            case "notify": permissions.insert(.notify)
            case "hidden": permissions.insert(.hidden)
            default: return nil
            }
        }
        self = permissions
    }
}

/// What kind of device an accessory is, for icons and Home Assistant components. An open set.
public struct AccessoryCategory: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let other = Self(rawValue: "other")
    public static let bridge = Self(rawValue: "bridge")
    public static let lightbulb = Self(rawValue: "lightbulb")
    public static let `switch` = Self(rawValue: "switch")
    public static let outlet = Self(rawValue: "outlet")
    public static let thermostat = Self(rawValue: "thermostat")
    public static let doorLock = Self(rawValue: "doorLock")
    public static let garageDoorOpener = Self(rawValue: "garageDoorOpener")
    public static let windowCovering = Self(rawValue: "windowCovering")
    public static let fan = Self(rawValue: "fan")
    public static let sensor = Self(rawValue: "sensor")
}
