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
