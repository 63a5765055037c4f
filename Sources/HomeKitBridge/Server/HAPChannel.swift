import HAPProtocol
import NIOCore
import NIOHTTP1

/// One request a controller sent, whole.
struct HAPRequest: Sendable {
    let method: HTTPMethod
    /// The path without its query (`/characteristics`).
    let path: String
    /// The query's items (`id=1.10,2.11&meta=1`), in order.
    let query: [(name: String, value: String)]
    let body: [UInt8]

    init(head: HTTPRequestHead, body: [UInt8]) {
        method = head.method
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "")
        query = (parts.count > 1 ? parts[1] : "").split(separator: "&").map { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
        }
        self.body = body
    }

    func query(_ name: String) -> String? { query.first { $0.name == name }?.value }
}

/// An answer to one request.
struct HAPResponse: Sendable {
    let status: HTTPResponseStatus
    let contentType: String?
    let body: [UInt8]

    static let json = "application/hap+json"
    static let tlv8 = "application/pairing+tlv8"

    static func json(_ status: HTTPResponseStatus, _ body: [UInt8]) -> HAPResponse {
        HAPResponse(status: status, contentType: json, body: body)
    }

    static func tlv8(_ body: [UInt8]) -> HAPResponse { HAPResponse(status: .ok, contentType: tlv8, body: body) }

    static let noContent = HAPResponse(status: .noContent, contentType: nil, body: [])

    /// The bytes of the answer: HAP's HTTP/1.1 with a length, never chunked.
    var encoded: [UInt8] {
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }
}

/// What a bridge writes on a connection.
enum HAPOutbound: Sendable {
    /// An answer; with keys, everything after it is encrypted with them (the answer to pair
    /// verify's M3 goes out plain, and the session starts right behind it).
    case response(HAPResponse, secureWith: SessionKeys?)
    /// A notification of changed values (`EVENT/1.0`), only ever on an encrypted session.
    case event([UInt8])

    /// `EVENT/1.0`, HAP's notification: written here, since no HTTP codec writes a status line
    /// that is not HTTP's.
    static func eventBytes(_ body: [UInt8]) -> [UInt8] {
        Array("EVENT/1.0 200 OK\r\nContent-Type: \(HAPResponse.json)\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
            + body
    }
}

/// The bottom of a bridge connection's pipeline: plain bytes until pair verify ends, then HAP's
/// encrypted frames both ways. Reads go up to NIOHTTP1's request decoder as plain bytes; a frame
/// that fails authentication closes the connection (HAP has no way to resynchronise).
final class HAPFramingHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = HAPOutbound
    typealias OutboundOut = ByteBuffer

    private var session: SecureSession?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard session != nil else { return context.fireChannelRead(data) }
        let buffer = unwrapInboundIn(data)
        do {
            let plaintext = try session!.decrypt(buffer.readableBytesView)
            if !plaintext.isEmpty { context.fireChannelRead(wrapInboundOut(ByteBuffer(bytes: plaintext))) }
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let outbound = unwrapOutboundIn(data)
        var bytes: [UInt8]
        switch outbound {
        case .response(let response, _): bytes = response.encoded
        case .event(let body):
            // Before pair verify nothing may be told: a notification goes only on an encrypted session.
            guard session != nil else {
                promise?.succeed()
                return
            }
            bytes = HAPOutbound.eventBytes(body)
        }
        if session != nil {
            do {
                bytes = try session!.encrypt(bytes)
            } catch {
                promise?.fail(error)
                context.close(promise: nil)
                return
            }
        }
        context.write(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: promise)
        if case .response(_, let keys?) = outbound { session = .accessory(keys) }
    }
}
