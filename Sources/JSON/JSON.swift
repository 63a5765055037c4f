/// A JSON value as the gateway reads and writes it, and the one representation of JSON in the
/// gateway: MQTT payloads and answers, Home Assistant's discovery, zigbee2mqtt's and HAP's messages,
/// the dynamic-security commands and the database's services column all go through it.
///
/// One representation, because what the gateway needs of JSON is the same everywhere and `Codable`
/// with `JSONEncoder`/`JSONDecoder` gives none of it: objects keep their key order (so equal states
/// give equal bytes, and what is published can be compared with what was published before); numbers
/// keep whether they were written as integers; the parser is strict (one value, no duplicate keys, a
/// depth limit, valid UTF-8) and names where a payload went wrong; and speed is won in one place (the
/// services column is written at every group commit and read for every accessory at start, where
/// `JSONEncoder` was a fifth of the gateway's CPU time). Types map to and from `JSON` by hand, where
/// they are read or written.
package enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(key: String, value: JSON)])

    package static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.map(\.key) == b.map(\.key) && a.map(\.value) == b.map(\.value)
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(serialized)
    }

    /// The value of `key` in an object; nil for a missing key or a value that is not an object.
    package subscript(key: String) -> JSON? { objectMembers?.first { $0.key == key }?.value }

    /// Whether the value is `null`, which stands for an absent optional.
    package var isNull: Bool { if case .null = self { true } else { false } }

    package var stringValue: String? { if case .string(let value) = self { value } else { nil } }

    package var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }

    /// An integer, or a number that is a whole one.
    package var integerValue: Int? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.rounded() == value && abs(value) < 9e15: Int(value)
        default: nil
        }
    }

    /// Any number as a `Double`.
    package var numberValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    package var arrayValue: [JSON]? { if case .array(let elements) = self { elements } else { nil } }

    /// The members of an object, in order; nil for a value that is not an object.
    package var objectMembers: [(key: String, value: JSON)]? {
        if case .object(let members) = self { members } else { nil }
    }
}

// MARK: - Writing

extension JSON {
    /// Compact JSON text.
    package var serialized: String { String(decoding: bytes, as: UTF8.self) }

    /// Compact JSON as UTF-8 bytes, the way it goes into a payload.
    package var bytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output)
        return output
    }

    /// Appends the value as compact JSON to `output`: for a payload written without building a tree
    /// around its values first.
    package func write(to output: inout [UInt8]) {
        switch self {
        case .null: Self.append("null", to: &output)
        case .bool(let value): Self.append(value ? "true" : "false", to: &output)
        case .integer(let value): Self.writeInteger(value, to: &output)
        case .number(let value):
            if !value.isFinite {
                Self.append("null", to: &output)
            } else if value == value.rounded(), abs(value) < 1e15 {
                Self.writeInteger(Int(value), to: &output)
            } else {
                var text = String(value)
                text.withUTF8 { output.append(contentsOf: $0) }
            }
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for index in elements.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                elements[index].write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for index in members.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(members[index].key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[index].value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func append(_ literal: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the decimal digits of `value`, without a `String` between.
    private static func writeInteger(_ value: Int, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
            divisor /= 10
        } while divisor > 0
    }

    /// Appends a string in quotes, escaped where JSON requires it, to `output`; the runs between
    /// escapes (in nearly every name and value, the whole string) are copied as blocks of bytes.
    package static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                index += 1
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                output.append(contentsOf: utf8.span(start, index - 1))
                start = index
                output.append(0x5C)
                switch byte {
                case 0x22, 0x5C: output.append(byte)
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    append("u00", to: &output)
                    output.append(UInt8(ascii: "0") + byte >> 4)
                    let low = byte & 0x0F
                    output.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                }
            }
            output.append(contentsOf: utf8.span(start, utf8.count))
        }
        output.append(UInt8(ascii: "\""))
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The bytes from `start` up to `end`, without the generic slicing that a debug build pays for
    /// at every key and value.
    fileprivate func span(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: baseAddress.map { $0 + start }, count: end - start)
    }
}

// MARK: - Reading

/// Why a payload is not acceptable JSON, with the byte offset where reading stopped.
package struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String
    package let offset: Int
    package var description: String { "\(message) (at byte \(offset))" }
}

extension JSON {
    /// The deepest nesting of arrays and objects a payload may have.
    package static let maximumDepth = 32

    /// Parses UTF-8 JSON strictly: one value, no trailing text, no duplicate keys in an object, no
    /// NaN or Infinity, at most `maximumDepth` levels deep, and valid UTF-8 only.
    package static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSON {
        try bytes.withUnsafeBufferPointer { buffer in Result { () throws(JSONError) in try parse(buffer) } }.get()
    }

    package static func parse(_ text: String) throws(JSONError) -> JSON {
        var text = text
        return try text.withUTF8 { buffer in Result { () throws(JSONError) in try parse(buffer) } }.get()
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSON {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.readValue(depth: 0)
        reader.skipWhitespace()
        guard reader.position == bytes.count else { throw reader.error("unexpected text after the JSON value") }
        return value
    }

    /// The value of the first `key` member of the object that `bytes` hold, and how many bytes it
    /// spans. The object is read member by member up to it, and what follows is not read: the value
    /// is found in a payload that is malformed after it, at the cost of the members before it. Nil
    /// when the object has no such member or is not valid JSON up to it.
    package static func member(_ key: String, of bytes: [UInt8]) -> (value: JSON, length: Int)? {
        bytes.withUnsafeBufferPointer { bytes in
            var reader = Reader(bytes: bytes)
            reader.skipWhitespace()
            guard reader.current == UInt8(ascii: "{") else { return nil }
            reader.position += 1
            while true {
                reader.skipWhitespace()
                guard reader.current == UInt8(ascii: "\""), let name = try? reader.readString() else { return nil }
                reader.skipWhitespace()
                guard reader.current == UInt8(ascii: ":") else { return nil }
                reader.position += 1
                reader.skipWhitespace()
                let start = reader.position
                guard let value = try? reader.readValue(depth: 1) else { return nil }
                if name == key { return (value, reader.position - start) }
                reader.skipWhitespace()
                guard reader.current == UInt8(ascii: ",") else { return nil }
                reader.position += 1
            }
        }
    }

    /// Reads the bytes in place: `parse` lends it the payload's storage for the time of the call.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        func error(_ message: String) -> JSONError { JSONError(message: message, offset: position) }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }

        mutating func expect(_ literal: StaticString, _ value: JSON) throws(JSONError) -> JSON {
            let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
            guard bytes.count - position >= expected.count,
                bytes.span(position, position + expected.count).elementsEqual(expected)
            else { throw error("invalid literal") }
            position += expected.count
            return value
        }

        mutating func readValue(depth: Int) throws(JSONError) -> JSON {
            guard let byte = current else { throw error("unexpected end of JSON") }
            switch byte {
            case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
            case UInt8(ascii: "["): return try readArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try readString())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
            case UInt8(ascii: "N"), UInt8(ascii: "I"): throw error("NaN and Infinity are not JSON numbers")
            default: throw error("unexpected character '\(Character(Unicode.Scalar(byte)))'")
            }
        }

        mutating func readObject(depth: Int) throws(JSONError) -> JSON {
            guard depth <= JSON.maximumDepth else { throw error("JSON nested deeper than \(JSON.maximumDepth) levels") }
            position += 1
            var members: [(key: String, value: JSON)] = []
            // Duplicates are found by comparing with the members read so far, and through a set only
            // in a large object: hashing every key of every small payload cost more than the reading.
            var keys: Set<String> = []
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
                let keyStart = position
                let key = try readString()
                let isDuplicate: Bool
                if members.count < Self.keysComparedInPlace {
                    isDuplicate = members.contains { $0.key == key }
                } else {
                    if keys.isEmpty { keys = Set(members.map(\.key)) }
                    isDuplicate = !keys.insert(key).inserted
                }
                guard !isDuplicate else {
                    throw JSONError(message: "duplicate key \"\(key)\"", offset: keyStart)
                }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
                position += 1
                skipWhitespace()
                members.append((key, try readValue(depth: depth)))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return .object(members)
                default: throw error("expected ',' or '}' in an object")
                }
            }
        }

        /// Up to how many members an object's keys are compared one by one rather than hashed.
        static let keysComparedInPlace = 16

        mutating func readArray(depth: Int) throws(JSONError) -> JSON {
            guard depth <= JSON.maximumDepth else { throw error("JSON nested deeper than \(JSON.maximumDepth) levels") }
            position += 1
            var elements: [JSON] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try readValue(depth: depth))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return .array(elements)
                default: throw error("expected ',' or ']' in an array")
                }
            }
        }

        mutating func readNumber() throws(JSONError) -> JSON {
            let start = position
            var isInteger = true
            while let byte = current, Self.isNumberByte(byte) {
                if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    isInteger = false
                }
                position += 1
            }
            let digits = bytes.span(start, position)
            guard Self.isJSONNumber(digits) else {
                throw JSONError(
                    message: "'\(String(decoding: digits, as: UTF8.self))' is not a number JSON can carry",
                    offset: start)
            }
            if isInteger, let integer = Self.integer(digits) { return .integer(integer) }
            let text = String(decoding: digits, as: UTF8.self)
            guard let number = Double(text), number.isFinite else {
                throw JSONError(message: "'\(text)' is not a number JSON can carry", offset: start)
            }
            return .number(number)
        }

        /// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
        static func isJSONNumber(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
            var i = 0
            if i < text.count, text[i] == UInt8(ascii: "-") { i += 1 }
            let integerStart = i
            i = digitsEnd(text, from: i)
            let integerDigits = i - integerStart
            guard integerDigits > 0, integerDigits == 1 || text[integerStart] != UInt8(ascii: "0") else { return false }
            if i < text.count, text[i] == UInt8(ascii: ".") {
                let end = digitsEnd(text, from: i + 1)
                guard end > i + 1 else { return false }
                i = end
            }
            if i < text.count, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
                i += 1
                if i < text.count, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") { i += 1 }
                let end = digitsEnd(text, from: i)
                guard end > i else { return false }
                i = end
            }
            return i == text.count
        }

        /// Where the run of digits that starts at `start` ends.
        static func digitsEnd(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
            var end = start
            while end < text.count, isDigit(text[end]) { end += 1 }
            return end
        }

        /// The integer a valid JSON integer spells, or nil when it does not fit an `Int`.
        static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
            let isNegative = text.first == UInt8(ascii: "-")
            var value = 0
            var i = isNegative ? 1 : 0
            while i < text.count {
                let digit = Int(text[i] &- UInt8(ascii: "0"))
                let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
                // Accumulated as a negative number, so Int.min fits.
                let (next, overflowAdd) = shifted.subtractingReportingOverflow(digit)
                guard !overflowShift, !overflowAdd else { return nil }
                value = next
                i += 1
            }
            if isNegative { return value }
            let (positive, overflow) = (0).subtractingReportingOverflow(value)
            return overflow ? nil : positive
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        static func isNumberByte(_ byte: UInt8) -> Bool {
            isDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
        }

        /// A string without escapes (nearly every key and value) becomes a `String` in one step;
        /// one with escapes is assembled run by run.
        mutating func readString() throws(JSONError) -> String {
            let start = position + 1
            var end = start
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") {
                    guard
                        let text = String(validating: bytes.span(start, end), as: UTF8.self)
                    else {
                        throw JSONError(message: "invalid UTF-8 in a string", offset: start)
                    }
                    position = end + 1
                    return text
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                end += 1
            }
            return try readEscapedString()
        }

        mutating func readEscapedString() throws(JSONError) -> String {
            position += 1
            var scalars = String.UnicodeScalarView()
            var runStart = position
            func flushRun(_ reader: Reader, into scalars: inout String.UnicodeScalarView) throws(JSONError) {
                guard runStart < reader.position else { return }
                let run = reader.bytes.span(runStart, reader.position)
                guard let text = String(validating: run, as: UTF8.self) else {
                    throw JSONError(message: "invalid UTF-8 in a string", offset: runStart)
                }
                scalars.append(contentsOf: text.unicodeScalars)
            }
            while true {
                guard let byte = current else { throw error("unterminated string") }
                switch byte {
                case UInt8(ascii: "\""):
                    try flushRun(self, into: &scalars)
                    position += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flushRun(self, into: &scalars)
                    position += 1
                    scalars.append(try readEscape())
                    runStart = position
                case 0..<0x20:
                    throw error("control character in a string")
                default:
                    position += 1
                }
            }
        }

        mutating func readEscape() throws(JSONError) -> Unicode.Scalar {
            guard let byte = current else { throw error("unterminated escape") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let high = try readHex4()
                if (0xD800...0xDBFF).contains(high) {
                    guard current == UInt8(ascii: "\\"), position + 1 < bytes.count,
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate in \\u escape") }
                    position += 2
                    let low = try readHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
                }
                guard let scalar = Unicode.Scalar(high) else { throw error("unpaired surrogate in \\u escape") }
                return scalar
            default: throw error("unknown escape")
            }
        }

        mutating func readHex4() throws(JSONError) -> UInt32 {
            guard bytes.count - position >= 4 else { throw error("\\u needs four hex digits") }
            var value: UInt32 = 0
            for byte in bytes[position..<position + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("\\u needs four hex digits")
                }
                value = value << 4 | UInt32(digit)
            }
            position += 4
            return value
        }
    }
}
