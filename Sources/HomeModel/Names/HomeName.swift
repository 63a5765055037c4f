/// HomeKit's naming rules, in one place.
///
/// A name may contain only letters, digits, spaces and apostrophes and must start with a letter or a
/// digit. Two names are the same name when they are equal ignoring case, spaces and apostrophes, so
/// "Home1" and "home 1" collide. The Gateway matches incoming topic names with ``matches(_:_:)`` so a
/// command for `living room` finds `Living Room`.
package enum HomeName {
    /// The topic-facing name of every home's default room (HomeKit's `roomForEntireHome`).
    ///
    /// It starts with `$`, which no valid name can, so it never collides with a room a user creates.
    package static let defaultRoom = "$default"

    /// The longest name, in characters. Names become topic levels, and an MQTT topic holds at most
    /// 65,535 bytes; 64 is more than any household needs.
    static let maximumLength = 64

    /// The key two names compare by: lowercased, without spaces and apostrophes.
    package static func key(_ name: String) -> String {
        String(name.lowercased().filter { !isSpace($0) && !isApostrophe($0) })
    }

    /// A hash of ``key(_:)``: names that ``matches(_:_:)`` takes for the same name have the same
    /// hash, so a different hash rules a match out without comparing the names. (FNV-1a, not
    /// `Hasher`: no per-process seed is needed, and an ASCII name is hashed without building its key.)
    package static func keyHash(_ name: String) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        var ascii = true
        for byte in name.utf8 {
            if byte >= 0x80 {
                ascii = false
                break
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "'"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): add(byte + 0x20)
            default: add(byte)
            }
        }
        guard !ascii else { return Int(truncatingIfNeeded: hash) }
        hash = 0xCBF2_9CE4_8422_2325
        for byte in key(name).utf8 { add(byte) }
        return Int(truncatingIfNeeded: hash)
    }

    /// Whether two names are the same name under HomeKit's comparison.
    ///
    /// Commands look names up by this on every message, so ASCII names (nearly all) are compared in
    /// place; other names go through ``key(_:)``.
    package static func matches(_ lhs: String, _ rhs: String) -> Bool {
        // Compared on their bytes in place: a home's every name is compared with each new one.
        var (left, right) = (lhs, rhs)
        let ascii = left.withUTF8 { left in right.withUTF8 { right in asciiMatches(left, right) } }
        return ascii ?? (key(lhs) == key(rhs))
    }

    /// `matches` for two ASCII names, without allocating; nil when either is not ASCII.
    private static func asciiMatches(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>)
        -> Bool?
    {
        if lastCharactersDiffer(left, right) { return false }
        var i = 0
        var j = 0
        while true {
            while i < left.count, left[i] == UInt8(ascii: " ") || left[i] == UInt8(ascii: "'") { i += 1 }
            while j < right.count, right[j] == UInt8(ascii: " ") || right[j] == UInt8(ascii: "'") { j += 1 }
            let leftEnded = i == left.count
            let rightEnded = j == right.count
            if leftEnded || rightEnded {
                if leftEnded && rightEnded { return true }
                return (leftEnded ? right[j] : left[i]) >= 0x80 ? nil : false
            }
            var l = left[i]
            var r = right[j]
            if l >= 0x80 || r >= 0x80 { return nil }
            if l >= UInt8(ascii: "A") && l <= UInt8(ascii: "Z") { l += 0x20 }
            if r >= UInt8(ascii: "A") && r <= UInt8(ascii: "Z") { r += 0x20 }
            if l != r { return false }
            i += 1
            j += 1
        }
    }

    /// Whether the last characters that count (spaces and apostrophes skipped) are ASCII and differ
    /// case-insensitively: then the names differ, whatever comes before. Names of one home often share
    /// their beginning ("Switch 17", "Switch 18") and rarely their end, and every new name is compared
    /// with all of the home's, so this decides most comparisons at once. False says nothing.
    private static func lastCharactersDiffer(
        _ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        func last(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt8? {
            var index = bytes.count - 1
            while index >= 0, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "'") { index -= 1 }
            guard index >= 0, bytes[index] < 0x80 else { return nil }
            let byte = bytes[index]
            return byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
        }
        guard let l = last(left), let r = last(right) else { return false }
        return l != r
    }

    /// The longest name in UTF-8 bytes. Characters alone do not bound a name's size (one character may
    /// carry any number of combining marks), and a name is a topic level: 64 characters of at most
    /// four bytes each keep every topic far under MQTT's 65,535 bytes.
    static let maximumBytes = 256

    /// Checks a new name against the character rules; uniqueness is checked where the namespace is
    /// known. Every refusal says which rule the name breaks.
    package static func validate(_ name: String) throws(HomeError) {
        guard !name.isEmpty else {
            throw HomeError(.missingParameter, "A name is required.")
        }
        guard name.utf8.count <= maximumBytes else {
            throw HomeError(
                .invalidParameter,
                "The name '\(name.prefix(20))…' is \(name.utf8.count) bytes long; a name has at most \(maximumBytes) bytes (UTF-8)."
            )
        }
        guard name.count <= maximumLength else {
            throw HomeError(
                .invalidParameter,
                "The name '\(name.prefix(20))…' is \(name.count) characters long; a name has at most \(maximumLength)."
            )
        }
        if let invisible = name.unicodeScalars.first(where: isInvisible) {
            throw HomeError(
                .nameContainsProhibitedCharacters,
                "The name contains an invisible character (\(codePoint(invisible))); a name has only visible letters, digits, spaces and apostrophes."
            )
        }
        if let mark = name.first(where: { $0.unicodeScalars.first.map(isMark) ?? false }) {
            throw HomeError(
                .nameContainsProhibitedCharacters,
                "The name contains a combining mark with no letter before it (\(codePoint(mark.unicodeScalars.first!))); a mark may only follow a letter or digit."
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
        if let last = name.last, isSpace(last) {
            throw HomeError(.invalidParameter, "The name '\(name)' ends with a space; a name must not.")
        }
        guard !key(name).isEmpty else {
            throw HomeError(.missingParameter, "A name is required.")
        }
    }

    /// A valid name made from text that may not be one (a device's own name, `weather_sensor`):
    /// other characters become spaces, runs of spaces one, and what cannot start or end a name is
    /// cut; nil when nothing usable is left. Drivers name what they find with it.
    package static func suggestion(from text: String) -> String? {
        var words: [String] = []
        var word = ""
        for character in text {
            if isAllowed(character), !isSpace(character), !character.unicodeScalars.contains(where: isInvisible) {
                word.append(character)
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        var name = words.joined(separator: " ")
        while let first = name.first, !(first.isLetter || first.isNumber) {
            name.removeFirst()
            name = String(name.drop { $0 == " " })
        }
        if name.count > maximumLength { name = String(name.prefix(maximumLength)) }
        while name.last == " " { name.removeLast() }
        guard (try? validate(name)) != nil else { return nil }
        return name
    }

    /// `base` if it is not taken, else the first of `base 2`, `base 3`, … that is not: how a device's
    /// second `Outlet` is named. `base` is cut so that the number fits in ``maximumLength``.
    package static func firstFree(_ base: String, isTaken: (String) -> Bool) -> String {
        var name = base
        var number = 2
        while isTaken(name) {
            let suffix = " \(number)"
            var head = String(base.prefix(maximumLength - suffix.count))
            while head.last == " " { head.removeLast() }
            name = head + suffix
            number += 1
        }
        return name
    }

    /// Scalars that show nothing: controls, format characters (zero-width spaces and joiners,
    /// direction marks), unassigned and private-use code points, and the default-ignorable ones (the
    /// Hangul filler, variation selectors) that look like a blank or like nothing at all.
    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .privateUse, .unassigned, .surrogate, .lineSeparator, .paragraphSeparator: true
        default: scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        [.nonspacingMark, .spacingMark, .enclosingMark].contains(scalar.properties.generalCategory)
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func isAllowed(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || isSpace(character) || isApostrophe(character)
    }

    private static func isSpace(_ character: Character) -> Bool { character == " " }

    private static func isApostrophe(_ character: Character) -> Bool {
        character == "'" || character == "\u{2019}"
    }
}
