import Foundation
import HomeModel
import JSON

/// A service's state in Home Assistant's vocabulary (`ON`/`OFF`, `LOCKING`, `heat`, `opening`,
/// brightness 0–255, colour temperature in kelvin), published retained as JSON on
/// `B/<home>/<room>/<accessory>/<service>/$ha`. Home Assistant reads each field with a
/// `{{ value_json.<field> }}` template; a light (JSON schema) reads the object as it is.
///
/// Every field an entity reads is there as soon as the service has its characteristic: `null`
/// while the value is not known, which the template renders as `None`, Home Assistant's word for
/// "unknown" (a missing field is a template warning in its log). A light names its colour mode
/// only with the colour that mode needs.
///
/// Some states exist only as a combination of characteristics (a lock is `LOCKING` while its
/// current state differs from its target), so they are computed here rather than left to templates.
enum HomeAssistantState {
    /// The JSON object for `service`, or nil when Home Assistant gets nothing from this service.
    static func state(of service: Service) -> JSON? {
        guard let (required, kind) = HomeAssistantEntities.mapping(of: service) else { return nil }
        let values = Values(service: service)
        let members: [(key: String, value: JSON)]
        switch kind {
        case .light: members = light(values)
        case .switch, .outlet:
            members =
                [("state", onOff(values.bool(.on)))] + values.field("in_use", .outletInUse) { $0.boolValue.map(onOff) }
                + values.number("power", .currentConsumption)
                + values.number("energy", .totalConsumption)
        case .fan:
            members =
                [("state", onOff(values.bool(.on)))]
                + values.field("percentage", .rotationSpeed) { $0.doubleValue.map { .integer(Int($0.rounded())) } }
                + values.field("direction", .rotationDirection) {
                    $0.intValue.map { .string($0 == 1 ? "reverse" : "forward") }
                }
        case .climate: members = climate(values)
        case .lock: members = [("state", lockState(values))]
        case .garageDoor:
            members =
                [("state", garageDoorState(values))]
                + values.field("obstruction", .obstructionDetected) { $0.boolValue.map(onOff) }
        case .covering: members = covering(values)
        case .sensor(let field, _, _): members = values.number(field, required)
        // On when the reading is true or not 0: ContactSensorState 0 is "contact detected", the door closed.
        case .binarySensor:
            members = [("state", onOff(values.value(required).flatMap { $0.boolValue ?? $0.intValue.map { $0 != 0 } }))]
        case .battery:
            members =
                values.field("level", .batteryLevel) { $0.intValue.map { .integer($0) } }
                + values.field("low", .statusLowBattery) { $0.intValue.map { onOff($0 != 0) } }
                + values.field("charging", .chargingState) { $0.intValue.map { onOff($0 == 1) } }
        }
        return .object(members)
    }

    // MARK: Components

    private static func light(_ values: Values) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = [("state", onOff(values.bool(.on)))]
        if let brightness = values.double(.brightness) {
            members.append(("brightness", .integer(LightScale.brightnessToHomeAssistant(brightness))))
        }
        let hue = values.double(.hue)
        let saturation = values.double(.saturation)
        let mireds = values.double(.colorTemperature)
        let modes = LightScale.supportedColorModes(of: values.service)
        let mode = LightScale.colorMode(supported: modes, saturation: saturation)
        // Home Assistant takes a colour mode only with its colour: `hs` with `color`, `color_temp`
        // with `color_temp`; the other modes need none.
        let hasColor: Bool =
            switch mode {
            case "hs": hue != nil && saturation != nil
            case "color_temp": mireds != nil
            default: true
            }
        if hasColor { members.append(("color_mode", .string(mode))) }
        if let hue, let saturation {
            members.append(("color", .object([("h", .number(hue)), ("s", .number(saturation))])))
        }
        if let mireds { members.append(("color_temp", .integer(LightScale.kelvin(fromMireds: mireds)))) }
        return members
    }

    private static func climate(_ values: Values) -> [(key: String, value: JSON)] {
        let mode = values.int(.targetHeatingCoolingState).flatMap { HomeAssistantWords.climateModes[$0] }
        let action: String? =
            switch values.int(.currentHeatingCoolingState) {
            case 1: "heating"
            case 2: "cooling"
            case 0: mode == "off" ? "off" : "idle"
            default: nil
            }
        return values.field("mode", .targetHeatingCoolingState) { _ in mode.map { .string($0) } }
            + values.field("action", .currentHeatingCoolingState) { _ in action.map { .string($0) } }
            + values.number("temperature", .targetTemperature)
            + values.number("current_temperature", .currentTemperature)
            + values.number("current_humidity", .currentRelativeHumidity)
            + values.field("preset", .preset) { value in
                if case .string(let preset) = value { .string(preset) } else { nil }
            }
    }

    /// LOCKED/UNLOCKED when the lock is where it was told to be, LOCKING/UNLOCKING on the way,
    /// JAMMED when it reports so; null (Home Assistant's "unknown") for HAP's unknown state.
    private static func lockState(_ values: Values) -> JSON {
        let target = values.int(.lockTargetState)
        switch values.int(.lockCurrentState) {
        case 2: return .string("JAMMED")
        case let current? where current == 0 || current == 1:
            if let target, target != current { return .string(target == 1 ? "LOCKING" : "UNLOCKING") }
            return .string(current == 1 ? "LOCKED" : "UNLOCKED")
        default: return .null
        }
    }

    /// CurrentDoorState's values 0...4 in Home Assistant's words.
    private static func garageDoorState(_ values: Values) -> JSON {
        let states = ["open", "closed", "opening", "closing", "stopped"]
        guard let state = values.int(.currentDoorState), states.indices.contains(state) else { return .null }
        return .string(states[state])
    }

    private static func covering(_ values: Values) -> [(key: String, value: JSON)] {
        let position = values.int(.currentPosition)
        let state: String? =
            switch values.int(.positionState) {
            case 0: "closing"
            case 1: "opening"
            default: position.map { $0 == 0 ? "closed" : "open" }
            }
        return [("state", state.map { .string($0) } ?? .null)]
            + values.field("position", .currentPosition) { $0.intValue.map { .integer($0) } }
    }

    // MARK: Helpers

    private static func onOff(_ value: Bool?) -> JSON {
        value.map { .string($0 ? "ON" : "OFF") } ?? .null
    }

    /// The last known values of one service's characteristics, by type.
    private struct Values {
        let service: Service

        func value(_ type: CharacteristicType) -> CharacteristicValue? { service.characteristic(type)?.value }
        func bool(_ type: CharacteristicType) -> Bool? { value(type)?.boolValue }
        func int(_ type: CharacteristicType) -> Int? { value(type)?.intValue }
        func double(_ type: CharacteristicType) -> Double? { value(type)?.doubleValue }

        /// `key` for an entity that reads the characteristic `type`: absent when the service has no
        /// such characteristic, `null` while its value (as `render` reads it) is not known.
        func field(
            _ key: String, _ type: CharacteristicType, _ render: (CharacteristicValue) -> JSON?
        ) -> [(key: String, value: JSON)] {
            guard let characteristic = service.characteristic(type) else { return [] }
            return [(key, characteristic.value.flatMap(render) ?? .null)]
        }

        /// ``field(_:_:_:)`` for a number: integers stay integers, others keep their fraction.
        func number(_ key: String, _ type: CharacteristicType) -> [(key: String, value: JSON)] {
            field(key, type) { value in
                switch value {
                case .int(let value): .integer(value)
                case .float(let value): .number(value)
                default: nil
                }
            }
        }
    }
}

/// The unit conversions between HomeKit and Home Assistant's lights.
enum LightScale {
    /// HomeKit's 0–100 % to Home Assistant's 0–255.
    static func brightnessToHomeAssistant(_ percent: Double) -> Int {
        Int((min(max(percent, 0), 100) * 255 / 100).rounded())
    }

    /// Home Assistant's 0–255 to HomeKit's 0–100 %.
    static func brightnessToHomeKit(_ value: Double) -> Int {
        Int((min(max(value, 0), 255) * 100 / 255).rounded())
    }

    /// Mireds (HomeKit) to kelvin (Home Assistant) and back: each is 1,000,000 divided by the other.
    static func kelvin(fromMireds mireds: Double) -> Int { Int((1_000_000 / max(mireds, 1)).rounded()) }
    static func mireds(fromKelvin kelvin: Double) -> Int { Int((1_000_000 / max(kelvin, 1)).rounded()) }

    /// Home Assistant's colour modes for a Lightbulb service, from the characteristics it has.
    static func supportedColorModes(of service: Service) -> [String] {
        var modes: [String] = []
        if service.characteristic(.hue) != nil && service.characteristic(.saturation) != nil { modes.append("hs") }
        if service.characteristic(.colorTemperature) != nil { modes.append("color_temp") }
        if modes.isEmpty { modes.append(service.characteristic(.brightness) != nil ? "brightness" : "onoff") }
        return modes
    }

    /// Which of its colour modes a light is in. HomeKit does not say; a light with no saturation
    /// shows white, so it is taken to be in colour-temperature mode then.
    static func colorMode(supported: [String], saturation: Double?) -> String {
        if supported.contains("hs") && supported.contains("color_temp") {
            return (saturation ?? 0) == 0 ? "color_temp" : "hs"
        }
        return supported[0]
    }
}
