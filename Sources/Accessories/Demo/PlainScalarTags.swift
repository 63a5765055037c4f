import Yams

/// The tags Yams' default resolver gives plain scalars (YAML 1.1's booleans, integers, floats and
/// null; a demo home has no timestamps, merge keys or `=`), decided on the bytes instead of with a
/// regular expression per kind.
///
/// Yams resolves a scalar's tag lazily, and every mapping lookup and duplicate-key check compares
/// and hashes tags: with 10,000 devices the regular expressions were a third of reading the file.
/// ``retag(_:)`` gives every plain scalar its tag once, after the text was composed with
/// `Resolver.basic` (which has no rules), so nothing afterwards needs a regular expression.
/// `PlainScalarTagsTests` holds ``tag(of:)`` to Yams' own rules.
public enum PlainScalarTags {
    /// `yaml` composed without Yams' rules and retagged (``retag(_:)``): the nodes Yams' default
    /// resolver gives, with no regular expression compiled. Besides the time, that keeps ICU's regular
    /// expression engine (`NSRegularExpression`) and the pages it touches out of the process.
    public static func compose(yaml: String) throws -> Node? {
        try Yams.compose(yaml: yaml, .basic).map(retag)
    }

    /// `node` with each plain scalar that resolves to a bool, an int, a float or null tagged so;
    /// everything else as it was. A plain string keeps its implicit tag, as under Yams' default
    /// resolver, which resolves a value's tag only when asked: `Bool.construct` reads `tRUE` as true
    /// while the tag is implicit and refuses it once it is `str`.
    public static func retag(_ node: Node) -> Node {
        switch node {
        case .scalar(var scalar):
            guard scalar.tag.description == Tag.Name.implicit.rawValue else { return node }
            let name = tag(of: scalar.string)
            guard name != .str else { return node }
            scalar.tag = Tag(name, .basic)
            return .scalar(scalar)
        case .mapping(var mapping):
            for index in mapping.indices {
                let (key, value) = mapping[index]
                mapping[index] = (retag(key), retag(value))
            }
            return .mapping(mapping)
        case .sequence(var sequence):
            for index in sequence.indices { sequence[index] = retag(sequence[index]) }
            return .sequence(sequence)
        case .alias:
            return node
        }
    }

    /// The tag the rules bool, int, float and null (in that order) give `string`; `str` otherwise.
    public static func tag(of string: String) -> Tag.Name {
        var string = string
        return string.withUTF8 { bytes in
            var end = bytes.count
            // ICU's `$` also matches before one line terminator at the very end.
            if end >= 2, bytes[end - 2] == 0x0D, bytes[end - 1] == 0x0A {
                end -= 2
            } else if end >= 1, [0x0A, 0x0B, 0x0C, 0x0D].contains(bytes[end - 1]) {
                end -= 1
            } else if end >= 2, bytes[end - 2] == 0xC2, bytes[end - 1] == 0x85 {
                end -= 2
            } else if end >= 3, bytes[end - 3] == 0xE2, bytes[end - 2] == 0x80, [0xA8, 0xA9].contains(bytes[end - 1]) {
                end -= 3
            }
            let scalar = Bytes(base: bytes, end: end)
            if scalar.isBool { return .bool }
            if scalar.isInt { return .int }
            if scalar.isFloat { return .float }
            if scalar.isNull { return .null }
            return .str
        }
    }

    /// A scalar's bytes up to `end`, read by the rules below.
    private struct Bytes {
        let base: UnsafeBufferPointer<UInt8>
        let end: Int

        subscript(index: Int) -> UInt8? { index < end ? base[index] : nil }

        func equals(_ text: StaticString) -> Bool {
            guard text.utf8CodeUnitCount == end else { return false }
            return (0..<end).allSatisfy { base[$0] == text.utf8Start[$0] }
        }

        func equalsAny(_ texts: [StaticString]) -> Bool { texts.contains { equals($0) } }

        /// `^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`
        var isBool: Bool {
            equalsAny([
                "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
                "ON", "off", "Off", "OFF",
            ])
        }

        /// `^(?:~|null|Null|NULL|)$`
        var isNull: Bool { end == 0 || equalsAny(["~", "null", "Null", "NULL"]) }

        /// `^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+`
        /// `|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`
        var isInt: Bool {
            let start = self[0] == UInt8(ascii: "+") || self[0] == UInt8(ascii: "-") ? 1 : 0
            guard let first = self[start] else { return false }
            if first == UInt8(ascii: "0") {
                switch self[start + 1] {
                case nil: return true
                case UInt8(ascii: "b"):
                    return allFrom(start + 2, nonEmpty: true) { $0 == 0x30 || $0 == 0x31 || $0 == 0x5F }
                case UInt8(ascii: "x"): return allFrom(start + 2, nonEmpty: true, Self.isHexOrUnderscore)
                case UInt8(ascii: "o"): return allFrom(start + 2, nonEmpty: true, Self.isOctalOrUnderscore)
                default: return allFrom(start + 1, nonEmpty: true, Self.isOctalOrUnderscore)
                }
            }
            guard Self.isDigit(first), first != UInt8(ascii: "0") else { return false }
            let digitsEnd = skip(from: start + 1, Self.isDigitOrUnderscore)
            if digitsEnd == end { return true }
            return sexagesimalEnd(from: digitsEnd) == end
        }

        /// `^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?`
        /// `|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`
        var isFloat: Bool {
            let signed = self[0] == UInt8(ascii: "+") || self[0] == UInt8(ascii: "-")
            let start = signed ? 1 : 0
            guard let first = self[start] else { return false }
            if first == UInt8(ascii: ".") {
                if isWord(from: start + 1, ["inf", "Inf", "INF"]) { return true }
                if signed { return false }
                if isWord(from: 1, ["nan", "NaN", "NAN"]) { return true }
                // \.[0-9_]+(?:[eE][-+][0-9]+)?
                let fractionEnd = skip(from: 1, Self.isDigitOrUnderscore)
                guard fractionEnd > 1 else { return false }
                return fractionEnd == end || exponentEnd(from: fractionEnd, signRequired: true) == end
            }
            guard Self.isDigit(first) else { return false }
            let digitsEnd = skip(from: start + 1, Self.isDigitOrUnderscore)
            if let sexagesimal = sexagesimalEnd(from: digitsEnd) {
                // [0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                guard self[sexagesimal] == UInt8(ascii: ".") else { return false }
                return skip(from: sexagesimal + 1, Self.isDigitOrUnderscore) == end
            }
            var index = digitsEnd
            if self[index] == UInt8(ascii: ".") { index = skip(from: index + 1, Self.isDigitOrUnderscore) }
            return index == end || exponentEnd(from: index, signRequired: false) == end
        }

        /// Where `(?::[0-5]?[0-9])+` starting at `index` ends; nil when it does not match once.
        private func sexagesimalEnd(from index: Int) -> Int? {
            var index = index
            var matched = false
            while self[index] == UInt8(ascii: ":") {
                guard let digit = self[index + 1], Self.isDigit(digit) else { break }
                // [0-5][0-9] when both are there: one digit would leave a digit where `:` or the end must follow.
                if digit <= UInt8(ascii: "5"), let next = self[index + 2], Self.isDigit(next) {
                    index += 3
                } else {
                    index += 2
                }
                matched = true
            }
            return matched ? index : nil
        }

        /// Where `[eE][-+]?[0-9]+` (`[eE][-+][0-9]+` when `signRequired`) at `index` ends.
        private func exponentEnd(from index: Int, signRequired: Bool) -> Int? {
            guard self[index] == UInt8(ascii: "e") || self[index] == UInt8(ascii: "E") else { return nil }
            var index = index + 1
            if self[index] == UInt8(ascii: "+") || self[index] == UInt8(ascii: "-") {
                index += 1
            } else if signRequired {
                return nil
            }
            let digitsEnd = skip(from: index, Self.isDigit)
            return digitsEnd > index ? digitsEnd : nil
        }

        private func isWord(from index: Int, _ words: [StaticString]) -> Bool {
            words.contains { word in
                word.utf8CodeUnitCount == end - index
                    && (0..<word.utf8CodeUnitCount).allSatisfy { base[index + $0] == word.utf8Start[$0] }
            }
        }

        private func skip(from index: Int, _ accepted: (UInt8) -> Bool) -> Int {
            var index = index
            while index < end, accepted(base[index]) { index += 1 }
            return index
        }

        private func allFrom(_ index: Int, nonEmpty: Bool, _ accepted: (UInt8) -> Bool) -> Bool {
            (!nonEmpty || index < end) && skip(from: index, accepted) == end
        }

        private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        private static func isDigitOrUnderscore(_ byte: UInt8) -> Bool { isDigit(byte) || byte == 0x5F }
        private static func isOctalOrUnderscore(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x37) || byte == 0x5F
        }
        private static func isHexOrUnderscore(_ byte: UInt8) -> Bool {
            isDigitOrUnderscore(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
        }
    }
}
