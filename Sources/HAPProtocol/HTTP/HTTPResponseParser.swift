// Hand-written, beside swift-nio, for a measured reason (HTTPCodecChoiceTests): NIOHTTP1's response
// decoder (llhttp) accepts only `HTTP/` status lines and fails the connection at HAP's `EVENT/1.0`,
// which an accessory sends between any two responses. Rewriting the token before the decoder needs
// the message boundaries, which is this parser's work; and llhttp reads a response without a length
// until the connection closes, where HAP accessories mean an empty body. The accessory side
// (issue 48's bridge) decodes requests, which NIOHTTP1 does as HAP needs.

/// A message from a HAP accessory: a response to a request, or an `EVENT/1.0` notification.
package struct HTTPMessage: Sendable, Equatable {
    /// Whether the message answers a request or is an unsolicited event.
    package enum Kind: Sendable, Equatable {
        /// An `HTTP/1.x` response.
        case response
        /// A HAP `EVENT/1.0` notification of changed characteristics.
        case event
    }

    package var kind: Kind
    /// The status code (HAP events are always 200).
    package var statusCode: Int
    /// The reason phrase.
    var reason: String
    /// The headers in order, names as sent.
    package var headers: [Header]
    /// The body, with chunked transfer encoding removed.
    package var body: [UInt8]

    /// One header line.
    package struct Header: Sendable, Equatable {
        package var name: String
        package var value: String
    }

    /// The value of the first header named `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// An incremental parser of what an accessory sends over one connection: HTTP/1.1 responses and
/// `EVENT/1.0 200 OK` notifications, interleaved in any order.
///
/// Bytes go in as they arrive (`append`); complete messages come out (`next`). Bodies are delimited by
/// Content-Length or by chunked transfer encoding (some accessories use it); a message with neither
/// has an empty body, as HAP accessories always send one or the other when there is a body. Bytes that
/// are not such a message throw `.malformedHTTP`, and the parser stays failed: the connection must be
/// dropped.
package struct HTTPResponseParser: Sendable {
    /// The longest status line and headers accepted.
    static let maximumHeadLength = 16 * 1024
    /// The longest body accepted (/accessories of a large bridge stays well below).
    static let maximumBodyLength = 16 * 1024 * 1024

    private enum State: Sendable {
        case head
        case fixedBody(HTTPMessage, remaining: Int)
        case chunkSize(HTTPMessage)
        case chunkData(HTTPMessage, remaining: Int)
        case chunkDataEnd(HTTPMessage)
        case trailers(HTTPMessage)
    }

    private var buffer: [UInt8] = []
    private var start = 0
    private var state = State.head
    private var failure: HAPError?

    package init() {}

    /// Adds bytes read from the connection (after decryption, once the session is encrypted).
    package mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 64 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, or nil until more bytes arrive.
    ///
    /// - Throws: `.malformedHTTP` for bytes that are not an HTTP/1.x response or HAP event.
    package mutating func next() throws -> HTTPMessage? {
        if let failure { throw failure }
        do {
            return try step()
        } catch let error as HAPError {
            failure = error
            throw error
        }
    }

    private mutating func step() throws -> HTTPMessage? {
        while true {
            switch state {
            case .head:
                try checkStatusLinePrefix()
                guard let headEnd = find([13, 10, 13, 10], from: start) else {
                    if buffer.count - start > Self.maximumHeadLength {
                        throw HAPError(.malformedHTTP, "no end of headers within \(Self.maximumHeadLength) bytes")
                    }
                    return nil
                }
                let message = try parseHead(Array(buffer[start..<headEnd]))
                start = headEnd + 4
                if message.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                    state = .chunkSize(message)
                } else if let lengthText = message.header("Content-Length") {
                    guard let length = Int(lengthText.trimmingSpaces), length >= 0,
                        length <= Self.maximumBodyLength
                    else {
                        throw HAPError(.malformedHTTP, "unusable Content-Length \"\(lengthText)\"")
                    }
                    state = .fixedBody(message, remaining: length)
                } else {
                    state = .fixedBody(message, remaining: 0)
                }
            case .fixedBody(var message, let remaining):
                guard buffer.count - start >= remaining else { return nil }
                message.body = Array(buffer[start..<(start + remaining)])
                start += remaining
                state = .head
                return message
            case .chunkSize(let message):
                guard let lineEnd = find([13, 10], from: start) else {
                    if buffer.count - start > 1024 {
                        throw HAPError(.malformedHTTP, "chunk size line too long")
                    }
                    return nil
                }
                let line = String(decoding: buffer[start..<lineEnd], as: UTF8.self)
                let sizeText = line.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
                guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0,
                    message.body.count + size <= Self.maximumBodyLength
                else {
                    throw HAPError(.malformedHTTP, "unusable chunk size \"\(line)\"")
                }
                start = lineEnd + 2
                state = size == 0 ? .trailers(message) : .chunkData(message, remaining: size)
            case .chunkData(var message, let remaining):
                let available = min(remaining, buffer.count - start)
                guard available > 0 else { return nil }
                message.body += buffer[start..<(start + available)]
                start += available
                state =
                    available == remaining
                    ? .chunkDataEnd(message) : .chunkData(message, remaining: remaining - available)
            case .chunkDataEnd(let message):
                guard buffer.count - start >= 2 else { return nil }
                guard buffer[start] == 13, buffer[start + 1] == 10 else {
                    throw HAPError(.malformedHTTP, "chunk data not followed by CRLF")
                }
                start += 2
                state = .chunkSize(message)
            case .trailers(let message):
                guard let lineEnd = find([13, 10], from: start) else {
                    if buffer.count - start > Self.maximumHeadLength {
                        throw HAPError(.malformedHTTP, "trailers too long")
                    }
                    return nil
                }
                let empty = lineEnd == start
                start = lineEnd + 2
                if empty {
                    state = .head
                    return message
                }
            }
        }
    }

    private static let prefixes: [[UInt8]] = [
        Array("HTTP/1.1 ".utf8), Array("HTTP/1.0 ".utf8), Array("EVENT/1.0 ".utf8),
    ]

    /// Fails as soon as the first bytes of a message cannot begin a status line, without waiting for
    /// a full head that garbage may never complete.
    private func checkStatusLinePrefix() throws {
        let available = buffer.count - start
        guard available > 0 else { return }
        let seen = Array(buffer[start..<(start + min(available, 10))])
        let fits = Self.prefixes.contains { prefix in
            zip(prefix, seen).allSatisfy { $0 == $1 }
        }
        guard fits else {
            throw HAPError(.malformedHTTP, "not an HTTP response or HAP event: starts with \(Self.printable(seen))")
        }
    }

    private func parseHead(_ head: [UInt8]) throws -> HTTPMessage {
        guard let text = String(validating: head, as: UTF8.self) else {
            throw HAPError(.malformedHTTP, "headers are not UTF-8")
        }
        // "\r\n" is one Character in Swift, so a lone CR or LF stays inside its line.
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[1].count == 3, let code = Int(parts[1]), (100...599).contains(code) else {
            throw HAPError(.malformedHTTP, "unusable status line \"\(statusLine.prefix(80))\"")
        }
        let kind: HTTPMessage.Kind = parts[0] == "EVENT/1.0" ? .event : .response
        var headers: [HTTPMessage.Header] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw HAPError(.malformedHTTP, "unusable header line \"\(line.prefix(80))\"")
            }
            headers.append(
                HTTPMessage.Header(
                    name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingSpaces))
        }
        return HTTPMessage(
            kind: kind, statusCode: code, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: [])
    }

    private func find(_ pattern: [UInt8], from index: Int) -> Int? {
        buffer[index...].firstRange(of: pattern)?.lowerBound
    }

    private static func printable(_ bytes: [UInt8]) -> String {
        String(bytes.map { (32...126).contains($0) ? Character(UnicodeScalar($0)) : "." })
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}
