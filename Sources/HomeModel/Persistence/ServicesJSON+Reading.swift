import Foundation

/// Reads back what ``ServicesJSON/encode(_:)`` writes (and what `JSONEncoder` wrote before it), without
/// `JSONDecoder`: a start at 10,000 accessories decodes every accessory's services, and through the
/// decoder that was the longest part of loading the database. It accepts only that strict form (no
/// whitespace, no unknown or repeated key, JSON's own number grammar) and returns nil for anything
/// else, which the caller hands to `JSONDecoder`: the decoder stays the judge of what is valid and the
/// one that names a problem. `ServicesJSONTests` holds the two readings equal.
extension ServicesJSON {
    static func decode(_ text: String) -> [Service]? {
        readArray(text) { $0.service() }
    }

    /// An accessory's bridged accessories' ids: a JSON array of strings.
    static func decodeStrings(_ text: String) -> [String]? {
        readArray(text) { $0.string() }
    }

    private static func readArray<Element>(_ text: String, _ element: (inout Reader) -> Element?) -> [Element]? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            guard let elements = reader.array(element), reader.isAtEnd else { return nil }
            return elements
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// `[` element (`,` element)* `]`
        mutating func array<Element>(_ element: (inout Reader) -> Element?) -> [Element]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var elements: [Element] = []
            if take(UInt8(ascii: "]")) { return elements }
            repeat {
                guard let next = element(&self) else { return nil }
                elements.append(next)
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]")) ? elements : nil
        }

        /// `{` "key" `:` value (`,` …)* `}`, each value read by `member`, which returns false for a
        /// key it does not know or a value that does not read; `null` values are left to `member`
        /// too. A repeated key is refused here.
        mutating func object(_ member: (String, inout Reader) -> Bool) -> Bool {
            guard take(UInt8(ascii: "{")) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            var keys: [String] = []
            repeat {
                guard let key = string(), !keys.contains(key), take(UInt8(ascii: ":")), member(key, &self) else {
                    return false
                }
                keys.append(key)
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        }

        mutating func isNull() -> Bool { take("null") }

        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    defer { index += 1 }
                    return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                case UInt8(ascii: "\\"):
                    index = start
                    return escapedString()
                case ..<0x20:
                    return nil
                default:
                    index += 1
                }
            }
            return nil
        }

        /// The rest of a string that has escapes, from its first byte after the quote.
        private mutating func escapedString() -> String? {
            var utf8: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        utf8.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case ..<0x20:
                    return nil
                default:
                    utf8.append(byte)
                }
            }
            return nil
        }

        /// `XXXX` after `\u`, with the low half of a surrogate pair after it if it is a high half.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let unit = hex4() else { return nil }
            switch unit {
            case 0xD800..<0xDC00:
                guard take("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00..<0xE000:
                return nil
            default:
                return Unicode.Scalar(unit)
            }
        }

        private mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Self.hexDigit(bytes[index]) else { return nil }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        private static func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        /// A JSON number's text, and whether it has a fraction or exponent.
        private mutating func number() -> (text: Substring, isInteger: Bool)? {
            let start = index
            func digits(_ reader: inout Reader) -> Int {
                let first = reader.index
                while reader.index < reader.bytes.count,
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.index])
                {
                    reader.index += 1
                }
                return reader.index - first
            }
            _ = take(UInt8(ascii: "-"))
            let integerStart = index
            let integerDigits = digits(&self)
            guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
            var isInteger = true
            if take(UInt8(ascii: ".")) {
                isInteger = false
                guard digits(&self) > 0 else { return nil }
            }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                // Foundation's JSONDecoder refuses `0e1` (though not `0e+1` or `0.0e1`); neither
                // writer writes it, so it is left to the decoder.
                if isInteger && integerDigits == 1 && bytes[integerStart] == UInt8(ascii: "0") { return nil }
                isInteger = false
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard digits(&self) > 0 else { return nil }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            return (text[...], isInteger)
        }

        mutating func integer() -> Int? {
            guard let (text, isInteger) = number(), isInteger else { return nil }
            return Int(text)
        }

        /// A finite double. One that underflows to zero is left to the decoder, which refuses it.
        mutating func double() -> Double? {
            guard let (text, _) = number(), let value = Double(text), value.isFinite else { return nil }
            if value == 0, text.prefix(while: { $0 != "e" && $0 != "E" }).contains(where: { ("1"..."9").contains($0) })
            {
                return nil
            }
            return value
        }

        mutating func bool() -> Bool? {
            if take("true") { return true }
            if take("false") { return false }
            return nil
        }

        mutating func service() -> Service? {
            var id: String?
            var type: String?
            var name: String?
            var characteristics: [Characteristic]?
            let read = object { key, reader in
                switch key {
                case "id":
                    id = reader.string()
                    return id != nil
                case "type":
                    type = reader.string()
                    return type != nil
                case "name":
                    name = reader.string()
                    return name != nil
                case "characteristics":
                    characteristics = reader.array { $0.characteristic() }
                    return characteristics != nil
                default:
                    return false
                }
            }
            guard read, let id, let type, let name, let characteristics else { return nil }
            return Service(
                id: ServiceID(rawValue: id), type: ServiceType(rawValue: type), name: name,
                characteristics: characteristics)
        }

        mutating func characteristic() -> Characteristic? {
            var type: String?
            var metadata: CharacteristicMetadata?
            var value: CharacteristicValue?
            let read = object { key, reader in
                switch key {
                case "type":
                    type = reader.string()
                    return type != nil
                case "metadata":
                    metadata = reader.metadata()
                    return metadata != nil
                case "value":
                    if reader.isNull() { return true }
                    value = reader.value()
                    return value != nil
                default:
                    return false
                }
            }
            guard read, let type, let metadata else { return nil }
            return Characteristic(type: CharacteristicType(rawValue: type), metadata: metadata, value: value)
        }

        /// An optional member's value: `null` is nil; `.none` if it does not read.
        private mutating func nullable<Value>(_ read: (inout Reader) -> Value?) -> Value?? {
            if isNull() { return .some(nil) }
            return read(&self).map { .some($0) }
        }

        mutating func metadata() -> CharacteristicMetadata? {
            var format: String?
            var permissions: Int?
            var unit: String?
            var minimum: Double?
            var maximum: Double?
            var step: Double?
            var maxLength: Int?
            var validValues: [Int]?
            var validStrings: [String]?
            let read = object { key, reader in
                func assign<Value>(_ slot: inout Value?, _ read: (inout Reader) -> Value?) -> Bool {
                    guard let value = reader.nullable(read) else { return false }
                    slot = value
                    return true
                }
                switch key {
                case "format":
                    format = reader.string()
                    return format != nil
                case "permissions":
                    permissions = reader.integer()
                    return permissions != nil
                case "unit": return assign(&unit) { $0.string() }
                case "minimumValue": return assign(&minimum) { $0.double() }
                case "maximumValue": return assign(&maximum) { $0.double() }
                case "stepValue": return assign(&step) { $0.double() }
                case "maxLength": return assign(&maxLength) { $0.integer() }
                case "validValues": return assign(&validValues) { $0.array { $0.integer() } }
                case "validStrings": return assign(&validStrings) { $0.array { $0.string() } }
                default: return false
                }
            }
            guard read, let format, let permissions else { return nil }
            return CharacteristicMetadata(
                format: CharacteristicFormat(rawValue: format), unit: unit.map { CharacteristicUnit(rawValue: $0) },
                minimumValue: minimum, maximumValue: maximum, stepValue: step, maxLength: maxLength,
                validValues: validValues, validStrings: validStrings,
                permissions: CharacteristicPermissions(rawValue: permissions))
        }

        /// `{"case":{"_0":payload}}`, as `Codable` synthesizes an enum with an associated value.
        mutating func value() -> CharacteristicValue? {
            guard take(UInt8(ascii: "{")), let kind = string(), take(":{\"_0\":") else { return nil }
            let value: CharacteristicValue?
            switch kind {
            case "bool": value = bool().map(CharacteristicValue.bool)
            case "int": value = integer().map(CharacteristicValue.int)
            case "float": value = double().map(CharacteristicValue.float)
            case "string": value = string().map(CharacteristicValue.string)
            case "data": value = string().flatMap { Data(base64Encoded: $0) }.map(CharacteristicValue.data)
            default: value = nil
            }
            guard take("}}") else { return nil }
            return value
        }
    }
}
