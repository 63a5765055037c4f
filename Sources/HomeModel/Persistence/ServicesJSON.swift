import Foundation

/// Writes an accessory's services in the JSON that their `Codable` conformance reads back
/// (`JSONDecoder`), without `JSONEncoder`'s generic machinery: the group commit writes this for every
/// accessory whose values changed, and through `JSONEncoder` it was a fifth of the gateway's CPU time
/// under a sustained command load. `ServicesJSONTests` holds it to `JSONEncoder`'s meaning.
enum ServicesJSON {
    static func encode(_ services: [Service]) -> String {
        var out = ""
        out.reserveCapacity(256 * services.count)
        out += "["
        for (index, service) in services.enumerated() {
            if index > 0 { out += "," }
            out += #"{"id":"#
            string(service.id.rawValue, to: &out)
            out += #","type":"#
            string(service.type.rawValue, to: &out)
            out += #","name":"#
            string(service.name, to: &out)
            out += #","characteristics":["#
            for (c, characteristic) in service.characteristics.enumerated() {
                if c > 0 { out += "," }
                out += #"{"type":"#
                string(characteristic.type.rawValue, to: &out)
                out += #","metadata":"#
                metadata(characteristic.metadata, to: &out)
                if let value = characteristic.value {
                    out += #","value":"#
                    self.value(value, to: &out)
                }
                out += "}"
            }
            out += "]}"
        }
        out += "]"
        return out
    }

    private static func metadata(_ metadata: CharacteristicMetadata, to out: inout String) {
        out += #"{"format":"#
        string(metadata.format.rawValue, to: &out)
        if let unit = metadata.unit {
            out += #","unit":"#
            string(unit.rawValue, to: &out)
        }
        if let minimum = metadata.minimumValue { out += #","minimumValue":"# + number(minimum) }
        if let maximum = metadata.maximumValue { out += #","maximumValue":"# + number(maximum) }
        if let step = metadata.stepValue { out += #","stepValue":"# + number(step) }
        if let maxLength = metadata.maxLength { out += #","maxLength":"# + String(maxLength) }
        if let validValues = metadata.validValues {
            out += #","validValues":["# + validValues.map(String.init).joined(separator: ",") + "]"
        }
        if let validStrings = metadata.validStrings {
            out += #","validStrings":["#
            for (index, valid) in validStrings.enumerated() {
                if index > 0 { out += "," }
                string(valid, to: &out)
            }
            out += "]"
        }
        out += #","permissions":"# + String(metadata.permissions.rawValue) + "}"
    }

    /// An enum with associated values as `Codable` synthesizes it: `{"case":{"_0":value}}`.
    private static func value(_ value: CharacteristicValue, to out: inout String) {
        switch value {
        case .bool(let bool): out += bool ? #"{"bool":{"_0":true}}"# : #"{"bool":{"_0":false}}"#
        case .int(let int): out += #"{"int":{"_0":"# + String(int) + "}}"
        case .float(let float): out += #"{"float":{"_0":"# + number(float) + "}}"
        case .string(let text):
            out += #"{"string":{"_0":"#
            string(text, to: &out)
            out += "}}"
        case .data(let data): out += #"{"data":{"_0":""# + data.base64EncodedString() + #""}}"#
        }
    }

    /// A double as JSON: Swift's shortest form that reads back the same double. Not finite values
    /// never reach the model (validation refuses them); should one, it is written as 0 rather than as
    /// invalid JSON.
    private static func number(_ number: Double) -> String {
        number.isFinite ? "\(number)" : "0"
    }

    private static func string(_ text: String, to out: inout String) {
        out += "\""
        var plain = true
        for byte in text.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            plain = false
            break
        }
        if plain {
            out += text
        } else {
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
