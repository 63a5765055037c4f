import Foundation
import JSON
import Testing

@testable import HomeModel

/// The database's services column goes through ``ServicesJSON`` (a `JSON` value) instead of `Codable`:
/// what it writes must read back, through it and through the `Codable` conformance that wrote the
/// column before, as exactly what was written, for every kind of value and metadata, and names that
/// need escaping.
@Suite("Services written for the group commit read back as they were")
struct ServicesJSONTests {
    static func readBack(_ services: [Service]) throws -> [Service] {
        let text = ServicesJSON.encode(services)
        let ours = try ServicesJSON.decode(text)
        #expect(ours == services)
        return try JSONDecoder().decode([Service].self, from: Data(text.utf8))
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
        .init(format: .string, validStrings: ["manual", "eco \"night\"", "ümlaut"], permissions: [.read, .write]),
    ]

    /// A service per awkward name, each with every kind of value and metadata.
    static var everyKindOfService: [Service] {
        awkwardNames.enumerated().map { index, name in
            let characteristics = values.enumerated().map { offset, value in
                Characteristic(
                    type: offset == 0 ? CharacteristicType(rawValue: name) : CharacteristicType(rawValue: "C\(offset)"),
                    metadata: metadata[offset % metadata.count], value: value)
            }
            return Service(
                id: ServiceID(rawValue: "s\(index) \(name)"), type: ServiceType(rawValue: name), name: name,
                characteristics: characteristics)
        }
    }

    @Test("every kind of value, metadata and awkward name")
    func everyKind() throws {
        let services = Self.everyKindOfService
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

    // MARK: Reading what JSONEncoder wrote

    /// Every service set the tests above write.
    static var fixtures: [[Service]] {
        let types: [CharacteristicType] = [.name, .identify, .on, .brightness, .hue, .saturation, .colorTemperature]
        let catalog = Service(
            id: "catalog", type: .lightbulb, name: "Catalog",
            characteristics: types.map { Characteristic.standard($0, .int(1)) })
        return [
            everyKindOfService, [], [Service(id: "e", type: .lightbulb, name: "Empty", characteristics: [])], [catalog],
        ]
    }

    /// What the database's decoder before made of `text`, or nil where it refuses it.
    static func decoderReading(_ text: String) -> [Service]? {
        try? JSONDecoder().decode([Service].self, from: Data(text.utf8))
    }

    /// What `ServicesJSON` makes of `text`, or nil where it refuses it.
    static func reading(_ text: String) -> [Service]? {
        try? ServicesJSON.decode(text)
    }

    @Test("the reader takes what ServicesJSON and JSONEncoder (as GRDB configures it) write, as JSONDecoder reads it")
    func readerTakesBothWriters() throws {
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        for services in Self.fixtures {
            let ours = ServicesJSON.encode(services)
            #expect(try ServicesJSON.decode(ours) == services)
            for encoder in [JSONEncoder(), sorted] {
                let theirs = String(decoding: try encoder.encode(services), as: UTF8.self)
                #expect(try ServicesJSON.decode(theirs) == services, "\(theirs.prefix(200))")
                #expect(Self.decoderReading(theirs) == services)
            }
        }
        let nulls =
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"On","metadata":{"format":"bool","unit":null,"permissions":3},"value":null}]}]"#
        #expect(Self.reading(nulls) != nil)
        #expect(Self.reading(nulls) == Self.decoderReading(nulls))
        #expect(try ServicesJSON.decodeStrings(#"[]"#) == [])
        #expect(try ServicesJSON.decodeStrings(#"["a","b \"c\" \u00e9 \ud83d\udca1"]"#) == ["a", "b \"c\" é 💡"])
        #expect(throws: StoredJSONError.self) { try ServicesJSON.decodeStrings(#"["a",]"#) }
        #expect(ServicesJSON.encodeStrings(["a", "b \"c\""]) == #"["a","b \"c\""]"#)
    }

    /// Text that is not JSON (RFC 8259) but that Foundation's `JSONDecoder` reads: `JSON` refuses it
    /// (the random damage below finds trailing commas).
    static let notJSONFoundationReads = [
        #"[{"id":"s","id":"t","type":"T","name":"n","characteristics":[]}]"#,
        #"[{"id":"s","type":"T","name":"n","characteristics":[],}]"#,
        #"[{"id":"s","type":"T","name":"n","characteristics":[]},]"#,
    ]

    /// Valid JSON that Foundation's `JSONDecoder` refuses and `JSON` reads, as its grammar says (both
    /// found by random damage).
    static let validJSONFoundationRefuses = [
        // an exponent right after a lone 0
        #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"float","stepValue":0E1,"permissions":1},"value":{"float":{"_0":0e-1}}}]}]"#,
        // a double that underflows to zero
        #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"float","permissions":1},"value":{"float":{"_0":5e-328}}}]}]"#,
    ]

    @Test(
        "what JSONDecoder reads the reader reads the same, and what it refuses the reader refuses, but for JSON's grammar",
        arguments: [
            // null for an optional: the decoder reads it as absent
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"On","metadata":{"format":"bool","unit":null,"permissions":3},"value":null}]}]"#,
            // whitespace, unknown and repeated keys, missing required ones
            #"[ {"id":"s","type":"T","name":"n","characteristics":[]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[],"extra":1}]"#,
            #"[{"id":"s","type":"T","characteristics":[]}]"#,
            // numbers: a fraction or exponent where an integer is wanted, leading zeros, bare dots
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"int","permissions":1.0},"value":{"int":{"_0":1e2}}}]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"int","permissions":01},"value":{"int":{"_0":-0}}}]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"float","minimumValue":.5,"permissions":1},"value":{"float":{"_0":1.}}}]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"float","maximumValue":1e400,"permissions":1},"value":{"float":{"_0":-1.5E-3}}}]}]"#,
            // values: unknown case, two cases, bad base64, wrong kind
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"x","permissions":1},"value":{"nope":{"_0":1}}}]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"x","permissions":1},"value":{"int":{"_0":1},"bool":{"_0":true}}}]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"x","permissions":1},"value":{"data":{"_0":"%%%"}}}]}]"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[{"type":"B","metadata":{"format":"x","permissions":1},"value":{"bool":{"_0":1}}}]}]"#,
            // strings: escapes, a lone surrogate, a raw control character
            #"[{"id":"s\/\b\f","type":"T","name":"\ud83d\udca1","characteristics":[]}]"#,
            #"[{"id":"s","type":"T","name":"\udca1","characteristics":[]}]"#,
            "[{\"id\":\"s\",\"type\":\"T\",\"name\":\"a\u{01}b\",\"characteristics\":[]}]",
            #"[{"id":"s","type":"T","name":"\x","characteristics":[]}]"#,
            // truncated and trailing
            #"[{"id":"s","type":"T","name":"n","characteristics":[]}"#,
            #"[{"id":"s","type":"T","name":"n","characteristics":[]}]x"#,
            "", "[]", "null",
        ] + notJSONFoundationReads + validJSONFoundationRefuses)
    func sameAsDecoder(_ text: String) {
        let ours = Self.reading(text)
        let theirs = Self.decoderReading(text)
        if Self.notJSONFoundationReads.contains(text) {
            #expect(theirs != nil && ours == nil, "\(text)")
        } else if Self.validJSONFoundationRefuses.contains(text) {
            #expect(theirs == nil && ours != nil, "\(text)")
        } else {
            #expect(ours == theirs, "\(text)")
        }
    }

    /// Seeded, so a run is repeatable; runs with random seeds found the two Foundation quirks above.
    @Test(
        "random damage to written services: what JSONDecoder reads, the reader reads the same unless it is not JSON",
        arguments: [UInt64(0x686F_6D65), 10_849_961_834_492_321_027])
    func randomDamage(seed start: UInt64) throws {
        var seed = start
        let base = Array(ServicesJSON.encode(Self.fixtures[0] + Self.fixtures[3]).utf8)
        let alphabet = Array(#"{}[]":,\"0123456789.-+eEtrufalsn _0xu"#.utf8)
        var taken = 0
        for round in 0..<3000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var bytes = base
            var state = seed
            for _ in 0..<(1 + Int(state % 3)) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let position = Int((state >> 16) % UInt64(bytes.count))
                let byte = alphabet[Int((state >> 40) % UInt64(alphabet.count))]
                switch (state >> 8) % 3 {
                case 0: bytes[position] = byte
                case 1: bytes.insert(byte, at: position)
                default: bytes.remove(at: position)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            guard let theirs = Self.decoderReading(text) else { continue }
            if let ours = Self.reading(text) {
                taken += 1
                #expect(ours == theirs, "round \(round), seed \(seed): \(text)")
            } else {
                #expect((try? JSON.parse(text)) == nil, "valid JSON refused: round \(round), seed \(seed): \(text)")
            }
        }
        // Some damage leaves valid services (a changed digit or letter): those must have been read.
        #expect(taken > 100)
    }
}
