import Foundation
import HomeModel

/// Percent-encodes a query value (names may hold spaces and any letters): every UTF-8 byte but
/// RFC 3986's unreserved characters, as `%` and two upper-case hex digits.
func queryEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
}

private let unreserved = CharacterSet(
    charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~")

/// Words for the page: `CurrentTemperature` → `Current temperature`.
func words(_ typeName: String) -> String {
    typeName.enumerated().map { $0 > 0 && $1.isUppercase ? " " + $1.lowercased() : String($1) }.joined()
}

/// A value as a person reads it, without its unit, and whether the unit follows it: the name of a
/// valid value ("Secured", "Opening"), `on`/`off` for a bool, a colour temperature in kelvin (HAP's
/// mired are for machines), otherwise the number; "unknown" before the device said.
func valueText(_ value: CharacteristicValue?, type: CharacteristicType) -> (text: String, takesUnit: Bool) {
    guard let value else { return ("unknown", false) }
    switch value {
    case .bool(let on):
        return (on ? "on" : "off", false)
    case _ where type == .colorTemperature:
        guard let mired = value.doubleValue, mired > 0 else { return (value.plainText, false) }
        return ("\(Int((1_000_000 / mired).rounded())) K", false)
    default:
        if let number = value.intValue, let name = type.name(of: number) { return (name, false) }
        return (value.plainText, true)
    }
}

/// The unit after a value, with its space: the metadata's, else what HAP leaves unsaid for Eve's
/// characteristics (watts, kilowatt-hours, hectopascals).
func unitSuffix(_ unit: CharacteristicUnit?, type: CharacteristicType) -> String {
    unit.flatMap { unitSuffixes[$0] } ?? eveUnitSuffixes[type] ?? ""
}

private let unitSuffixes: [CharacteristicUnit: String] = [
    .celsius: " °C", .percentage: " %", .arcDegrees: "°", .lux: " lx", .seconds: " s",
]
private let eveUnitSuffixes: [CharacteristicType: String] = [
    .currentConsumption: " W", .totalConsumption: " kWh", .airPressure: " hPa",
]

/// An element id made of `prefix` and any text (an accessory id, a characteristic key): percent-
/// encoded, so it holds no space and can be listed in `aria-labelledby`.
func elementID(_ prefix: String, _ text: String) -> String {
    prefix + queryEncoded(text)
}
