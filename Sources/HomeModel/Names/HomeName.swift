/// HomeKit's naming rules, in one place.
///
/// A name may contain only letters, digits, spaces and apostrophes and must start with a letter or a
/// digit. Two names are the same name when they are equal ignoring case, spaces and apostrophes, so
/// "Home1" and "home 1" collide. The Gateway matches incoming topic names with ``matches(_:_:)`` so a
/// command for `living room` finds `Living Room`.
public enum HomeName {
    /// The topic-facing name of every home's default room (HomeKit's `roomForEntireHome`).
    ///
    /// It starts with `$`, which no valid name can, so it never collides with a room a user creates.
    public static let defaultRoom = "$default"

    /// The longest name, in characters. Names become topic levels, and an MQTT topic holds at most
    /// 65,535 bytes; 64 is more than any household needs.
    public static let maximumLength = 64

    /// The key two names compare by: lowercased, without spaces and apostrophes.
    public static func key(_ name: String) -> String {
        String(name.lowercased().filter { !isSpace($0) && !isApostrophe($0) })
    }

    /// Whether two names are the same name under HomeKit's comparison.
    ///
    /// Commands look names up by this on every message, so ASCII names (nearly all) are compared in
    /// place; other names go through ``key(_:)``.
    public static func matches(_ lhs: String, _ rhs: String) -> Bool {
        asciiMatches(lhs.utf8, rhs.utf8) ?? (key(lhs) == key(rhs))
    }

    /// `matches` for two ASCII names without allocating; nil when either is not ASCII.
    private static func asciiMatches(_ lhs: String.UTF8View, _ rhs: String.UTF8View) -> Bool? {
        var left = lhs.makeIterator()
        var right = rhs.makeIterator()
        while true {
            let l = nextKeyByte(&left)
            let r = nextKeyByte(&right)
            if let l, l >= 0x80 { return nil }
            if let r, r >= 0x80 { return nil }
            if l != r { return false }
            if l == nil { return true }
        }
    }

    /// The next byte that counts for the key, lowercased: spaces and apostrophes are skipped.
    private static func nextKeyByte(_ iterator: inout String.UTF8View.Iterator) -> UInt8? {
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "'"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte + 0x20
            default: return byte
            }
        }
        return nil
    }

    /// Checks a new name against the character rules; uniqueness is checked where the namespace is known.
    public static func validate(_ name: String) throws(HomeError) {
        guard !name.isEmpty else {
            throw HomeError(.missingParameter, "A name is required.")
        }
        guard name.count <= maximumLength else {
            throw HomeError(
                .invalidParameter,
                "The name '\(name.prefix(20))…' is \(name.count) characters long; at most \(maximumLength) are allowed."
            )
        }
        if let bad = name.first(where: { !isAllowed($0) }) {
            throw HomeError(
                .nameContainsProhibitedCharacters,
                "The name '\(name)' contains '\(bad)'; only letters, digits, spaces and apostrophes are allowed."
            )
        }
        if let first = name.first, !(first.isLetter || first.isNumber) {
            throw HomeError(
                .nameDoesNotStartWithValidCharacters,
                "The name '\(name)' must start with a letter or a digit."
            )
        }
        guard !key(name).isEmpty else {
            throw HomeError(.missingParameter, "A name is required.")
        }
    }

    private static func isAllowed(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || isSpace(character) || isApostrophe(character)
    }

    private static func isSpace(_ character: Character) -> Bool { character == " " }

    private static func isApostrophe(_ character: Character) -> Bool {
        character == "'" || character == "\u{2019}"
    }
}
