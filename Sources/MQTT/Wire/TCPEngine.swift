import CMosquitto
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// MQTT (v5 and 3.1.1) over plain TCP, in Swift: the engine of every ``MQTTClient`` without TLS.
///
/// It exists for the gateway's command path. libmosquitto reads a packet with three `read` calls
/// or more, writes each packet with its own `write`, and wakes its own loop once per packet
/// queued: about 19 system calls per command under load. Here a pass reads what the socket holds
/// with one `read`, decodes every packet in it, and writes everything the pass queued with one
/// `send`.
///
/// What it keeps, as libmosquitto did: QoS 1/2 publishes made while the connection is down are
/// sent once it is back, and unacknowledged ones are sent again after a reconnect; no more are in
/// flight than the broker's receive maximum (the rest wait in order); incoming QoS 2 messages are
/// delivered once; keep-alive pings, and a dead connection found by them.
///
/// Threads: `connect`, `reconnect` and the `loop*` calls come from the thread that serves the
/// connection (the fields marked so below are that thread's alone); `publish`, `subscribe`,
/// `unsubscribe` and `disconnect` from any thread, under `shared`'s lock.
final class TCPEngine: MQTTEngine, @unchecked Sendable {
    let protocolVersion: MQTTConfiguration.ProtocolVersion
    private let configuration: MQTTConfiguration
    private let writer: PacketWriter
    private let reader: PacketReader
    private let shared = Mutex(Shared())
    /// True while `loop(timeout:)` waits in `poll`: a packet queued then must wake it.
    private let isPolling = Atomic<Bool>(false)
    private let wakeReader: Int32
    private let wakeWriter: Int32

    // The serving thread's alone.
    private var context: UnsafeMutableRawPointer?
    private var endpoint: (host: String, port: Int, keepAlive: Duration, sessionExpiry: UInt32?)?
    /// Bytes read that do not make a whole packet yet.
    private var input: [UInt8] = []
    /// When the broker last sent anything: keep-alive pings when either way has been quiet.
    private var lastReceived = ContinuousClock.now
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Bytes taken from `shared.output` and not all written yet.
    private var unsent: [UInt8] = []
    private var unsentStart = 0

    init(configuration: MQTTConfiguration) throws(MQTTError) {
        guard configuration.cleanSession || !configuration.clientID.isEmpty else {
            throw MQTTError(.invalidArgument, "a persistent session needs a client id")
        }
        self.configuration = configuration
        protocolVersion = configuration.protocolVersion
        writer = PacketWriter(version: configuration.protocolVersion)
        reader = PacketReader(version: configuration.protocolVersion)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw MQTTError(.system, "could not make the client's wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (wakeReader, wakeWriter) = (ends[0], ends[1])
    }

    func installCallbacks(context: UnsafeMutableRawPointer, logging: Bool) {
        self.context = context
    }

    private var client: MQTTClient { MQTTClient.from(context) }

    // MARK: Serving thread

    func connect(host: String, port: Int, keepAlive: Duration, sessionExpiry: UInt32?) -> Int32 {
        endpoint = (host, port, keepAlive, sessionExpiry)
        return reconnect()
    }

    func reconnect() -> Int32 {
        guard let endpoint else { return Self.code(MOSQ_ERR_INVAL) }
        closeConnection()
        let descriptor: Int32
        switch Self.openSocket(host: endpoint.host, port: endpoint.port) {
        case .success(let opened): descriptor = opened
        case .failure(let failure):
            if let detail = failure.detail { client.didLog(detail, isError: true) }
            errno = failure.errno
            return failure.code
        }
        let keepAliveSeconds = UInt16(clamping: max(5, endpoint.keepAlive.milliseconds / 1000))
        input.removeAll(keepingCapacity: true)
        unsent.removeAll(keepingCapacity: true)
        unsentStart = 0
        lastReceived = .now
        shared.withLock { shared in
            shared.socket = descriptor
            shared.status = .awaitingAcknowledgement
            shared.output.removeAll(keepingCapacity: true)
            shared.keepAlive = .seconds(Int(keepAliveSeconds))
            shared.lastSent = .now
            shared.pingSentAt = nil
            writer.connect(
                into: &shared.output, clientID: configuration.clientID, cleanStart: configuration.cleanSession,
                keepAliveSeconds: keepAliveSeconds, sessionExpiry: endpoint.sessionExpiry,
                username: configuration.username, password: configuration.password, will: configuration.will)
        }
        return Self.success
    }

    func loop(timeout: Duration) -> Int32 {
        isPolling.store(true, ordering: .sequentiallyConsistent)
        let descriptor = socket
        var rc = wantsToWrite ? loopWrite() : Self.success
        guard rc == Self.success else {
            isPolling.store(false, ordering: .sequentiallyConsistent)
            return rc
        }
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(POLLIN) | (wantsToWrite ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&descriptors, 2, Int32(timeout.milliseconds))
        isPolling.store(false, ordering: .sequentiallyConsistent)
        if descriptors[1].revents != 0 {
            var drained = (UInt64(0), UInt64(0))
            _ = read(wakeReader, &drained, MemoryLayout.size(ofValue: drained))
        }
        if descriptors[0].revents & ~Int16(POLLOUT) != 0 { rc = loopRead() }
        if rc == Self.success && wantsToWrite { rc = loopWrite() }
        return rc == Self.success ? loopMisc() : rc
    }

    func wakeLoop() {
        guard isPolling.load(ordering: .sequentiallyConsistent) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    var socket: Int32 { shared.withLock { $0.socket } }

    var wantsToWrite: Bool {
        unsentStart < unsent.count || shared.withLock { !$0.output.isEmpty }
    }

    /// Reads what the socket holds and handles every whole packet in it.
    func loopRead() -> Int32 {
        let descriptor = socket
        guard descriptor >= 0 else { return Self.code(MOSQ_ERR_NO_CONN) }
        while true {
            let count = readBuffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                lastReceived = .now
                let rc = received(count)
                guard rc == Self.success else { return rc }
                if count < readBuffer.count { return Self.success }
            } else if count == 0 {
                return connectionEnded(Self.code(MOSQ_ERR_CONN_LOST))
            } else {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return Self.success
                default:
                    let failure = errno
                    let rc = connectionEnded(Self.code(MOSQ_ERR_ERRNO))
                    errno = failure
                    return rc
                }
            }
        }
    }

    /// Handles the packets in the `count` bytes just read, after what was left of the last read.
    private func received(_ count: Int) -> Int32 {
        if input.isEmpty {
            let (consumed, rc) = readBuffer.withUnsafeBytes {
                handlePackets(in: UnsafeRawBufferPointer(rebasing: $0[..<count]))
            }
            if consumed < count { input.append(contentsOf: readBuffer[consumed..<count]) }
            return rc
        }
        input.append(contentsOf: readBuffer[..<count])
        let (consumed, rc) = input.withUnsafeBytes { handlePackets(in: $0) }
        if consumed == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 1 << 20)
        } else {
            input.removeFirst(consumed)
        }
        return rc
    }

    private func handlePackets(in bytes: UnsafeRawBufferPointer) -> (consumed: Int, rc: Int32) {
        var consumed = 0
        while true {
            let next: (IncomingPacket, consumed: Int)?
            do {
                next = try reader.next(in: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
            } catch {
                client.didLog("malformed packet from the broker: \(error.reason)", isError: true)
                return (consumed, connectionEnded(Self.code(MOSQ_ERR_MALFORMED_PACKET)))
            }
            guard let (packet, length) = next else { return (consumed, Self.success) }
            consumed += length
            let rc = handle(packet)
            guard rc == Self.success else { return (consumed, rc) }
        }
    }

    private func handle(_ packet: IncomingPacket) -> Int32 {
        switch packet {
        case .connectionAcknowledgement(let acknowledgement):
            return connectionAcknowledged(acknowledgement)
        case .publish(let message, let packetID):
            let isNew = shared.withLock { shared in
                switch message.qos {
                case .atMostOnce: return true
                case .atLeastOnce:
                    writer.acknowledgement(0x40, packetID: packetID, into: &shared.output)
                    return true
                case .exactlyOnce:
                    writer.acknowledgement(0x50, packetID: packetID, into: &shared.output)
                    return shared.exactlyOnceReceived.insert(packetID).inserted
                }
            }
            if isNew { client.didReceive(message) }
        case .acknowledgement(let type, let packetID, let reasonCode):
            acknowledged(type: type, packetID: packetID, reasonCode: reasonCode)
        case .subscribeAcknowledgement(let packetID, let reasonCodes):
            if let mid = shared.withLock({ $0.awaitingAcknowledgement.removeValue(forKey: packetID) }) {
                client.didComplete(mid: mid, with: .subscribed(reasonCodes: reasonCodes.map(Int32.init)))
            }
        case .unsubscribeAcknowledgement(let packetID):
            if let mid = shared.withLock({ $0.awaitingAcknowledgement.removeValue(forKey: packetID) }) {
                client.didComplete(mid: mid, with: .unsubscribed)
            }
        case .pingResponse:
            shared.withLock { $0.pingSentAt = nil }
        case .disconnect(let reasonCode):
            client.didDisconnect(reasonCode: Int32(reasonCode))
            return connectionEnded(Self.code(MOSQ_ERR_CONN_LOST), reported: true)
        }
        return Self.success
    }

    private func connectionAcknowledged(_ acknowledgement: IncomingPacket.ConnectionAcknowledgement) -> Int32 {
        guard acknowledgement.reasonCode == 0 else {
            client.didConnect(reasonCode: Int32(acknowledgement.reasonCode), sessionPresent: false)
            return connectionEnded(Self.code(MOSQ_ERR_CONN_REFUSED), reported: true)
        }
        let refused: [(mid: Int32, reasonCode: UInt8)]? = shared.withLock { shared in
            // After a DISCONNECT asked for while connecting, nothing but closing is left.
            guard shared.status == .awaitingAcknowledgement else { return nil }
            shared.status = .connected
            shared.limits = acknowledgement.limits
            if let keepAlive = acknowledgement.serverKeepAlive { shared.keepAlive = .seconds(Int(keepAlive)) }
            if !acknowledgement.sessionPresent { shared.exactlyOnceReceived.removeAll() }
            return shared.holdForResending(writer)
        }
        guard let refused else { return Self.success }
        // Publishes this broker will not take (a QoS above its maximum, a packet above its size)
        // complete with its reason, instead of ending every connection they are sent on.
        for (mid, reasonCode) in refused {
            client.didComplete(mid: mid, with: .published(reasonCode: Int32(reasonCode)))
        }
        client.didConnect(reasonCode: 0, sessionPresent: acknowledgement.sessionPresent)
        shared.withLock { $0.resend(writer) }
        return Self.success
    }

    private func acknowledged(type: UInt8, packetID: UInt16, reasonCode: UInt8) {
        if let mid = shared.withLock({ $0.acknowledged(type: type, packetID: packetID, reasonCode: reasonCode, writer) }
        ) {
            client.didComplete(mid: mid, with: .published(reasonCode: Int32(reasonCode)))
        }
    }

    /// Writes what is queued, as far as the socket takes it.
    func loopWrite() -> Int32 {
        let descriptor = socket
        guard descriptor >= 0 else { return Self.code(MOSQ_ERR_NO_CONN) }
        var wrote = false
        defer { if wrote { shared.withLock { $0.lastSent = .now } } }
        while true {
            if unsentStart == unsent.count {
                unsent.removeAll(keepingCapacity: unsent.capacity <= 1 << 20)
                unsentStart = 0
                let isDisconnecting = shared.withLock { shared in
                    // Nothing leaves after the DISCONNECT (an acknowledgement read meanwhile).
                    if let end = shared.disconnectEnd {
                        shared.output.removeSubrange(end...)
                        shared.disconnectEnd = 0
                    }
                    swap(&shared.output, &unsent)
                    return shared.status == .disconnecting
                }
                if unsent.isEmpty {
                    // The DISCONNECT is out: close, and the service ends.
                    return isDisconnecting ? connectionEnded(Self.code(MOSQ_ERR_NO_CONN)) : Self.success
                }
            }
            let count = unsent.withUnsafeBytes { bytes in
                send(descriptor, bytes.baseAddress! + unsentStart, bytes.count - unsentStart, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                unsentStart += count
                wrote = true
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return Self.success
            } else {
                let failure = errno
                let rc = connectionEnded(Self.code(MOSQ_ERR_ERRNO))
                errno = failure
                return rc
            }
        }
    }

    /// Keep-alive: a ping when nothing was sent for the keep-alive interval, and the end of a
    /// connection whose ping (or CONNACK) did not come back within it.
    func loopMisc() -> Int32 {
        let now = ContinuousClock.now
        enum Check { case fine, closed, noAcknowledgement, noPingResponse }
        let check: Check = shared.withLock { shared in
            switch shared.status {
            case .closed: return .closed
            case .awaitingAcknowledgement:
                return now - shared.lastSent >= shared.keepAlive ? .noAcknowledgement : .fine
            case .disconnecting:
                return .fine
            case .connected:
                guard shared.keepAlive > .zero else { return .fine }
                if let pingSentAt = shared.pingSentAt {
                    return now - pingSentAt >= shared.keepAlive ? .noPingResponse : .fine
                }
                // Either way: a connection that died while only we sent would otherwise go
                // unnoticed until TCP gives up.
                if now - shared.lastSent >= shared.keepAlive || now - lastReceived >= shared.keepAlive {
                    writer.pingRequest(into: &shared.output)
                    shared.pingSentAt = now
                }
                return .fine
            }
        }
        switch check {
        case .fine: return Self.success
        case .closed: return Self.code(MOSQ_ERR_NO_CONN)
        case .noAcknowledgement:
            client.didLog("the broker did not answer CONNECT within the keep-alive interval", isError: true)
            return connectionEnded(Self.code(MOSQ_ERR_TIMEOUT))
        case .noPingResponse: return connectionEnded(Self.code(MOSQ_ERR_KEEPALIVE))
        }
    }

    /// Closes the socket after the connection ended with `rc`, and returns it.
    private func connectionEnded(_ rc: Int32, reported: Bool = false) -> Int32 {
        closeConnection()
        if !reported { client.didDisconnect(reasonCode: 0) }
        return rc
    }

    private func closeConnection() {
        let descriptor = shared.withLock { shared in
            defer { shared.connectionClosed() }
            return shared.socket
        }
        if descriptor >= 0 { close(descriptor) }
    }

    func destroy() {
        closeConnection()
        close(wakeReader)
        close(wakeWriter)
    }

    // MARK: Any thread

    func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTProperties, awaited: Bool
    ) throws(MQTTError) -> Int32 {
        // Only a failure spends a string on the topic: this is every write's path.
        func failure(_ code: mosq_err_t) -> MQTTError { Self.error(code, context: "publish to '\(topic)'") }
        guard Self.isValidTopicName(topic) else { throw failure(MOSQ_ERR_INVAL) }
        guard payload.count <= PacketReader.maximumRemainingLength - 4 - topic.utf8.count else {
            throw failure(MOSQ_ERR_PAYLOAD_SIZE)
        }
        if !properties.isEmpty {
            guard protocolVersion == .v5 else {
                throw MQTTError(.notSupported, "MQTT v5 properties need a connection with protocol version 5")
            }
            try Self.check(properties)
        }
        var message = Shared.Outgoing(
            topic: topic, payload: payload, qos: qos, retain: retain, properties: properties, isAwaited: awaited)
        message.size = writer.publishSize(topic: topic, payload: payload, qos: qos, properties: properties)
        let result: Result<Int32, MQTTError> = shared.withLock { shared in
            if let refusal = shared.limits.refusal(of: message) { return .failure(failure(refusal.error)) }
            let mid = shared.publish(message, writer)
            guard mid >= 0 else { return .failure(failure(MOSQ_ERR_NO_CONN)) }
            return .success(awaited ? mid : 0)
        }
        return try result.get()
    }

    func subscribe(_ filters: [String], qos: MQTTQoS, options: MQTTSubscribeOptions) throws(MQTTError) -> Int32 {
        try queueAcknowledged("subscribe to \(filters)", filters) { output, packetID in
            writer.subscribe(into: &output, packetID: packetID, filters: filters, qos: qos, options: options)
        }
    }

    func unsubscribe(_ filters: [String]) throws(MQTTError) -> Int32 {
        try queueAcknowledged("unsubscribe from \(filters)", filters) { output, packetID in
            writer.unsubscribe(into: &output, packetID: packetID, filters: filters)
        }
    }

    /// Queues a SUBSCRIBE or UNSUBSCRIBE of `filters`, which `encode` writes with its packet
    /// identifier, and returns the message id its acknowledgement will complete.
    private func queueAcknowledged(
        _ context: String, _ filters: [String], encode: (inout [UInt8], UInt16) -> Void
    ) throws(MQTTError) -> Int32 {
        guard filters.allSatisfy(Self.isValidTopicFilter) else { throw Self.error(MOSQ_ERR_INVAL, context: context) }
        let result: Result<Int32, MQTTError> = shared.withLock { shared in
            guard shared.isOpen else { return .failure(Self.error(MOSQ_ERR_NO_CONN, context: context)) }
            guard let (mid, packetID) = shared.newAcknowledgement() else {
                return .failure(Self.error(MOSQ_ERR_NOMEM, context: "\(context): every packet identifier in use"))
            }
            encode(&shared.output, packetID)
            return .success(mid)
        }
        return try result.get()
    }

    @discardableResult
    func disconnect() -> Int32 {
        shared.withLock { shared in
            switch shared.status {
            case .closed, .disconnecting:
                return Self.code(MOSQ_ERR_NO_CONN)
            case .awaitingAcknowledgement, .connected:
                shared.status = .disconnecting
                writer.disconnect(into: &shared.output)
                shared.disconnectEnd = shared.output.count
                return Self.success
            }
        }
    }

    // MARK: Checks and errors

    static let success = Mosquitto.success

    private static func code(_ error: mosq_err_t) -> Int32 { Int32(error.rawValue) }

    private static func error(_ error: mosq_err_t, context: String) -> MQTTError {
        Mosquitto.error(forResult: code(error), detail: nil, context: context)
    }

    /// A topic to publish to: not empty, no wildcard, no longer than a string field takes.
    static func isValidTopicName(_ topic: String) -> Bool {
        // Every publish passes here: one pass over the bytes decides a topic of printable ASCII.
        var topic = topic
        let printable = topic.withUTF8 { bytes -> Bool? in
            guard !bytes.isEmpty, bytes.count <= 65_535 else { return false }
            for byte in bytes {
                if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") { return false }
                if byte < 0x20 || byte >= 0x7F { return nil }
            }
            return true
        }
        if let printable { return printable }
        return isSpeakable(topic)
            && !topic.utf8.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
    }

    /// A topic filter: `+` and `#` only as whole levels, `#` only as the last.
    static func isValidTopicFilter(_ filter: String) -> Bool {
        guard !filter.isEmpty, isSpeakable(filter) else { return false }
        let levels = filter.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains(UInt8(ascii: "#")) && (level.count != 1 || index != levels.count - 1) { return false }
            if level.contains(UInt8(ascii: "+")) && level.count != 1 { return false }
        }
        return true
    }

    /// A string mosquitto takes in a packet: at most 65,535 bytes, no control character and no
    /// non-character (its `mosquitto_validate_utf8`). A broker disconnects a client that sends
    /// another, and a QoS 1 publish sent again after every reconnect would do that forever.
    static func isSpeakable(_ text: String) -> Bool {
        guard text.utf8.count <= 65_535 else { return false }
        var text = text
        if text.withUTF8({ $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }) { return true }
        return text.unicodeScalars.allSatisfy { scalar in
            let value = scalar.value
            return value >= 0x20 && !(0x7F...0x9F).contains(value) && !(0xFDD0...0xFDEF).contains(value)
                && value & 0xFFFE != 0xFFFE
        }
    }

    private static func check(_ properties: MQTTProperties) throws(MQTTError) {
        func isSpeakable(_ text: String?) -> Bool { text.map(Self.isSpeakable) ?? true }
        guard isSpeakable(properties.responseTopic), isSpeakable(properties.contentType),
            properties.userProperties.allSatisfy({ isSpeakable($0.name) && isSpeakable($0.value) }),
            properties.correlationData?.count ?? 0 <= 65_535
        else {
            throw Mosquitto.error(forResult: code(MOSQ_ERR_MALFORMED_UTF8), detail: nil, context: "MQTT v5 properties")
        }
    }

    // MARK: Opening the socket

    private struct OpenFailure: Error {
        var code: Int32
        var errno: Int32
        var detail: String?
    }

    /// Resolves `host` and connects to the first of its addresses that answers; non-blocking
    /// afterwards, with Nagle's algorithm off.
    private static func openSocket(host: String, port: Int) -> Result<Int32, OpenFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var addresses: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &addresses)
        guard lookup == 0 else {
            return .failure(
                OpenFailure(
                    code: code(MOSQ_ERR_EAI), errno: errno,
                    detail: "\(host): \(String(cString: gai_strerror(lookup)))"))
        }
        defer { freeaddrinfo(addresses) }
        var lastError = ECONNREFUSED
        var address = addresses
        while let current = address?.pointee {
            address = current.ai_next
            let descriptor = Glibc.socket(
                current.ai_family, current.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.ai_protocol)
            guard descriptor >= 0 else {
                lastError = errno
                continue
            }
            var rc: Int32
            repeat {
                rc = Glibc.connect(descriptor, current.ai_addr, current.ai_addrlen)
            } while rc != 0 && errno == EINTR
            guard rc == 0 else {
                lastError = errno
                close(descriptor)
                continue
            }
            var on: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            return .success(descriptor)
        }
        return .failure(OpenFailure(code: code(MOSQ_ERR_ERRNO), errno: lastError, detail: nil))
    }
}

// MARK: - Shared state

extension TCPEngine {
    enum Status { case closed, awaitingAcknowledgement, connected, disconnecting }

    /// What every thread may touch, under the lock: the socket, the bytes queued for it, and the
    /// QoS 1/2 publishes not yet complete.
    struct Shared {
        struct Outgoing {
            var topic: String
            var payload: [UInt8]
            var qos: MQTTQoS
            var retain: Bool
            var properties: MQTTProperties
            /// Whether someone waits for its completion; otherwise none is reported.
            var isAwaited: Bool
            /// Its packet identifier while it is in flight.
            var packetID: UInt16?
            /// Sent on some connection: a resend carries the DUP flag.
            var wasSent = false
            /// The broker sent PUBREC (QoS 2): what is left is PUBREL and PUBCOMP.
            var isReleased = false
            var sequence: UInt64 = 0
            /// Its size on the wire, for the broker's maximum packet size.
            var size = 0
        }

        var socket: Int32 = -1
        var status = Status.closed
        var output: [UInt8] = []
        var keepAlive = Duration.seconds(30)
        var lastSent = ContinuousClock.now
        var pingSentAt: ContinuousClock.Instant?
        var limits = BrokerLimits()
        /// How many more QoS 1/2 publishes the broker takes now.
        var quota = 0
        /// Where the DISCONNECT ends in `output`: what is queued after it is dropped.
        var disconnectEnd: Int?

        /// CONNECT is sent and no DISCONNECT: SUBSCRIBE and QoS 0 may follow at once.
        var isOpen: Bool { status == .awaitingAcknowledgement || status == .connected }

        /// QoS 1/2 publishes not yet complete, by message id.
        var outgoing: [Int32: Outgoing] = [:]
        /// The message ids of those in flight, by packet identifier.
        var inFlight: [UInt16: Int32] = [:]
        /// Publishes waiting for the connection or the quota, oldest first, from `heldStart` on.
        var held: [Int32] = []
        var heldStart = 0
        /// SUBSCRIBE and UNSUBSCRIBE waiting for their acknowledgement.
        var awaitingAcknowledgement: [UInt16: Int32] = [:]
        /// Incoming QoS 2 messages delivered and not yet released by the broker's PUBREL.
        var exactlyOnceReceived: Set<UInt16> = []

        private var lastMessageID: Int32 = 0
        private var lastPacketID: UInt16 = 0
        private var sequence: UInt64 = 0

        mutating func newMessageID() -> Int32 {
            lastMessageID = lastMessageID == Int32.max ? 1 : lastMessageID + 1
            return lastMessageID
        }

        /// Publishes in flight, and SUBSCRIBE and UNSUBSCRIBE waiting: each holds a packet identifier.
        var identifiersInUse: Int { inFlight.count + awaitingAcknowledgement.count }

        /// Whether one more publish may go out: within the broker's window, and an identifier free.
        var maySend: Bool { quota > 0 && identifiersInUse < Int(UInt16.max) }

        /// A packet identifier no packet in flight uses; only when one is free.
        mutating func newPacketID() -> UInt16 {
            repeat {
                lastPacketID = lastPacketID == UInt16.max ? 1 : lastPacketID + 1
            } while inFlight[lastPacketID] != nil || awaitingAcknowledgement[lastPacketID] != nil
            return lastPacketID
        }

        mutating func newAcknowledgement() -> (mid: Int32, packetID: UInt16)? {
            guard identifiersInUse < Int(UInt16.max) else { return nil }
            let mid = newMessageID()
            let packetID = newPacketID()
            awaitingAcknowledgement[packetID] = mid
            return (mid, packetID)
        }

        /// Queues a publish: at QoS 0 only on a connection (returns 0, or -1 without one); at QoS
        /// 1/2 always, sent now if the broker's quota allows and nothing older waits.
        mutating func publish(_ message: Outgoing, _ writer: PacketWriter) -> Int32 {
            guard message.qos != .atMostOnce else {
                guard isOpen else { return -1 }
                writer.publish(
                    into: &output, topic: message.topic, payload: message.payload, qos: .atMostOnce,
                    retain: message.retain, duplicate: false, packetID: 0, properties: message.properties)
                return 0
            }
            let mid = newMessageID()
            var message = message
            sequence += 1
            message.sequence = sequence
            if status == .connected && maySend && heldStart == held.count {
                send(&message, mid: mid, writer)
            } else {
                held.append(mid)
            }
            outgoing[mid] = message
            return mid
        }

        private mutating func send(_ message: inout Outgoing, mid: Int32, _ writer: PacketWriter) {
            let packetID = message.packetID ?? newPacketID()
            message.packetID = packetID
            inFlight[packetID] = mid
            quota -= 1
            writer.publish(
                into: &output, topic: message.topic, payload: message.payload, qos: message.qos,
                retain: message.retain && limits.retainAvailable, duplicate: message.wasSent, packetID: packetID,
                properties: message.properties)
            message.wasSent = true
        }

        /// Handles PUBACK, PUBREC, PUBREL or PUBCOMP (`type`), queuing what answers it; returns the
        /// message id of a publish it completes.
        mutating func acknowledged(type: UInt8, packetID: UInt16, reasonCode: UInt8, _ writer: PacketWriter) -> Int32? {
            switch type {
            case 6:
                // PUBREL of a QoS 2 message we received: it is done with.
                exactlyOnceReceived.remove(packetID)
                writer.acknowledgement(0x70, packetID: packetID, into: &output)
                return nil
            case 5 where reasonCode < 0x80:
                // PUBREC: the broker has the message; release it.
                guard let mid = inFlight[packetID] else { return nil }
                outgoing[mid]?.isReleased = true
                writer.acknowledgement(0x62, packetID: packetID, into: &output)
                return nil
            default:
                // PUBACK, PUBCOMP, or a PUBREC that refuses the message: it is complete.
                guard let mid = inFlight.removeValue(forKey: packetID) else { return nil }
                let isAwaited = outgoing.removeValue(forKey: mid)?.isAwaited ?? false
                if outgoing.isEmpty && outgoing.capacity > 1_024 {
                    // A dictionary never shrinks: after a start's 30,000 publishes, give the table back.
                    outgoing = [:]
                    inFlight = [:]
                }
                quota += 1
                if status == .connected { sendHeld(writer) }
                return isAwaited ? mid : nil
            }
        }

        /// Sends held publishes while the quota allows.
        mutating func sendHeld(_ writer: PacketWriter) {
            while maySend && heldStart < held.count {
                let mid = held[heldStart]
                heldStart += 1
                guard var message = outgoing[mid] else { continue }
                send(&message, mid: mid, writer)
                outgoing[mid] = message
            }
            if heldStart == held.count {
                held.removeAll(keepingCapacity: held.capacity <= 4096)
                heldStart = 0
            } else if heldStart > 4096 && heldStart * 2 > held.count {
                held.removeFirst(heldStart)
                heldStart = 0
            }
        }

        /// After a CONNACK, before the client hears of it: every publish not complete waits again,
        /// oldest first, so what the client queues on connecting (its subscriptions made again)
        /// goes before them, and its new publishes after them. Returns those this broker refuses
        /// (`limits`), with the reason code it would give; they are dropped.
        mutating func holdForResending(_ writer: PacketWriter) -> [(mid: Int32, reasonCode: UInt8)] {
            var refused: [(mid: Int32, reasonCode: UInt8)] = []
            for (mid, message) in outgoing where !message.isReleased {
                if let refusal = limits.refusal(of: message) {
                    refused.append((mid, refusal.reasonCode))
                    outgoing.removeValue(forKey: mid)
                }
            }
            let pending = outgoing.sorted { $0.value.sequence < $1.value.sequence }.map(\.key)
            inFlight.removeAll()
            held.removeAll()
            heldStart = 0
            quota = 0
            // Those that fit the broker's window keep their packet identifiers (the broker may
            // hold them in its session); the others lose theirs, and new ones never take a kept one.
            var budget = limits.receiveMaximum
            for mid in pending {
                if outgoing[mid]!.isReleased || budget > 0 {
                    if let packetID = outgoing[mid]!.packetID { inFlight[packetID] = mid }
                    budget -= 1
                } else {
                    outgoing[mid]!.packetID = nil
                    outgoing[mid]!.wasSent = false
                }
                if !outgoing[mid]!.isReleased { held.append(mid) }
            }
            return refused
        }

        /// Then: PUBREL for the QoS 2 publishes the broker had received, in the order they were
        /// published, and the held publishes as far as the broker's window allows.
        mutating func resend(_ writer: PacketWriter) {
            guard status == .connected else { return }
            quota = limits.receiveMaximum
            let released = inFlight.compactMap { packetID, mid in
                outgoing[mid].flatMap { $0.isReleased ? (packetID, $0.sequence) : nil }
            }
            for (packetID, _) in released.sorted(by: { $0.1 < $1.1 }) {
                quota -= 1
                writer.acknowledgement(0x62, packetID: packetID, into: &output)
            }
            sendHeld(writer)
        }

        /// The connection is gone: what was queued for it is dropped, except the QoS 1/2
        /// publishes, which go again after the next CONNACK.
        mutating func connectionClosed() {
            socket = -1
            status = .closed
            disconnectEnd = nil
            output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            awaitingAcknowledgement.removeAll()
            pingSentAt = nil
            quota = 0
        }
    }
}

extension BrokerLimits {
    /// Why this broker would refuse `message` (a QoS above its maximum, a packet above its size),
    /// as the client's error and as the reason code the broker would give; nil if it takes it. A
    /// retain flag it does not support is cleared instead, as libmosquitto does.
    func refusal(of message: TCPEngine.Shared.Outgoing) -> (error: mosq_err_t, reasonCode: UInt8)? {
        if message.qos > maximumQoS { return (MOSQ_ERR_QOS_NOT_SUPPORTED, 0x9B) }
        if let maximumPacketSize, message.size > maximumPacketSize { return (MOSQ_ERR_OVERSIZE_PACKET, 0x95) }
        return nil
    }
}
