import Foundation
import HomeModel
import JSON

/// Where a characteristic lives on a HAP accessory server: its accessory's `aid` and its own `iid`.
package struct HAPAddress: Sendable, Hashable, CustomStringConvertible {
    package let aid: Int
    package let iid: Int

    package init(aid: Int, iid: Int) {
        self.aid = aid
        self.iid = iid
    }

    /// As HAP's `GET /characteristics?id=` lists it: `aid.iid`.
    package var description: String { "\(aid).\(iid)" }
}

/// Characteristic values as HAP's JSON carries them, both ways: the controller reads what
/// accessories send, the bridge what controllers write.
package enum HAPValues {
    /// A JSON value read by the characteristic's format; nil for null or a kind that does not fit.
    package static func value(_ json: JSON, _ format: CharacteristicFormat) -> CharacteristicValue? {
        switch (format, json) {
        case (.bool, .bool(let flag)): return .bool(flag)
        case (.bool, .integer(let number)): return .bool(number != 0)
        case (.float, .integer(let number)): return .float(Double(number))
        case (.float, .number(let number)): return .float(number)
        case (.string, .string(let text)): return .string(text)
        case (.data, .string(let text)), (.tlv8, .string(let text)):
            return Data(base64Encoded: text).map { .data($0) }
        case (_, .integer(let number)): return .int(number)
        case (_, .number(let number)) where number == number.rounded(): return .int(Int(number))
        case (_, .bool(let flag)): return .int(flag ? 1 : 0)
        default: return nil
        }
    }

    /// A value as HAP's JSON for a characteristic of `format` (a bool as 0 or 1 where the format is
    /// an integer, data in base 64).
    package static func json(_ value: CharacteristicValue, _ format: CharacteristicFormat?) -> JSON {
        switch value {
        case .bool(let flag): format == .bool || format == nil ? .bool(flag) : .integer(flag ? 1 : 0)
        case .int(let number): .integer(number)
        case .float(let number): .number(number)
        case .string(let text): .string(text)
        case .data(let data): .string(data.base64EncodedString())
        }
    }
}
