import HomeModel

/// Escapes text for HTML element content and double-quoted attribute values: every string that
/// reaches a page from the model, a form or an answer passes through here.
func escaped(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for character in text.unicodeScalars {
        switch character {
        case "&": result += "&amp;"
        case "<": result += "&lt;"
        case ">": result += "&gt;"
        case "\"": result += "&quot;"
        case "'": result += "&#39;"
        default: result.unicodeScalars.append(character)
        }
    }
    return result
}

/// Percent-encodes a query value (names may hold spaces and any letters).
func queryEncoded(_ text: String) -> String {
    var result = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"):
            result.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            result +=
                "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
        }
    }
    return result
}

/// Words for the page: `CurrentTemperature` → `Current temperature`.
func words(_ typeName: String) -> String {
    var result = ""
    for (index, character) in typeName.enumerated() {
        if character.isUppercase, index > 0 {
            result += " " + character.lowercased()
        } else {
            result.append(character)
        }
    }
    return result
}

/// A value as the page shows it, without its unit: `on`/`off` for a bool.
func displayedValue(_ value: CharacteristicValue?) -> String {
    guard let value else { return "–" }
    if case .bool(let on) = value { return on ? "on" : "off" }
    return value.plainText
}

/// The unit after a value, with its space.
func unitSuffix(_ unit: CharacteristicUnit?) -> String {
    switch unit {
    case .celsius?: " °C"
    case .percentage?: " %"
    case .arcDegrees?: "°"
    case .lux?: " lx"
    case .seconds?: " s"
    default: ""
    }
}
