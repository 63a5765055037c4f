import Foundation
import Testing

@testable import HomeModel

/// The group commit writes services with ``ServicesJSON`` instead of `JSONEncoder`: what it writes must
/// read back through the same `Codable` conformance as exactly what was written, for every kind of value
/// and metadata, and names that need escaping.
@Suite("Services written for the group commit read back as they were")
struct ServicesJSONTests {
    static func readBack(_ services: [Service]) throws -> [Service] {
        try JSONDecoder().decode([Service].self, from: Data(ServicesJSON.encode(services).utf8))
    }

    static let awkwardNames = [
        "Lamp", "", "Quote \" and backslash \\", "Line\nbreak\ttab\r", "\u{01}\u{1F} control",
        "Küche 💡 灯", "slash / and \u{7F}", "{\"json\":[1]}",
    ]

    static let values: [CharacteristicValue?] = [
        nil, .bool(true), .bool(false), .int(0), .int(-42), .int(Int.max), .int(Int.min), .float(21.5),
        .float(0.1), .float(-0.0), .float(1e-7), .float(123_456_789.125), .float(1.7976931348623157e308),
        .float(5e-324), .string(""), .string("tschüss \"x\" \\ \n"), .data(Data()), .data(Data([0, 1, 2, 255])),
    ]

    static let metadata: [CharacteristicMetadata] = [
        .init(format: .bool, permissions: [.read, .write, .notify]),
        .init(
            format: .float, unit: .celsius, minimumValue: -273.1, maximumValue: 1000, stepValue: 0.1,
            permissions: [.read, .notify]),
        .init(format: .string, maxLength: 64, permissions: [.read, .hidden]),
        .init(format: .uint8, minimumValue: 0, maximumValue: 3, validValues: [0, 1, 3], permissions: [.write]),
        .init(
            format: CharacteristicFormat(rawValue: "tlv8"), unit: CharacteristicUnit(rawValue: "custom-unit"),
            validValues: [], permissions: []),
    ]

    @Test("every kind of value, metadata and awkward name")
    func everyKind() throws {
        var services: [Service] = []
        for (index, name) in Self.awkwardNames.enumerated() {
            let characteristics = Self.values.enumerated().map { offset, value in
                Characteristic(
                    type: offset == 0 ? CharacteristicType(rawValue: name) : CharacteristicType(rawValue: "C\(offset)"),
                    metadata: Self.metadata[offset % Self.metadata.count], value: value)
            }
            services.append(
                Service(
                    id: ServiceID(rawValue: "s\(index) \(name)"), type: ServiceType(rawValue: name), name: name,
                    characteristics: characteristics))
        }
        #expect(try Self.readBack(services) == services)
        #expect(try Self.readBack([]) == [])
        let emptyService = Service(id: "e", type: .lightbulb, name: "Empty", characteristics: [])
        #expect(try Self.readBack([emptyService]) == [emptyService])
    }

    @Test("every standard characteristic with its HAP metadata reads back, and equals JSONEncoder's meaning")
    func standardCatalog() throws {
        let types: [CharacteristicType] = [
            .name, .identify, .on, .brightness, .hue, .saturation, .colorTemperature, .outletInUse,
            .obstructionDetected, .motionDetected,
        ]
        let service = Service(
            id: "catalog", type: .lightbulb, name: "Catalog",
            characteristics: types.map { Characteristic.standard($0, .int(1)) })
        let ours = try Self.readBack([service])
        let theirs = try JSONDecoder().decode([Service].self, from: JSONEncoder().encode([service]))
        #expect(ours == [service])
        #expect(ours == theirs)
    }
}
