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

extension UnsafeBufferPointer<UInt8> {
    /// The bytes from `start` up to `end`, without the generic slicing that a debug build pays for
    /// at every key and value.
    func span(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: baseAddress.map { $0 + start }, count: end - start)
    }
}
