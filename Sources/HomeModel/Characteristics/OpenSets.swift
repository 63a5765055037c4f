/// A characteristic's type, named in PascalCase as HomeKit's `HMCharacteristicType…` constants are.
///
/// An open set: a driver may bring a type the model does not list and nothing breaks.
package struct CharacteristicType: RawRepresentable, Hashable, Sendable, Codable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }
    package var description: String { rawValue }
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    package static let name: Self = "Name"
    package static let on: Self = "On"
    package static let brightness: Self = "Brightness"
    package static let hue: Self = "Hue"
    package static let saturation: Self = "Saturation"
    package static let colorTemperature: Self = "ColorTemperature"
    package static let outletInUse: Self = "OutletInUse"
    package static let currentTemperature: Self = "CurrentTemperature"
    package static let targetTemperature: Self = "TargetTemperature"
    package static let currentHeatingCoolingState: Self = "CurrentHeatingCoolingState"
    package static let targetHeatingCoolingState: Self = "TargetHeatingCoolingState"
    package static let temperatureDisplayUnits: Self = "TemperatureDisplayUnits"
    package static let lockCurrentState: Self = "LockCurrentState"
    package static let lockTargetState: Self = "LockTargetState"
    package static let currentDoorState: Self = "CurrentDoorState"
    package static let targetDoorState: Self = "TargetDoorState"
    package static let obstructionDetected: Self = "ObstructionDetected"
    package static let currentPosition: Self = "CurrentPosition"
    package static let targetPosition: Self = "TargetPosition"
    package static let positionState: Self = "PositionState"
    package static let rotationSpeed: Self = "RotationSpeed"
    package static let rotationDirection: Self = "RotationDirection"
    package static let currentRelativeHumidity: Self = "CurrentRelativeHumidity"
    package static let motionDetected: Self = "MotionDetected"
    package static let contactSensorState: Self = "ContactSensorState"
    package static let leakDetected: Self = "LeakDetected"
    package static let smokeDetected: Self = "SmokeDetected"
    package static let batteryLevel: Self = "BatteryLevel"
    package static let chargingState: Self = "ChargingState"
    package static let statusLowBattery: Self = "StatusLowBattery"
    package static let identify: Self = "Identify"
    package static let holdPosition: Self = "HoldPosition"
    package static let currentHorizontalTiltAngle: Self = "CurrentHorizontalTiltAngle"
    package static let targetHorizontalTiltAngle: Self = "TargetHorizontalTiltAngle"
    package static let currentAmbientLightLevel: Self = "CurrentAmbientLightLevel"
    package static let occupancyDetected: Self = "OccupancyDetected"
    /// Not HAP's (HAP has no air pressure); Eve's, in hPa.
    package static let airPressure: Self = "AirPressure"
    /// Whether the device's case was opened or it was taken off its mount (0 no, 1 yes).
    package static let statusTampered: Self = "StatusTampered"
    /// Whether the device's own buttons are locked (a child lock): 0 no, 1 yes.
    package static let lockPhysicalControls: Self = "LockPhysicalControls"
    /// Not HAP's (HAP has no presets): a device's preset mode by its own word (a radiator valve's
    /// `manual`, `schedule`, `boost`, `eco`), one of the metadata's `validStrings`.
    package static let preset: Self = "Preset"
    /// Not HAP's (HAP has no power reading); Eve's, in W.
    package static let currentConsumption: Self = "CurrentConsumption"
    /// Not HAP's; Eve's, in kWh since the meter was last reset.
    package static let totalConsumption: Self = "TotalConsumption"
    /// A button's press: 0 single, 1 double, 2 long. An event (``isEvent``).
    package static let programmableSwitchEvent: Self = "ProgrammableSwitchEvent"
    /// Which of an accessory's buttons a service is (1, 2, ...), in the order of ``serviceLabelNamespace``.
    package static let serviceLabelIndex: Self = "ServiceLabelIndex"
    /// How the buttons are labelled on the device: 0 dots, 1 Arabic numerals.
    package static let serviceLabelNamespace: Self = "ServiceLabelNamespace"

    /// Whether a value of this type is something that happened (a button press), not a state: the
    /// model keeps no value for it, so it is neither stored nor retained, and every report is
    /// passed on, also the same press twice.
    package var isEvent: Bool { self == .programmableSwitchEvent }
}

/// A service's type (Lightbulb, Thermostat, ...). An open set, like ``CharacteristicType``.
package struct ServiceType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }
    package var description: String { rawValue }

    package static let lightbulb: Self = "Lightbulb"
    package static let `switch`: Self = "Switch"
    package static let outlet: Self = "Outlet"
    package static let thermostat: Self = "Thermostat"
    package static let lockMechanism: Self = "LockMechanism"
    package static let garageDoorOpener: Self = "GarageDoorOpener"
    package static let windowCovering: Self = "WindowCovering"
    package static let fan: Self = "Fan"
    package static let temperatureSensor: Self = "TemperatureSensor"
    package static let humiditySensor: Self = "HumiditySensor"
    package static let motionSensor: Self = "MotionSensor"
    package static let contactSensor: Self = "ContactSensor"
    package static let leakSensor: Self = "LeakSensor"
    package static let smokeSensor: Self = "SmokeSensor"
    package static let battery: Self = "Battery"
    package static let lightSensor: Self = "LightSensor"
    package static let occupancySensor: Self = "OccupancySensor"
    /// Not HAP's; named as Eve names its weather sensor's service.
    package static let airPressureSensor: Self = "AirPressureSensor"
    /// A button: its presses are events (``CharacteristicType/programmableSwitchEvent``).
    package static let statelessProgrammableSwitch: Self = "StatelessProgrammableSwitch"
    /// Says how an accessory's several buttons are labelled (``CharacteristicType/serviceLabelNamespace``).
    package static let serviceLabel: Self = "ServiceLabel"
}

/// The unit of a numeric characteristic. An open set.
package struct CharacteristicUnit: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    package static let celsius = Self(rawValue: "celsius")
    package static let percentage = Self(rawValue: "percentage")
    package static let arcDegrees = Self(rawValue: "arcdegrees")
    package static let lux = Self(rawValue: "lux")
    package static let seconds = Self(rawValue: "seconds")
}

/// The wire format of a characteristic's value. An open set; an unknown format is not validated.
package struct CharacteristicFormat: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    package static let bool = Self(rawValue: "bool")
    package static let int = Self(rawValue: "int")
    package static let uint8 = Self(rawValue: "uint8")
    static let uint16 = Self(rawValue: "uint16")
    package static let uint32 = Self(rawValue: "uint32")
    static let uint64 = Self(rawValue: "uint64")
    package static let float = Self(rawValue: "float")
    package static let string = Self(rawValue: "string")
    package static let data = Self(rawValue: "data")
    package static let tlv8 = Self(rawValue: "tlv8")

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
package struct CharacteristicPermissions: OptionSet, Hashable, Sendable, Codable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    package static let read = Self(rawValue: 1 << 0)
    package static let write = Self(rawValue: 1 << 1)
    package static let notify = Self(rawValue: 1 << 2)
    package static let hidden = Self(rawValue: 1 << 3)

    /// The permissions as words (`read`, `write`, `notify`, `hidden`), for layouts and config.
    package var names: [String] {
        [(Self.read, "read"), (.write, "write"), (.notify, "notify"), (.hidden, "hidden")]
            .filter { contains($0.0) }.map(\.1)
    }
}

/// What kind of device an accessory is, for icons and Home Assistant components. An open set.
package struct AccessoryCategory: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    package static let other = Self(rawValue: "other")
    package static let bridge = Self(rawValue: "bridge")
    package static let lightbulb = Self(rawValue: "lightbulb")
    package static let `switch` = Self(rawValue: "switch")
    package static let outlet = Self(rawValue: "outlet")
    package static let thermostat = Self(rawValue: "thermostat")
    package static let doorLock = Self(rawValue: "doorLock")
    package static let garageDoorOpener = Self(rawValue: "garageDoorOpener")
    package static let windowCovering = Self(rawValue: "windowCovering")
    package static let fan = Self(rawValue: "fan")
    package static let sensor = Self(rawValue: "sensor")
    /// A remote or a wall button: presses, no state.
    package static let programmableSwitch = Self(rawValue: "programmableSwitch")
}
