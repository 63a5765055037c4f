import Yams

/// Reading demo-home text straight into the few shapes it has, without composing it with Yams.
///
/// Yams composes a 10,000-device file in about a tenth of a second (libyaml's tokens, an event object
/// per token, a node per scalar with its tag and mark, a duplicate-key dictionary per mapping): most
/// of a start's time before the gateway connects. A demo home is block mappings and sequences of
/// flow mappings and sequences of plain words, and this reads exactly that: plain ASCII scalars on
/// one line, flow collections closed on their line, full-line and trailing comments. Anything else
/// (quotes, anchors, aliases, tags, block scalars, documents, tabs, CRLF, non-ASCII text, empty
/// values, duplicate keys, a scalar continued on the next line, a `:` or `#` that YAML could read
/// otherwise) makes it give up, and Yams reads the text and names the problems.
/// `DemoHomeScannerTests` and the `fuzz-config` target hold it to Yams' reading.
struct DemoHomeScanner {
    /// A composed value: what Yams composes for the same text, with every scalar plain.
    indirect enum Value: Equatable {
        case scalar(String)
        case mapping([(key: String, value: Value)])
        case sequence([Value])

        static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case (.scalar(let a), .scalar(let b)): a == b
            case (.sequence(let a), .sequence(let b)): a == b
            case (.mapping(let a), .mapping(let b)): a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
            default: false
            }
        }
    }

    /// Text this reader leaves to Yams.
    struct GiveUp: Error {}

    /// The text's bytes (the scanner lives within `String.withUTF8`).
    typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    /// One line with content: its indentation and its bytes after it, comment and trailing spaces cut.
    private struct Line {
        var indent: Int
        var content: Bytes
    }

    private var lines: [Line] = []
    private var next = 0

    /// The value `yaml` composes to, or nil when Yams must read it.
    static func compose(_ yaml: String) -> Value? {
        var yaml = yaml
        return yaml.withUTF8 { bytes in
            var scanner = DemoHomeScanner()
            do {
                try scanner.split(bytes)
                guard !scanner.lines.isEmpty, scanner.lines[0].indent == 0 else { return nil }
                let root = try scanner.block(indent: 0)
                guard scanner.next == scanner.lines.count else { return nil }
                return root
            } catch {
                return nil
            }
        }
    }

    // MARK: Lines

    private mutating func split(_ bytes: UnsafeBufferPointer<UInt8>) throws(GiveUp) {
        // Comments too: YAML refuses control characters anywhere, and reads some non-ASCII ones
        // (NEL, the Unicode line and paragraph separators) as line breaks, which would end a comment.
        for byte in bytes where byte != ascii("\n") && (byte < 0x20 || byte >= 0x7F) { throw GiveUp() }
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != ascii("\n") { end += 1 }
            try add(bytes[start..<end])
            start = end + 1
        }
    }

    private mutating func add(_ raw: Bytes) throws(GiveUp) {
        var indent = 0
        var index = raw.startIndex
        while index < raw.endIndex, raw[index] == ascii(" ") { index += 1 }
        indent = index - raw.startIndex
        var end = index
        while end < raw.endIndex {
            let byte = raw[end]
            // A comment starts at `#` after a space or at the start of the content.
            if byte == ascii("#"), end == index || raw[end - 1] == ascii(" ") { break }
            guard Self.allowed(byte) else { throw GiveUp() }
            end += 1
        }
        while end > index, raw[end - 1] == ascii(" ") { end -= 1 }
        guard end > index else { return }
        let content = raw[index..<end]
        // Document markers and directives.
        if content.starts(with: [ascii("-"), ascii("-"), ascii("-")]) || content.starts(with: [ascii(".")]) {
            throw GiveUp()
        }
        lines.append(Line(indent: indent, content: content))
    }

    /// Printable ASCII but for the indicators this reader does not read (quotes, anchors, aliases,
    /// tags, block scalars, directives, reserved) and `#` inside a scalar.
    private static func allowed(_ byte: UInt8) -> Bool {
        guard byte >= 0x20, byte < 0x7F else { return false }
        switch byte {
        case ascii("\""), ascii("&"), ascii("*"), ascii("!"), ascii("|"), ascii(">"), ascii("%"), ascii("@"),
            ascii("`"), ascii("?"), ascii("\\"), ascii("#"):
            return false
        default:
            return true
        }
    }

    // MARK: Block collections

    /// The block collection or scalar that starts at the next line, indented by `indent`.
    private mutating func block(indent: Int) throws(GiveUp) -> Value {
        let line = lines[next]
        guard line.indent == indent else { throw GiveUp() }
        if Self.isEntry(line.content) { return try sequence(indent: indent) }
        return try mapping(indent: indent, first: line.content)
    }

    private static func isEntry(_ content: Bytes) -> Bool {
        content.first == ascii("-") && (content.count == 1 || content[content.startIndex + 1] == ascii(" "))
    }

    /// A block sequence whose `- ` are at `indent`.
    private mutating func sequence(indent: Int) throws(GiveUp) -> Value {
        var items: [Value] = []
        while next < lines.count, lines[next].indent == indent, Self.isEntry(lines[next].content) {
            let content = lines[next].content
            var rest = content.dropFirst()
            while rest.first == ascii(" ") { rest = rest.dropFirst() }
            // `-` alone (a value on the lines below) and `- -` are Yams' to read.
            guard !rest.isEmpty, !Self.isEntry(rest) else { throw GiveUp() }
            let column = indent + (content.count - rest.count)
            if Self.keyEnd(rest) != nil {
                // `- key: value`: a mapping whose keys line up at `column`.
                items.append(try mapping(indent: column, first: rest))
            } else {
                items.append(try inline(rest))
                next += 1
                try expectNoContinuation(deeperThan: indent)
            }
        }
        // What follows belongs to an outer collection (or a mapping's next key, after a sequence at
        // its own indentation); anything deeper is misplaced.
        guard next == lines.count || lines[next].indent <= indent else { throw GiveUp() }
        return .sequence(items)
    }

    /// A block mapping whose keys are at `indent`; its first line's content is `first` (which may
    /// follow a `- ` on that line).
    private mutating func mapping(indent: Int, first: Bytes) throws(GiveUp) -> Value {
        var pairs: [(key: String, value: Value)] = []
        var content = first
        while true {
            guard let keyEnd = Self.keyEnd(content) else { throw GiveUp() }
            var keyText = content[content.startIndex..<keyEnd]
            while keyText.last == ascii(" ") { keyText = keyText.dropLast() }
            let key = try Self.plain(keyText, inFlow: false)
            guard try !Self.contains(key, in: pairs) else { throw GiveUp() }
            var rest = content[(keyEnd + 1)...]
            while rest.first == ascii(" ") { rest = rest.dropFirst() }
            next += 1
            if rest.isEmpty {
                // The value is the block below: deeper, or a sequence at the key's own indentation.
                guard next < lines.count,
                    lines[next].indent > indent
                        || (lines[next].indent == indent && Self.isEntry(lines[next].content))
                else { throw GiveUp() }
                pairs.append((key, try block(indent: lines[next].indent)))
            } else {
                pairs.append((key, try inline(rest)))
                try expectNoContinuation(deeperThan: indent)
            }
            guard next < lines.count, lines[next].indent == indent, !Self.isEntry(lines[next].content) else { break }
            content = lines[next].content
        }
        guard next == lines.count || lines[next].indent <= indent else { throw GiveUp() }
        return .mapping(pairs)
    }

    /// A line deeper than the collection after a value on one line would continue a plain scalar,
    /// or be an error: Yams reads it.
    private func expectNoContinuation(deeperThan indent: Int) throws(GiveUp) {
        if next < lines.count, lines[next].indent > indent { throw GiveUp() }
    }

    /// Where `content` has its key's `:` (followed by a space or the end), when it starts with a
    /// plain key (not a flow collection).
    private static func keyEnd(_ content: Bytes) -> Int? {
        guard let first = content.first, first != ascii("{"), first != ascii("[") else { return nil }
        var index = content.startIndex
        while index < content.endIndex {
            if content[index] == ascii(":"), index + 1 == content.endIndex || content[index + 1] == ascii(" ") {
                return index
            }
            index += 1
        }
        return nil
    }

    /// A value on the rest of a line: a flow collection closed there, or a plain scalar.
    private func inline(_ content: Bytes) throws(GiveUp) -> Value {
        if content.first == ascii("{") || content.first == ascii("[") {
            var flow = Flow(bytes: content, index: content.startIndex)
            let value = try flow.collection()
            flow.skipSpaces()
            guard flow.index == content.endIndex else { throw GiveUp() }
            return value
        }
        return .scalar(try Self.plain(content, inFlow: false))
    }

    // MARK: Flow collections

    /// A flow collection on one line: `{ key: value, ... }` and `[ value, ... ]`.
    private struct Flow {
        let bytes: Bytes
        var index: Int

        var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

        mutating func skipSpaces() {
            while current == ascii(" ") { index += 1 }
        }

        mutating func collection() throws(GiveUp) -> Value {
            let isMapping = current == ascii("{")
            let close = isMapping ? ascii("}") : ascii("]")
            index += 1
            skipSpaces()
            var items: [Value] = []
            var pairs: [(key: String, value: Value)] = []
            if current == close {
                index += 1
                return isMapping ? .mapping([]) : .sequence([])
            }
            while true {
                if isMapping {
                    let key = try scalar()
                    // `key: value`, the colon right after the key and a space after it.
                    guard current == ascii(":"), index + 1 < bytes.endIndex, bytes[index + 1] == ascii(" ") else {
                        throw GiveUp()
                    }
                    index += 1
                    skipSpaces()
                    guard try !DemoHomeScanner.contains(key, in: pairs) else { throw GiveUp() }
                    pairs.append((key, try value()))
                } else {
                    items.append(try value())
                }
                skipSpaces()
                guard let byte = current else { throw GiveUp() }
                index += 1
                if byte == close { break }
                guard byte == ascii(",") else { throw GiveUp() }
                skipSpaces()
                // A trailing comma, or an empty entry: Yams' to read.
                guard let after = current, after != close, after != ascii(",") else { throw GiveUp() }
            }
            return isMapping ? .mapping(pairs) : .sequence(items)
        }

        mutating func value() throws(GiveUp) -> Value {
            if current == ascii("{") || current == ascii("[") { return try collection() }
            return .scalar(try scalar())
        }

        /// A plain scalar up to a flow indicator or `: `.
        mutating func scalar() throws(GiveUp) -> String {
            let start = index
            while let byte = current {
                if byte == ascii(",") || byte == ascii("{") || byte == ascii("}") || byte == ascii("[")
                    || byte == ascii("]")
                {
                    break
                }
                if byte == ascii(":") {
                    // Only `: ` ends the scalar (as a key); any other `:` is Yams' to read.
                    guard index + 1 < bytes.endIndex, bytes[index + 1] == ascii(" ") else { throw GiveUp() }
                    break
                }
                index += 1
            }
            var end = index
            while end > start, bytes[end - 1] == ascii(" ") { end -= 1 }
            return try DemoHomeScanner.plain(bytes[start..<end], inFlow: true)
        }
    }

    /// Whether a mapping has `key` already (a duplicate, which Yams refuses). A demo home's
    /// mappings have a handful of keys; a long one gives up rather than search its keys for each.
    private static func contains(_ key: String, in pairs: [(key: String, value: Value)]) throws(GiveUp) -> Bool {
        guard pairs.count < 64 else { throw GiveUp() }
        return pairs.contains { $0.key == key }
    }

    // MARK: Scalars

    /// A plain scalar's text: not empty (that would be null), not starting with an indicator, with no
    /// `:` YAML could read otherwise and, outside flow collections, none of `,[]{}` (which libyaml and
    /// other readers treat differently there).
    static func plain(_ bytes: Bytes, inFlow: Bool) throws(GiveUp) -> String {
        guard let first = bytes.first else { throw GiveUp() }
        switch first {
        case ascii("-"), ascii(":"):
            guard bytes.count > 1, isWordByte(bytes[bytes.startIndex + 1]) else { throw GiveUp() }
        case ascii(","), ascii("["), ascii("]"), ascii("{"), ascii("}"), ascii("'"), ascii(" "):
            throw GiveUp()
        default:
            break
        }
        for byte in bytes {
            if byte == ascii(":") { throw GiveUp() }
            if !inFlow,
                byte == ascii(",") || byte == ascii("[") || byte == ascii("]") || byte == ascii("{")
                    || byte == ascii("}")
            {
                throw GiveUp()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= ascii("0") && byte <= ascii("9")) || (byte >= ascii("a") && byte <= ascii("z"))
            || (byte >= ascii("A") && byte <= ascii("Z")) || byte == ascii(".")
    }
}

private func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(character.value) }
