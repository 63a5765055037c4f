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
        var id: String?
        var type: String?
        var name: String?
        var characteristics: [Characteristic]?
        for (key, value) in try members(json, "a service") where !value.isNull {
            switch key {
            case "id": id = try required(value.stringValue, "a service's id")
            case "type": type = try required(value.stringValue, "a service's type")
            case "name": name = try required(value.stringValue, "a service's name")
            case "characteristics":
                characteristics = try array(value, "characteristics") { json throws(StoredJSONError) in
                    try characteristic(json)
                }
            default: continue
            }
        }
        return Service(
            id: ServiceID(rawValue: try required(id, "a service's id")),
            type: ServiceType(rawValue: try required(type, "a service's type")),
            name: try required(name, "a service's name"),
            characteristics: try required(characteristics, "a service's characteristics"))
    }

    private static func characteristic(_ json: JSON) throws(StoredJSONError) -> Characteristic {
        var type: String?
        var metadata: CharacteristicMetadata?
        var value: CharacteristicValue?
        for (key, member) in try members(json, "a characteristic") where !member.isNull {
            switch key {
            case "type": type = try required(member.stringValue, "a characteristic's type")
            case "metadata": metadata = try self.metadata(member)
            case "value": value = try self.value(member)
            default: continue
            }
        }
        return Characteristic(
            type: CharacteristicType(rawValue: try required(type, "a characteristic's type")),
            metadata: try required(metadata, "a characteristic's metadata"), value: value)
    }

    private static func metadata(_ json: JSON) throws(StoredJSONError) -> CharacteristicMetadata {
        var format: String?
        var permissions: Int?
        var metadata = CharacteristicMetadata(format: .string, permissions: [])
        for (key, value) in try members(json, "metadata") where !value.isNull {
            switch key {
            case "format": format = try required(value.stringValue, "a format")
            case "permissions": permissions = try required(value.integerValue, "permissions")
            case "unit": metadata.unit = CharacteristicUnit(rawValue: try required(value.stringValue, "a unit"))
            case "minimumValue": metadata.minimumValue = try required(value.numberValue, "a minimum value")
            case "maximumValue": metadata.maximumValue = try required(value.numberValue, "a maximum value")
            case "stepValue": metadata.stepValue = try required(value.numberValue, "a step value")
            case "maxLength": metadata.maxLength = try required(value.integerValue, "a maximum length")
            case "validValues":
                metadata.validValues = try array(value, "valid values") { json throws(StoredJSONError) in
                    try required(json.integerValue, "a valid value")
                }
            case "validStrings":
                metadata.validStrings = try array(value, "valid strings") { json throws(StoredJSONError) in
                    try required(json.stringValue, "a valid string")
                }
            default: continue
            }
        }
        metadata.format = CharacteristicFormat(rawValue: try required(format, "a format"))
        metadata.permissions = CharacteristicPermissions(rawValue: try required(permissions, "permissions"))
        return metadata
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
