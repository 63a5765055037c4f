import Crypto
import Foundation
import HAP
import HAPProtocol
import JSON
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One controller connection to a HomeKit bridge made of the project's own HAP parts (HAPProtocol's
/// `HTTPRequest`, `PairSetup`, `PairVerify`, `SecureSession` and `HTTPResponseParser`) over a bare
/// NIO channel: the test chooses every byte that goes out (a tampered, replayed or reordered frame,
/// half a request, bytes that are not HTTP) and sees each answer, each event and the bridge's close
/// as they come. Used by one task at a time, inside ``withWire(port:receiveBuffer:_:)``.
final class HAPWire {
    let channel: any Channel
    let port: Int
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    /// The encrypted session, once ``verify(_:with:)`` ended.
    var session: SecureSession?
    private var parser = HTTPResponseParser()
    /// Events that came while an answer was awaited.
    private(set) var events: [HTTPMessage] = []
    /// What was written, write by write.
    private(set) var sent: [[UInt8]] = []

    fileprivate init(
        channel: any Channel, port: Int, inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.channel = channel
        self.port = port
        self.inbound = inbound
        self.outbound = outbound
    }

    /// The bytes of `request` as they go on the wire: sealed into frames once the session is
    /// encrypted (the session's counter moves on, whether or not they are sent).
    func bytes(of request: HTTPRequest) throws -> [UInt8] {
        let plain = request.encoded(host: "127.0.0.1:\(port)")
        guard session != nil else { return plain }
        return try session!.encrypt(plain)
    }

    func write(_ bytes: [UInt8]) async throws {
        sent.append(bytes)
        try await outbound.write(ByteBuffer(bytes: bytes))
    }

    /// The next message from the bridge (an answer or an event), or nil once the bridge closed the
    /// connection (or reset it). Waits at most `timeout`, then throws `TimedOut`.
    func next(within timeout: Duration = .seconds(60)) async throws -> HTTPMessage? {
        if let message = try parser.next() { return message }
        let expiry = Expiry()
        let channel = self.channel
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            expiry.fire()
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        while true {
            let buffer: ByteBuffer?
            do {
                buffer = try await inbound.next()
            } catch {
                buffer = nil
            }
            guard let buffer else {
                if expiry.fired { throw TimedOut("the bridge said nothing and kept the connection for \(timeout)") }
                return nil
            }
            var bytes = Array(buffer.readableBytesView)
            if session != nil { bytes = try session!.decrypt(bytes) }
            parser.append(bytes)
            if let message = try parser.next() { return message }
        }
    }

    /// The answer to the request sent last; events that come before it are kept in ``events``.
    func answer(within timeout: Duration = .seconds(60)) async throws -> HTTPMessage {
        while let message = try await next(within: timeout) {
            if message.kind == .response { return message }
            events.append(message)
        }
        throw TimedOut("the bridge closed the connection instead of answering")
    }

    /// Sends `request` (sealed once the session is encrypted) and returns its answer.
    func send(_ request: HTTPRequest, within timeout: Duration = .seconds(60)) async throws -> HTTPMessage {
        try await write(bytes(of: request))
        return try await answer(within: timeout)
    }

    /// POSTs a pairing body to `path`; the answer's TLV8, its HTTP status and type checked.
    func pairing(_ path: String, _ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> TLV8
    {
        let answer = try await send(.pairing(path, body))
        #expect(answer.statusCode == 200, "\(path): HTTP \(answer.statusCode)", sourceLocation: sourceLocation)
        #expect(
            answer.header("Content-Type") == "application/pairing+tlv8", "\(path): \(answer.headers)",
            sourceLocation: sourceLocation)
        return try TLV8(decoding: answer.body)
    }

    /// Reads until the bridge closes the connection; the messages that came before the close.
    func closedByBridge(within timeout: Duration = .seconds(60)) async throws -> [HTTPMessage] {
        var messages: [HTTPMessage] = []
        while let message = try await next(within: timeout) { messages.append(message) }
        return messages
    }

    /// Pair verify as `controller` (HAPProtocol's `PairVerify`); the connection is encrypted after.
    /// A refusal throws the bridge's `PairingError`.
    func verify(_ controller: ControllerIdentity, with accessory: AccessoryPairing) async throws {
        var verify = PairVerify(controller: controller, accessory: accessory)
        var body = verify.start()
        while true {
            let answer = try await send(.pairing("/pair-verify", body))
            switch try verify.handle(answer.body) {
            case .send(let next): body = next
            case .done(let keys):
                session = .controller(keys)
                return
            }
        }
    }

    /// Pair setup with `code` as `controller` (HAPProtocol's `PairSetup`) to its end: the bridge's
    /// pairing, or the bridge's refusal thrown as a `PairingError`.
    func pairSetup(code: String, controller: ControllerIdentity) async throws -> AccessoryPairing {
        var setup = try PairSetup(setupCode: code, controller: controller)
        var body = setup.start()
        while true {
            let answer = try await send(.pairing("/pair-setup", body))
            switch try setup.handle(answer.body) {
            case .send(let next): body = next
            case .done(let pairing): return pairing
            }
        }
    }

    /// Ends the connection with a reset: no FIN, no word (SO_LINGER 0, then close).
    func reset() async throws {
        guard let options = channel as? any SocketOptionProvider else { throw TimedOut("no socket options") }
        try await options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        try await channel.close()
    }
}

/// A TCP connection to a bridge on 127.0.0.1:`port` for `body`, closed after it; `receiveBuffer`
/// sets SO_RCVBUF before connecting (a controller that reads slowly).
func withWire<T: Sendable>(
    port: Int, receiveBuffer: Int? = nil, _ body: (HAPWire) async throws -> T
) async throws -> T {
    var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
    if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: receiveBuffer) }
    let connection = try await bootstrap.connect(host: "127.0.0.1", port: port) { channel in
        channel.eventLoop.makeCompletedFuture {
            try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
    }
    return try await connection.executeThenClose { inbound, outbound in
        try await body(
            HAPWire(
                channel: connection.channel, port: port, inbound: inbound.makeAsyncIterator(), outbound: outbound))
    }
}

/// Whether a read's time ran out (set from the event loop's timer).
private final class Expiry: Sendable {
    private let state = Mutex(false)
    var fired: Bool { state.withLock { $0 } }
    func fire() { state.withLock { $0 = true } }
}

extension ControllerIdentity {
    /// A new controller: an uppercase UUID and a new Ed25519 key.
    static func make() -> ControllerIdentity {
        ControllerIdentity(identifier: UUID().uuidString, signingKey: Curve25519.Signing.PrivateKey())
    }
}

/// One characteristic of a bridge, "aid.iid".
struct HAPAddressText: Hashable, Sendable, CustomStringConvertible {
    let aid: Int
    let iid: Int
    var description: String { "\(aid).\(iid)" }

    /// The characteristic of short type `type` ("25") on the accessory named `name` in a
    /// `GET /accessories` body.
    init(of name: String, _ type: String, in database: [UInt8]) throws {
        func short(_ uuid: String?) -> String? { uuid.map { String($0.prefix(8).drop { $0 == "0" }) } }
        let root = try JSON.parse(database)
        for accessory in root["accessories"]?.arrayValue ?? [] {
            let characteristics = (accessory["services"]?.arrayValue ?? []).flatMap {
                $0["characteristics"]?.arrayValue ?? []
            }
            guard
                characteristics.contains(where: {
                    short($0["type"]?.stringValue) == "23" && $0["value"]?.stringValue == name
                }), let aid = accessory["aid"]?.integerValue,
                let found = characteristics.first(where: { short($0["type"]?.stringValue) == type }),
                let iid = found["iid"]?.integerValue
            else { continue }
            self.aid = aid
            self.iid = iid
            return
        }
        throw TimedOut("no characteristic \(type) of \(name) in the accessory database")
    }

    /// `PUT /characteristics` subscribing to it (or not).
    func subscription(_ on: Bool = true) -> HTTPRequest {
        .putJSON("/characteristics", Array(#"{"characteristics":[{"aid":\#(aid),"iid":\#(iid),"ev":\#(on)}]}"#.utf8))
    }

    /// `PUT /characteristics` writing `value` (JSON text).
    func write(_ value: String) -> HTTPRequest {
        .putJSON(
            "/characteristics", Array(#"{"characteristics":[{"aid":\#(aid),"iid":\#(iid),"value":\#(value)}]}"#.utf8))
    }

    /// `GET /characteristics?id=aid.iid`.
    var read: HTTPRequest { .get("/characteristics?id=\(self)") }

    /// Its value in a read's answer or an event's body, nil when it is not there.
    func value(in body: [UInt8]) -> JSON? {
        guard let root = try? JSON.parse(body) else { return nil }
        return root["characteristics"]?.arrayValue?.first {
            $0["aid"]?.integerValue == aid && $0["iid"]?.integerValue == iid
        }?["value"]
    }
}

/// A pairing request for `/pairings`.
enum PairingsRequest {
    static let list = TLV8([.init(.state, [1]), .init(.method, [PairingMethod.listPairings.rawValue])])

    static func add(_ controller: ControllerIdentity, admin: Bool) -> TLV8 {
        TLV8([
            .init(.state, [1]), .init(.method, [PairingMethod.addPairing.rawValue]),
            .init(.identifier, Array(controller.identifier.utf8)), .init(.publicKey, controller.publicKey),
            .init(.permissions, [admin ? 1 : 0]),
        ])
    }

    static func remove(_ controller: ControllerIdentity) -> TLV8 {
        TLV8([
            .init(.state, [1]), .init(.method, [PairingMethod.removePairing.rawValue]),
            .init(.identifier, Array(controller.identifier.utf8)),
        ])
    }
}
