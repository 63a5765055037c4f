import JSON

/// Reads only the `"id"` of a request body: for the answers that refuse a request without running it
/// (over the rate limit, the gateway busy, a malformed body or topic), so that even those carry the
/// id the client sent and the client knows which requests to send again.
///
/// It walks the top level of the object until it finds `"id"` and parses nothing else, so a refusal
/// stays cheap however big the body is; it also finds the id in a body that is malformed after it.
enum RequestID {
    /// How far into a payload the id is looked for (the size of the largest payload the gateway reads).
    static let scanLimit = 65_536
    /// The longest id echoed, serialized: an answer stays small whatever a client sends.
    static let maximumLength = 256

    /// The value of the top-level `"id"` member of `payload`, or nil when there is none to be read
    /// in its first `scanLimit` bytes, or when it is longer than `maximumLength`.
    static func read(_ payload: [UInt8]) -> JSON? {
        var scanner = Scanner(bytes: payload.count > scanLimit ? Array(payload.prefix(scanLimit)) : payload)
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        while true {
            scanner.skipSpace()
            guard let key = scanner.stringRange() else { return nil }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            scanner.skipSpace()
            let start = scanner.index
            guard scanner.skipValue() else { return nil }
            if payload[key].elementsEqual("\"id\"".utf8) {
                guard scanner.index - start <= maximumLength else { return nil }
                return try? JSON.parse(Array(payload[start..<scanner.index]))
            }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// A string with its quotes, escapes left as they are.
        mutating func stringRange() -> Range<Int>? {
            let start = index
            guard take(UInt8(ascii: "\"")) else { return nil }
            while let byte = current {
                index += 1
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    return start..<index
                }
            }
            return nil
        }

        /// Skips one value of any kind: strings whole, objects and arrays to their matching end,
        /// numbers and literals to the next delimiter.
        mutating func skipValue() -> Bool {
            var depth = 0
            repeat {
                skipSpace()
                guard let byte = current else { return false }
                switch byte {
                case UInt8(ascii: "\""):
                    guard stringRange() != nil else { return false }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard depth > 0 else { return false }
                    depth -= 1
                    index += 1
                case UInt8(ascii: ","), UInt8(ascii: ":"):
                    guard depth > 0 else { return false }
                    index += 1
                default:
                    let start = index
                    while let byte = current, !Self.delimiters.contains(byte) { index += 1 }
                    guard index > start else { return false }
                }
            } while depth > 0
            return true
        }

        private static let delimiters: Set<UInt8> = Set(" \n\r\t,:{}[]\"".utf8)
    }
}
