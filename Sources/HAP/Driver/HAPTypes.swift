import HomeModel

/// HAP's type UUIDs and the model's type names. Apple's types are written short ("25") or in full
/// ("00000025-0000-1000-8000-0026BB765291"); both are read, in any case. A type not in the table is
/// kept as a custom type named by its full UUID, so it survives and goes back to the device as is.
enum HAPTypes {
    static let appleSuffix = "-0000-1000-8000-0026BB765291"

    static let services: [String: String] = [
        "3E": "AccessoryInformation", "A2": "ProtocolInformation", "43": "Lightbulb", "49": "Switch",
        "47": "Outlet", "8A": "TemperatureSensor", "82": "HumiditySensor", "4A": "Thermostat",
        "85": "MotionSensor", "80": "ContactSensor", "45": "LockMechanism", "41": "GarageDoorOpener",
        "8C": "WindowCovering", "40": "Fan", "B7": "Fanv2", "96": "Battery", "84": "LightSensor",
        "86": "OccupancySensor", "83": "LeakSensor", "87": "SmokeSensor", "7F": "CarbonMonoxideSensor",
        "8D": "AirQualitySensor", "89": "StatelessProgrammableSwitch", "7E": "SecuritySystem",
        "BC": "HeaterCooler", "BD": "HumidifierDehumidifier", "D0": "Valve", "CF": "IrrigationSystem",
        "121": "Doorbell", "CC": "ServiceLabel",
    ]

    static let characteristics: [String: String] = [
        "14": "Identify", "20": "Manufacturer", "21": "Model", "23": "Name", "30": "SerialNumber",
        "52": "FirmwareRevision", "53": "HardwareRevision", "37": "Version", "25": "On", "8": "Brightness",
        "13": "Hue", "2F": "Saturation", "CE": "ColorTemperature", "26": "OutletInUse",
        "11": "CurrentTemperature", "10": "CurrentRelativeHumidity", "35": "TargetTemperature",
        "F": "CurrentHeatingCoolingState", "33": "TargetHeatingCoolingState", "36": "TemperatureDisplayUnits",
        "22": "MotionDetected", "6A": "ContactSensorState", "1D": "LockCurrentState", "1E": "LockTargetState",
        "E": "CurrentDoorState", "32": "TargetDoorState", "24": "ObstructionDetected", "6D": "CurrentPosition",
        "7C": "TargetPosition", "72": "PositionState", "29": "RotationSpeed", "68": "BatteryLevel",
        "8F": "ChargingState", "79": "StatusLowBattery", "6B": "CurrentAmbientLightLevel",
        "71": "OccupancyDetected", "70": "LeakDetected", "76": "SmokeDetected", "75": "StatusActive",
        "77": "StatusFault", "73": "ProgrammableSwitchEvent", "B0": "Active", "7A": "StatusTampered",
        "A7": "LockPhysicalControls", "CB": "ServiceLabelIndex", "CD": "ServiceLabelNamespace",
    ]

    /// The short form of an Apple type ("25"), or nil for another vendor's UUID.
    static func short(_ text: String) -> String? {
        let upper = text.uppercased()
        if !upper.contains("-") {
            let trimmed = upper.drop { $0 == "0" }
            return trimmed.isEmpty ? "0" : String(trimmed)
        }
        guard upper.hasSuffix(appleSuffix), upper.count == 36 else { return nil }
        let head = upper.prefix(8).drop { $0 == "0" }
        return head.isEmpty ? "0" : String(head)
    }

    /// The full uppercase UUID of a type.
    static func full(_ text: String) -> String {
        let upper = text.uppercased()
        guard !upper.contains("-") else { return upper }
        return String(repeating: "0", count: max(0, 8 - upper.count)) + upper + appleSuffix
    }

    static func service(_ text: String) -> ServiceType {
        ServiceType(rawValue: short(text).flatMap { services[$0] } ?? full(text))
    }

    static func characteristic(_ text: String) -> CharacteristicType {
        CharacteristicType(rawValue: short(text).flatMap { characteristics[$0] } ?? full(text))
    }

    /// The accessory's category from its main service.
    static func category(of services: [Service]) -> AccessoryCategory {
        for service in services {
            switch service.type {
            case .lightbulb: return .lightbulb
            case .switch: return .switch
            case .outlet: return .outlet
            case .thermostat: return .thermostat
            case .lockMechanism: return .doorLock
            case .garageDoorOpener: return .garageDoorOpener
            case .temperatureSensor, .humiditySensor, .motionSensor, .contactSensor, .lightSensor, .leakSensor,
                .smokeSensor, .occupancySensor:
                return AccessoryCategory(rawValue: "sensor")
            default: continue
            }
        }
        return .other
    }
}
