import HAPProtocol
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// Why HAP's controller side parses responses itself (HTTPResponseParser.swift says it at its top):
/// what swift-nio's HTTP/1 decoder does with what accessories send.
struct HTTPCodecChoiceTests {
    static let event = "EVENT/1.0 200 OK\r\nContent-Type: application/hap+json\r\nContent-Length: 2\r\n\r\n{}"
    static let response = "HTTP/1.1 204 No Content\r\n\r\n"

    /// The parts NIOHTTP1's response decoder makes of `text`, or the error it stops at.
    private func decodeWithNIO(_ text: String) throws -> [HTTPClientResponsePart] {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
        // The decoder answers responses to requests it saw go out.
        try channel.writeOutbound(HTTPClientRequestPart.head(.init(version: .http1_1, method: .GET, uri: "/")))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        try channel.writeOutbound(HTTPClientRequestPart.head(.init(version: .http1_1, method: .GET, uri: "/")))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        try channel.writeInbound(ByteBuffer(string: text))
        var parts: [HTTPClientResponsePart] = []
        while let part = try channel.readInbound(as: HTTPClientResponsePart.self) { parts.append(part) }
        _ = try? channel.finish()
        return parts
    }

    @Test("NIOHTTP1 fails at an EVENT/1.0 between responses; the HAP parser takes both")
    func eventBetweenResponses() throws {
        #expect(throws: HTTPParserError.self) { try decodeWithNIO(Self.response + Self.event) }
        var parser = HTTPResponseParser()
        parser.append(Array((Self.response + Self.event + Self.response).utf8))
        #expect(try parser.next()?.kind == .response)
        let event = try parser.next()
        #expect(event?.kind == .event && event?.body == Array("{}".utf8))
        #expect(try parser.next()?.statusCode == 204)
    }

    @Test("NIOHTTP1 waits for the close on a 200 without a length; an accessory means no body")
    func responseWithoutLength() throws {
        let parts = try decodeWithNIO("HTTP/1.1 200 OK\r\n\r\n")
        #expect(!parts.contains { if case .end = $0 { true } else { false } })
        var parser = HTTPResponseParser()
        parser.append(Array("HTTP/1.1 200 OK\r\n\r\n".utf8))
        #expect(try parser.next()?.body == [])
    }
}
