import HomeModel
import Testing

@testable import Gateway

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
