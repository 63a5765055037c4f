import Foundation

/// A characteristic's value: the few kinds HomeKit's formats reduce to.
package enum CharacteristicValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case float(Double)
    case string(String)
    case data(Data)

    /// The value as plain text, the way a value topic carries it: `true`, `42`, `21.5`, a string as is,
    /// data as base64.
    package var plainText: String {
        switch self {
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .float(let value):
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .string(let value): value
        case .data(let value): value.base64EncodedString()
        }
    }

    package var description: String { plainText }

    /// The value as a number, for range checks and simulations; `nil` for strings and data.
    package var doubleValue: Double? {
        switch self {
        case .bool(let value): value ? 1 : 0
        case .int(let value): Double(value)
        case .float(let value): value
        case .string, .data: nil
        }
    }

    /// The value as an integer when it is one (a float without a fraction counts).
    package var intValue: Int? {
        switch self {
        case .int(let value): value
        case .float(let value) where value == value.rounded() && abs(value) < 9e18: Int(value)
        default: nil
        }
    }

    package var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    var kindName: String {
        switch self {
        case .bool: "a bool"
        case .int: "an integer"
        case .float: "a number"
        case .string: "a string"
        case .data: "data"
        }
    }
}
