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
