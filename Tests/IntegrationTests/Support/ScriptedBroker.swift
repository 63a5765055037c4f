import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A listener on loopback that plays a script to every MQTT client that connects, for what no real
/// broker here does: a broker that speaks only MQTT 3.1.1, one that never answers CONNECT, one that
/// sends packets MQTT forbids. It reads each client's CONNECT, records it, and hands it to `script`,
/// whose answer it writes; the connection then stays open (until ``stop()``) or is closed.
final class ScriptedBroker: Sendable {
    /// What to do with a client after its CONNECT: send `bytes`, then close or keep the connection.
    struct Reply: Sendable {
        var bytes: [UInt8]
        var close: Bool
    }

    let port: Int
    private let listener: Int32
    private let state = Mutex(State())
    private let ended = DispatchSemaphore(value: 0)

    private struct State {
        var connections: [Int32] = []
        var connects: [[UInt8]] = []
        var stopping = false
    }

    init(script: @escaping @Sendable (_ connect: [UInt8]) -> Reply) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TimedOut("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw TimedOut("could not listen on loopback: errno \(errno)")
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            serve(script)
            ended.signal()
        }
        thread.start()
    }

    /// The CONNECT packets received so far, whole.
    var connects: [[UInt8]] { state.withLock { $0.connects } }

    /// The protocol level of each CONNECT received so far: 5 for MQTT 5, 4 for 3.1.1.
    var protocolLevels: [UInt8] { connects.map(Self.protocolLevel) }

    /// The protocol level of a CONNECT packet: after the fixed header, the remaining length and the
    /// protocol name "MQTT".
    static func protocolLevel(_ connect: [UInt8]) -> UInt8 {
        var index = 1
        while connect[index] & 0x80 != 0 { index += 1 }
        return connect[index + 1 + 2 + 4]
    }

    /// Closes the listener and every connection, and waits for the serving thread.
    func stop() {
        let connections = state.withLock { state in
            state.stopping = true
            defer { state.connections = [] }
            return state.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in connections { close(connection) }
        ended.wait()
        close(listener)
    }

    private func serve(_ script: @Sendable ([UInt8]) -> Reply) {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            guard state.withLock({ !$0.stopping }) else {
                close(connection)
                return
            }
            guard let connect = Self.readPacket(connection) else {
                close(connection)
                continue
            }
            state.withLock { $0.connects.append(connect) }
            let reply = script(connect)
            _ = reply.bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if reply.close {
                close(connection)
            } else {
                state.withLock { $0.connections.append(connection) }
            }
        }
    }

    /// One MQTT packet (fixed header, remaining length, the rest), or nil if the client went away.
    private static func readPacket(_ connection: Int32) -> [UInt8]? {
        func readExactly(_ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let got = bytes.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + filled, count - filled, 0) }
                guard got > 0 else { return nil }
                filled += got
            }
            return bytes
        }
        guard var packet = readExactly(1) else { return nil }
        var length = 0
        var multiplier = 1
        repeat {
            guard let byte = readExactly(1)?.first else { return nil }
            packet.append(byte)
            length += Int(byte & 0x7F) * multiplier
            multiplier *= 128
        } while packet.last! & 0x80 != 0
        guard let rest = readExactly(length) else { return nil }
        return packet + rest
    }
}

/// MQTT packets for scripts, written out byte by byte.
enum ScriptedPacket {
    /// A CONNACK accepting the connection without a session: MQTT 5 (with an empty property list) or
    /// 3.1.1.
    static func connackAccepted(v5: Bool) -> [UInt8] {
        v5 ? [0x20, 0x03, 0x00, 0x00, 0x00] : [0x20, 0x02, 0x00, 0x00]
    }

    /// An MQTT 5 DISCONNECT from the broker with `reason` (0x95: packet too large).
    static func disconnect(reason: UInt8) -> [UInt8] { [0xE0, 0x01, reason] }

    /// The 3.1.1 CONNACK "unacceptable protocol version" that a 3.1.1-only broker sends to MQTT 5.
    static let connackUnacceptableProtocol: [UInt8] = [0x20, 0x02, 0x00, 0x01]

    /// A PUBLISH to `topic` (not checked: a script may send what MQTT forbids) with `payload`, at QoS 0,
    /// or at QoS 1 with packet id `packetID`; `v5` adds the empty property list.
    static func publish(topic: String, payload: String, qos1PacketID packetID: UInt16? = nil, v5: Bool) -> [UInt8] {
        var body: [UInt8] = [UInt8(topic.utf8.count >> 8), UInt8(topic.utf8.count & 0xFF)] + Array(topic.utf8)
        if let packetID { body += [UInt8(packetID >> 8), UInt8(packetID & 0xFF)] }
        if v5 { body.append(0x00) }
        body += Array(payload.utf8)
        precondition(body.count < 128, "a one-byte remaining length")
        return [packetID == nil ? 0x30 : 0x32, UInt8(body.count)] + body
    }
}
