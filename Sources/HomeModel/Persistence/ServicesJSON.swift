import Foundation
import JSON

/// The services column of an accessory's row: its services as a ``JSON`` value in the shape their
/// `Codable` conformance gives them (`{"id":…,"type":…,"name":…,"characteristics":[…]}`, a value as
/// `{"float":{"_0":21.5}}`), the shape every database since the first holds. The group commit writes
/// it for each accessory whose values changed and a start reads it for every accessory, so it goes
/// through `JSON` rather than `JSONEncoder`/`JSONDecoder`, which were a fifth of the gateway's CPU
/// time under load and most of a start at 10,000 accessories.
///
/// Reading is as lenient as `Decodable` was where old rows may differ (members in any order, unknown
/// members ignored, `null` for an absent optional) and as strict as `JSON.parse` about the text.
enum ServicesJSON {
    static func encode(_ services: [Service]) -> String {
        JSON.array(services.map(json)).serialized
    }

    static func decode(_ text: String) throws(StoredJSONError) -> [Service] {
        try array(try parse(text), "services") { json throws(StoredJSONError) in try service(json) }
    }

    /// An accessory's bridged accessories' ids: a JSON array of strings.
    static func encodeStrings(_ strings: [String]) -> String {
        JSON.array(strings.map(JSON.string)).serialized
    }

    static func decodeStrings(_ text: String) throws(StoredJSONError) -> [String] {
        try array(try parse(text), "bridged accessories") { json throws(StoredJSONError) in
            try required(json.stringValue, "a bridged accessory's id")
        }
    }

    private static func parse(_ text: String) throws(StoredJSONError) -> JSON {
        do {
            return try JSON.parse(text)
        } catch {
            throw StoredJSONError("\(error)")
        }
    }

    // MARK: Writing

    private static func json(_ service: Service) -> JSON {
        .object([
            ("id", .string(service.id.rawValue)), ("type", .string(service.type.rawValue)),
            ("name", .string(service.name)), ("characteristics", .array(service.characteristics.map(json))),
        ])
    }

    private static func json(_ characteristic: Characteristic) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("type", .string(characteristic.type.rawValue)), ("metadata", json(characteristic.metadata)),
        ]
        if let value = characteristic.value { members.append(("value", json(value))) }
        return .object(members)
    }

    private static func json(_ metadata: CharacteristicMetadata) -> JSON {
        var members: [(key: String, value: JSON)] = [("format", .string(metadata.format.rawValue))]
        func add(_ key: String, _ value: JSON?) {
            if let value { members.append((key, value)) }
        }
        add("unit", metadata.unit.map { .string($0.rawValue) })
        add("minimumValue", metadata.minimumValue.map(number))
        add("maximumValue", metadata.maximumValue.map(number))
        add("stepValue", metadata.stepValue.map(number))
        add("maxLength", metadata.maxLength.map(JSON.integer))
        add("validValues", metadata.validValues.map { .array($0.map(JSON.integer)) })
        add("validStrings", metadata.validStrings.map { .array($0.map(JSON.string)) })
        members.append(("permissions", .integer(metadata.permissions.rawValue)))
        return .object(members)
    }

    /// An enum with an associated value as `Codable` synthesizes it: `{"case":{"_0":value}}`.
    private static func json(_ value: CharacteristicValue) -> JSON {
        let (kind, payload): (String, JSON) =
            switch value {
            case .bool(let bool): ("bool", .bool(bool))
            case .int(let int): ("int", .integer(int))
            case .float(let float): ("float", number(float))
            case .string(let text): ("string", .string(text))
            case .data(let data): ("data", .string(data.base64EncodedString()))
            }
        return .object([(kind, .object([("_0", payload)]))])
    }

    /// Not finite numbers never reach the model (validation refuses them); should one, it is written
    /// as 0 rather than as `null`, which would not read back.
    private static func number(_ number: Double) -> JSON {
        .number(number.isFinite ? number : 0)
    }

    // MARK: Reading

    private static func service(_ json: JSON) throws(StoredJSONError) -> Service {
        _ = try members(json, "a service")
        return Service(
            id: ServiceID(rawValue: try required(member(json, "id", \.stringValue), "a service's id")),
            type: ServiceType(rawValue: try required(member(json, "type", \.stringValue), "a service's type")),
            name: try required(member(json, "name", \.stringValue), "a service's name"),
            characteristics: try array(
                try required(member(json, "characteristics", { $0 }), "characteristics"), "characteristics"
            ) {
                json throws(StoredJSONError) in try characteristic(json)
            })
    }

    private static func characteristic(_ json: JSON) throws(StoredJSONError) -> Characteristic {
        _ = try members(json, "a characteristic")
        return Characteristic(
            type: CharacteristicType(
                rawValue: try required(member(json, "type", \.stringValue), "a characteristic's type")),
            metadata: try metadata(try required(member(json, "metadata", { $0 }), "a characteristic's metadata")),
            value: try member(json, "value", { $0 }).map { json throws(StoredJSONError) in try value(json) })
    }

    private static func metadata(_ json: JSON) throws(StoredJSONError) -> CharacteristicMetadata {
        _ = try members(json, "metadata")
        return CharacteristicMetadata(
            format: CharacteristicFormat(rawValue: try required(member(json, "format", \.stringValue), "a format")),
            unit: try member(json, "unit", \.stringValue).map(CharacteristicUnit.init),
            minimumValue: try member(json, "minimumValue", \.numberValue),
            maximumValue: try member(json, "maximumValue", \.numberValue),
            stepValue: try member(json, "stepValue", \.numberValue),
            maxLength: try member(json, "maxLength", \.integerValue),
            validValues: try member(json, "validValues", { $0 }).map { json throws(StoredJSONError) in
                try array(json, "valid values") { json throws(StoredJSONError) in
                    try required(json.integerValue, "a valid value")
                }
            },
            validStrings: try member(json, "validStrings", { $0 }).map { json throws(StoredJSONError) in
                try array(json, "valid strings") { json throws(StoredJSONError) in
                    try required(json.stringValue, "a valid string")
                }
            },
            permissions: CharacteristicPermissions(
                rawValue: try required(member(json, "permissions", \.integerValue), "permissions")))
    }

    /// `{"case":{"_0":payload}}`: one case, with its payload.
    private static func value(_ json: JSON) throws(StoredJSONError) -> CharacteristicValue {
        let cases = try members(json, "a value")
        guard cases.count == 1, let (kind, associated) = cases.first, let payload = associated["_0"] else {
            throw StoredJSONError("a value is not one case with its payload: \(json.serialized)")
        }
        let value: CharacteristicValue? =
            switch kind {
            case "bool": payload.boolValue.map(CharacteristicValue.bool)
            case "int": payload.integerValue.map(CharacteristicValue.int)
            case "float": payload.numberValue.map(CharacteristicValue.float)
            case "string": payload.stringValue.map(CharacteristicValue.string)
            case "data": payload.stringValue.flatMap { Data(base64Encoded: $0) }.map(CharacteristicValue.data)
            default: nil
            }
        return try required(value, "a value", json)
    }

    private static func members(_ json: JSON, _ what: String) throws(StoredJSONError) -> [(key: String, value: JSON)] {
        try required(json.objectMembers, what, json)
    }

    /// The member `key` of the object `json` as `read` takes it; nil when it is absent or `null`, as
    /// for an absent optional. One that is there and does not read is an error.
    private static func member<Value>(_ json: JSON, _ key: String, _ read: (JSON) -> Value?) throws(StoredJSONError)
        -> Value?
    {
        guard let member = json[key], !member.isNull else { return nil }
        return try required(read(member), "\"\(key)\"", member)
    }

    private static func array<Element>(
        _ json: JSON, _ what: String, _ element: (JSON) throws(StoredJSONError) -> Element
    ) throws(StoredJSONError) -> [Element] {
        guard case .array(let elements) = json else { throw StoredJSONError("\(what) are not an array") }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for json in elements { result.append(try element(json)) }
        return result
    }

    private static func required<Value>(_ value: Value?, _ what: String, _ json: JSON? = nil) throws(StoredJSONError)
        -> Value
    {
        guard let value else {
            throw StoredJSONError(
                "\(what) is missing or not what it should be" + (json.map { ": \($0.serialized)" } ?? ""))
        }
        return value
    }
}

/// A JSON column of the database that does not read as what the gateway writes there.
struct StoredJSONError: Error, CustomStringConvertible {
    let reason: String

    init(_ reason: String) { self.reason = reason }

    var description: String { "a JSON column does not read: \(reason)" }
}
