import Accessories
import Testing
import Yams

/// `PlainScalarTags` decides on bytes what Yams' regular expressions decide: every string here must
/// get the tag Yams' default rules (less timestamp, merge and value, which a demo home does not use)
/// give it.
@Suite struct PlainScalarTagsTests {
    static let yamsRules = Resolver.default.removing(.timestamp).removing(.merge).removing(.value)

    static func yamsTag(_ string: String) -> Yams.Tag.Name {
        yamsRules.resolveTag(of: Node(string, Yams.Tag(.implicit, yamsRules)))
    }

    @Test(arguments: [
        "", "~", "null", "Null", "NULL", "nULL", "yes", "Yes", "YES", "yEs", "no", "on", "OFF", "true", "False",
        "TRUE", "y", "0", "00", "07", "08", "0_", "0o", "0o7", "0o8", "0b", "0b1", "0b2", "0x", "0x1F", "0xg", "+0",
        "-0", "+", "-", "12", "1_000", "-12", "+12", "1:30", "1:60", "1:5", "1:05:59", "1:", "1:x", "0:30",
        "1.5", "1.", ".5", "._", ".", "1e5", "1e+5", "1E-5", ".5e5", ".5e+5", "1.5e", "1.5e+", "+.inf", "-.Inf",
        ".INF", ".inf", ".nan", ".NaN", "-.nan", "1:30.5", "1:30.", "1:30:00.25", "1:3.5", "1:30e5", "1__",
        "switch-1", "Switch 1", "21.5", "-21.5", "true\n", "12\r\n", "12\n\n", "null\n", "\n", "1\u{2028}",
        "1\u{85}", "yes ", " yes", "١٢", "１２", "1e٣",
    ])
    func sameTagAsYams(_ string: String) {
        #expect(PlainScalarTags.tag(of: string) == Self.yamsTag(string), "\(string.debugDescription)")
    }

    /// Strings made of the characters the rules care about, in every short arrangement a seeded
    /// generator reaches.
    @Test func sameTagAsYamsOnGeneratedStrings() {
        let alphabet = Array("0123456789_+-.:eEobxXaAfFinINtTrRuUlLsSyYnN~ \n")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let length = Int(next() % 9)
            // Half the strings are drawn from digits and the separators only, where the number rules differ.
            let pool = next() % 2 == 0 ? alphabet : Array("0123456789_.:+-e")
            let string = String((0..<length).map { _ in pool[Int(next() % UInt64(pool.count))] })
            if PlainScalarTags.tag(of: string) != Self.yamsTag(string) { mismatches.append(string) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20).map(\.debugDescription))")
    }

    @Test func retagKeepsQuotedScalarsAndMarks() throws {
        let yaml = "a: 1\nb: '1'\nc: [true, \"true\", 2.5, x]\n"
        let node = try #require(try Yams.compose(yaml: yaml, .basic).map(PlainScalarTags.retag))
        let fast = try YAMLDecoder().decode(Sample.self, from: node)
        let slow = try YAMLDecoder().decode(Sample.self, from: yaml)
        #expect(fast == slow)
        #expect(node.mapping?["c"]?.sequence?[0].scalar?.tag.description == Yams.Tag.Name.bool.rawValue)
        #expect(node.mapping?["b"]?.scalar?.tag.description == Yams.Tag.Name.str.rawValue)
        #expect(node.mapping?["c"]?.mark?.line == 3)
    }

    struct Sample: Decodable, Equatable {
        var a: Int
        var b: String
        var c: [Value]

        enum Value: Decodable, Equatable {
            case bool(Bool), double(Double), string(String)

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let bool = try? container.decode(Bool.self) {
                    self = .bool(bool)
                } else if let double = try? container.decode(Double.self) {
                    self = .double(double)
                } else {
                    self = .string(try container.decode(String.self))
                }
            }
        }
    }
}
