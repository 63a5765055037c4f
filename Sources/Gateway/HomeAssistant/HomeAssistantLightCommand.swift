import Foundation
import HomeModel
import JSON

/// A command from Home Assistant's JSON light schema, `{"state":"ON","brightness":128,
/// "color":{"h":30,"s":80},"color_temp":2700}`, as the characteristic writes it stands for. The
/// writes are applied together (one `writeValues`), so a light never shows half a command.
enum HomeAssistantLightCommand {
    static let keys = ["state", "brightness", "color", "color_temp"]

    static func writes(_ json: JSON, to service: Service, of accessory: Accessory) throws(HomeError) -> [ActionRequest]
    {
        guard case .object(let members) = json else {
            throw HomeError(.invalidParameter, "A light command is a JSON object with \(keys.joined(separator: ", ")).")
        }
        var writes: [ActionRequest] = []
        func write(_ type: CharacteristicType, _ value: CharacteristicValue) throws(HomeError) {
            guard service.characteristic(type) != nil else {
                throw HomeError(.notFound, "'\(accessory.name)' \(service.name) has no \(type.rawValue).")
            }
            writes.append(
                ActionRequest(
                    CharacteristicReference(accessory: accessory.name, service: service.name, characteristic: type),
                    value))
        }
        for (key, value) in members {
            switch key {
            case "state":
                switch value.stringValue?.uppercased() {
                case "ON": try write(.on, .bool(true))
                case "OFF": try write(.on, .bool(false))
                default: throw HomeError(.invalidValueType, "\"state\" is \"ON\" or \"OFF\".")
                }
            case "brightness":
                try write(.brightness, .int(LightScale.brightnessToHomeKit(try number(value, key, in: 0...255))))
            case "color":
                guard let hue = value["h"], let saturation = value["s"] else {
                    throw HomeError(.missingParameter, "\"color\" needs \"h\" (0–360) and \"s\" (0–100).")
                }
                try write(.hue, .float(rounded(try number(hue, "color.h", in: 0...360), to: service, .hue)))
                try write(
                    .saturation,
                    .float(rounded(try number(saturation, "color.s", in: 0...100), to: service, .saturation)))
            case "color_temp":
                let kelvin = try number(value, key, in: 1...100_000)
                var mireds = Double(LightScale.mireds(fromKelvin: kelvin))
                // Kelvin and mireds do not convert exactly: keep the ends of the range reachable.
                if let metadata = service.characteristic(.colorTemperature)?.metadata {
                    mireds = min(max(mireds, metadata.minimumValue ?? mireds), metadata.maximumValue ?? mireds)
                }
                try write(.colorTemperature, .int(Int(mireds)))
            default:
                throw HomeError(
                    .invalidParameter, "Unknown key \"\(key)\"; a light command has \(keys.joined(separator: ", ")).")
            }
        }
        guard !writes.isEmpty else {
            throw HomeError(.missingParameter, "The light command is empty; send e.g. {\"state\":\"ON\"}.")
        }
        return writes
    }

    private static func number(_ json: JSON, _ key: String, in range: ClosedRange<Double>) throws(HomeError) -> Double {
        guard let value = json.numberValue else { throw HomeError(.invalidValueType, "\"\(key)\" is a number.") }
        guard value >= range.lowerBound else {
            throw HomeError(.valueLowerThanMinimum, "\"\(key)\" is \(value); the least is \(range.lowerBound).")
        }
        guard value <= range.upperBound else {
            throw HomeError(.valueHigherThanMaximum, "\"\(key)\" is \(value); the most is \(range.upperBound).")
        }
        return value
    }

    /// Home Assistant sends hue and saturation with fractions; HomeKit's have a step (1 by default).
    private static func rounded(_ value: Double, to service: Service, _ type: CharacteristicType) -> Double {
        guard let step = service.characteristic(type)?.metadata.stepValue, step > 0 else { return value }
        return (value / step).rounded() * step
    }
}
