import Foundation
import HomeModel
import JSON

/// Turns what a client sent into a characteristic value, guided by the characteristic's format. The
/// model then checks range, step, length and valid values; this only decides what the text means.
enum ValueDecoding {
    /// A `/set` payload: plain text (`true`, `on`, `42`, `21.5`, a string as is, a word of
    /// ``HomeAssistantWords`` for `type`) or a JSON scalar.
    static func value(
        fromPayload payload: [UInt8], for metadata: CharacteristicMetadata, type: CharacteristicType? = nil
    ) throws(HomeError) -> CharacteristicValue {
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw HomeError(.invalidValueType, "The payload is not valid UTF-8.")
        }
        // Unicode whitespace is ASCII at or below a space, or a multi-byte scalar: a payload that
        // begins and ends with another ASCII byte has nothing to trim (Foundation's trim is costly).
        let isTrimmed = payload.first.map(isVisibleASCII) == true && payload.last.map(isVisibleASCII) == true
        let trimmed = isTrimmed ? text : text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty || metadata.format == .string else {
            throw HomeError(.missingParameter, "The payload is empty; send the value to set.")
        }
        if trimmed.first == "\"" || trimmed.first == "{" || trimmed.first == "[" {
            let json: JSON
            do {
                json = try JSON.parse(trimmed)
            } catch {
                throw HomeError(.invalidValueType, "The payload is not valid JSON: \(error).")
            }
            return try value(fromJSON: json, for: metadata, type: type)
        }
        switch metadata.format {
        case .bool:
            switch trimmed.lowercased() {
            case "true", "on", "1": return .bool(true)
            case "false", "off", "0": return .bool(false)
            default: throw HomeError(.invalidValueType, "'\(trimmed)' is not a bool; send true or false.")
            }
        case .string:
            return .string(text)
        case .data, .tlv8:
            guard let data = Data(base64Encoded: trimmed) else {
                throw HomeError(.invalidValueType, "Data is sent as base64 text.")
            }
            return .data(data)
        default:
            if let type, let word = HomeAssistantWords.value(of: trimmed, for: type, metadata: metadata) {
                return .int(word)
            }
            return try number(trimmed, for: metadata, type: type)
        }
    }

    private static func isVisibleASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

    /// A value inside a JSON body (`$set`, `addActionSet`).
    static func value(fromJSON json: JSON, for metadata: CharacteristicMetadata, type: CharacteristicType? = nil)
        throws(HomeError) -> CharacteristicValue
    {
        switch (json, metadata.format) {
        case (.bool(let bool), _): return .bool(bool)
        case (.integer(let integer), _): return .int(integer)
        case (.number(let number), _): return .float(number)
        case (.string(let string), .data), (.string(let string), .tlv8):
            guard let data = Data(base64Encoded: string) else {
                throw HomeError(.invalidValueType, "Data is sent as base64 text.")
            }
            return .data(data)
        case (.string(let string), .string): return .string(string)
        case (.string(let string), _):
            if let type, let word = HomeAssistantWords.value(of: string, for: type, metadata: metadata) {
                return .int(word)
            }
            return .string(string)
        case (.null, _): throw HomeError(.missingParameter, "The value is null.")
        case (.array, _), (.object, _):
            throw HomeError(.invalidValueType, "A characteristic value is a single value, not a list or an object.")
        }
    }

    private static func number(_ text: String, for metadata: CharacteristicMetadata, type: CharacteristicType?)
        throws(HomeError) -> CharacteristicValue
    {
        if let integer = Int(text) { return .int(integer) }
        guard let number = Double(text), text.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else {
            let words = type.map(HomeAssistantWords.words(for:)) ?? []
            let alternative = words.isEmpty ? "" : " or one of \(words.joined(separator: ", "))"
            throw HomeError(
                .invalidValueType,
                "'\(text)' is not a number (format \(metadata.format.rawValue))\(alternative).")
        }
        guard number.isFinite else {
            throw HomeError(.invalidValueType, "'\(text)' is not a finite number.")
        }
        return .float(number)
    }
}
