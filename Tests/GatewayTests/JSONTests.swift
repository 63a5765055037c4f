import HomeModel
import JSON
import Testing

@testable import Gateway
@testable import VirtualDevices

@Suite("JSON reading and writing")
struct JSONTests {
    @Test("values round-trip, keys keep their order, strings are escaped")
    func roundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null,-2.5,"x\"y\\z\n\u0001"],"c":{}}"#
        let json = try JSON.parse(text)
        #expect(json.serialized == #"{"b":1,"a":[true,false,null,-2.5,"x\"y\\z\n\u0001"],"c":{}}"#)
        #expect(json["b"] == .integer(1))
        #expect(try JSON.parse(#""\ud83d\ude00""#) == .string("😀"))
        // Escapes between plain runs, the highest control character, and text beyond ASCII as is
        let mixed = JSON.object([("k\u{1F}", .string("a\"b\u{1F}c\r\td\\é😀"))])
        #expect(mixed.serialized == #"{"k\u001f":"a\"b\u001fc\r\td\\é😀"}"#)
        #expect(try JSON.parse(mixed.bytes) == mixed)
    }

    @Test(
        "hostile and malformed JSON is refused with a reason",
        arguments: [
            (#"{"a":1,"a":2}"#, "duplicate key"),
            ("NaN", "NaN"),
            ("Infinity", "NaN"),
            ("1e999", "not a number"),
            ("01", "not a number"),
            ("{\"a\":1} x", "after the JSON value"),
            ("\"abc", "unterminated"),
            ("[1,]", "unexpected"),
            ("\"\\ud800\"", "surrogate"),
            ("\"a\u{1}b\"", "control character"),
            ("", "end of JSON"),
        ])
    func malformed(text: String, reason: String) {
        #expect {
            try JSON.parse(text)
        } throws: { error in
            (error as? JSONError)?.message.contains(reason) ?? false
        }
    }

    @Test("nesting deeper than the limit is refused, up to it is fine")
    func depth() throws {
        let fine = String(repeating: "[", count: JSON.maximumDepth) + String(repeating: "]", count: JSON.maximumDepth)
        #expect(throws: Never.self) { try JSON.parse(fine) }
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONError.self) { try JSON.parse(deep) }
    }

    @Test("invalid UTF-8 in a string is refused")
    func invalidUTF8() {
        #expect(throws: JSONError.self) { try JSON.parse([0x22, 0xFF, 0xFE, 0x22]) }
        // Also after an escape, and where it starts is the offset
        #expect {
            try JSON.parse([0x22, 0x61, 0xC3, 0x22])
        } throws: { error in
            (error as? JSONError).map { $0.message == "invalid UTF-8 in a string" && $0.offset == 1 } ?? false
        }
        #expect {
            try JSON.parse([0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22])
        } throws: { error in
            (error as? JSONError).map { $0.message == "invalid UTF-8 in a string" && $0.offset == 3 } ?? false
        }
    }

    @Test("\\u takes exactly four hex digits, of either case")
    func unicodeEscapes() throws {
        #expect(try JSON.parse(#""\u00e9\u00C9""#) == .string("éÉ"))
        for text in [#""\u+041""#, #""\u-041""#, #""\u 041""#, #""\u04g1""#, #""\u041""#] {
            #expect(throws: JSONError.self, "\(text)") { try JSON.parse(text) }
        }
    }

    @Test(
        "numbers follow JSON's grammar byte for byte; integers stay integers while they fit an Int",
        arguments: [
            ("0", JSON.integer(0)), ("-0", .integer(0)), ("7", .integer(7)), ("-12", .integer(-12)),
            ("9223372036854775807", .integer(Int.max)), ("-9223372036854775808", .integer(Int.min)),
            ("9223372036854775808", .number(9_223_372_036_854_775_808)),
            ("-9223372036854775809", .number(-9_223_372_036_854_775_809)),
            ("1.5", .number(1.5)), ("-0.25", .number(-0.25)), ("1e3", .number(1000)), ("2E-2", .number(0.02)),
            ("1.5e+2", .number(150)), ("15.37", .number(15.37)), ("1000.6", .number(1000.6)),
        ])
    func numbers(text: String, value: JSON) throws {
        #expect(try JSON.parse(text) == value)
        #expect(try JSON.parse("[\(text)]") == .array([value]))
    }

    @Test(
        "what only looks like a number is refused",
        arguments: ["01", "-", "-01", "1.", ".5", "1e", "1e+", "+1", "1.2.3", "1e5e5", "--1", "0x10", "1-2", "00"])
    func notNumbers(text: String) {
        #expect {
            try JSON.parse(text)
        } throws: { error in
            guard let error = error as? JSONError else { return false }
            return error.message.contains("not a number") || error.message.contains("unexpected")
        }
    }

    @Test("literals are read whole: a prefix of one, or more than one, is refused")
    func literals() throws {
        #expect(try JSON.parse("[true,false,null]") == .array([.bool(true), .bool(false), .null]))
        for text in ["tru", "nul", "fals", "trUe", "nulll", "t"] {
            #expect(throws: JSONError.self, "\(text)") { try JSON.parse(text) }
        }
    }

    @Test("a duplicate key is found in a small object and in one of many keys, wherever it is")
    func duplicates() throws {
        let keys = (0..<40).map { "k\($0)" }
        let members = keys.map { "\"\($0)\":1" }
        #expect(try JSON.parse("{" + members.joined(separator: ",") + "}")["k39"] == .integer(1))
        for (first, second) in [(0, 1), (3, 15), (0, 16), (15, 16), (2, 39), (20, 39)] {
            var doubled = members
            doubled[second] = "\"\(keys[first])\":2"
            #expect(throws: JSONError.self, "k\(first) again at \(second)") {
                try JSON.parse("{" + doubled.joined(separator: ",") + "}")
            }
        }
    }

    @Test("random values read back as they were written")
    func randomRoundTrip() throws {
        var generator = SplitMix64(seed: 15)
        for _ in 0..<2_000 {
            let value = JSON.random(depth: 3, using: &generator)
            #expect(try JSON.parse(value.bytes) == value, "\(value.serialized)")
        }
    }
}

extension JSON {
    /// A value of every kind, with strings of escapes, text beyond ASCII and keys that may repeat
    /// across objects but not within one.
    static func random(depth: Int, using generator: inout SplitMix64) -> JSON {
        let pieces = ["a", "Z", " ", "\"", "\\", "/", "\n", "\u{1}", "\u{1F}", "é", "😀", "\u{2028}", "7"]
        func text() -> String {
            (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
        }
        switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2:
            return .integer(
                Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0...63, using: &generator))
        case 3: return .number(Double(Int.random(in: -99_999...99_999, using: &generator)) / 64 + 1 / 128)
        case 4, 5: return .string(text())
        case 6:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) })
        default:
            var members: [(key: String, value: JSON)] = []
            for index in 0..<Int.random(in: 0...20, using: &generator) {
                members.append(("\(text())#\(index)", random(depth: depth - 1, using: &generator)))
            }
            return .object(members)
        }
    }
}

@Suite("Values from payloads")
struct ValueDecodingTests {
    let bool = CharacteristicMetadata(format: .bool, permissions: [.read, .write])
    let int = CharacteristicMetadata(format: .int, minimumValue: 0, maximumValue: 100, permissions: [.read, .write])
    let float = CharacteristicMetadata(format: .float, permissions: [.read, .write])
    let string = CharacteristicMetadata(format: .string, permissions: [.read, .write])

    @Test("plain text and JSON scalars are read by the characteristic's format")
    func accepted() throws {
        for text in ["true", "ON", "1", " on\n"] {
            #expect(try ValueDecoding.value(fromPayload: Array(text.utf8), for: bool) == .bool(true))
        }
        #expect(try ValueDecoding.value(fromPayload: Array("off".utf8), for: bool) == .bool(false))
        #expect(try ValueDecoding.value(fromPayload: Array("42".utf8), for: int) == .int(42))
        #expect(try ValueDecoding.value(fromPayload: Array("21.5".utf8), for: float) == .float(21.5))
        #expect(try ValueDecoding.value(fromPayload: Array("hello world".utf8), for: string) == .string("hello world"))
        #expect(try ValueDecoding.value(fromPayload: Array(#""quoted""#.utf8), for: string) == .string("quoted"))
    }

    @Test(
        "what cannot be a value is refused with its code",
        arguments: [
            ("maybe", "bool", "invalidValueType"), ("nan", "float", "invalidValueType"),
            ("inf", "float", "invalidValueType"), ("0x10", "int", "invalidValueType"),
            ("", "int", "missingParameter"), ("[1]", "int", "invalidValueType"), ("{", "int", "invalidValueType"),
        ])
    func refused(text: String, format: String, code: String) {
        let metadata = ["bool": bool, "int": int, "float": float][format]!
        #expect {
            try ValueDecoding.value(fromPayload: Array(text.utf8), for: metadata)
        } throws: { error in
            (error as? HomeError)?.code.name == code
        }
    }

    @Test(
        "whitespace at either end is trimmed, Unicode's too; inside a string it stays",
        arguments: ["\u{00A0}on", "on\u{2028}", "\u{3000}on\u{0085}", "\ton ", "\u{202F}1"])
    func trimmed(text: String) throws {
        #expect(try ValueDecoding.value(fromPayload: Array(text.utf8), for: bool) == .bool(true))
        #expect(try ValueDecoding.value(fromPayload: Array(" 42\u{2009}".utf8), for: int) == .int(42))
        #expect(try ValueDecoding.value(fromPayload: Array("a\u{00A0}b".utf8), for: string) == .string("a\u{00A0}b"))
    }

    @Test("a payload that is not UTF-8 is refused")
    func notUTF8() {
        #expect(throws: HomeError.self) { try ValueDecoding.value(fromPayload: [0xC3, 0x28], for: string) }
    }
}
