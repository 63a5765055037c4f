import HomeModel
import Logging
import MQTT
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A bridge's TCP listener, served on the gateway's loop (``EventLoopThread``) like its MQTT
/// connections: a controller's request is read, handled by the bridge and the home manager (actors
/// on the same loop) and answered in one pass of that thread, and an event caused over MQTT leaves
/// in the pass that applied the change, with no hand-off between threads. Each connection's bytes go
/// through SwiftNIO's handlers (``BridgeConnection``); the sockets are the loop's.
package final class BridgeListener: Sendable {
    /// The most connections served at once (HAP asks for at least 8; a home of phones, tablets,
    /// watches, home hubs and Home Assistant stays well inside); more are closed at once.
    static let maximumConnections = 64

    /// The port it listens on (the one asked for, or the one the system gave for 0).
    package let port: Int
    private let descriptor: Int32
    private let loop: EventLoopThread

    private init(descriptor: Int32, port: Int, loop: EventLoopThread) {
        self.descriptor = descriptor
        self.port = port
        self.loop = loop
    }

    /// Listens on `host:port` (`0.0.0.0` for every IPv4 interface, a port of 0 for any free one),
    /// to be served on `loop`.
    package static func bind(host: String, port: Int, loop: EventLoopThread) throws -> BridgeListener {
        let address: SocketAddress
        do {
            address = try SocketAddress(ipAddress: host, port: port)
        } catch {
            throw BridgeError(.cannotListen, "cannot listen on \(host):\(port): \(error)")
        }
        let descriptor = socket(
            Int32(address.protocol.rawValue),
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BridgeError(.cannotListen, "cannot make a socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockAddr { Glibc.bind(descriptor, $0, socklen_t($1)) }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let error = errno
            close(descriptor)
            throw BridgeError(.cannotListen, "cannot listen on \(host):\(port): \(String(cString: strerror(error)))")
        }
        // The port is bytes 2 and 3 of an IPv4 and an IPv6 address alike, in network order.
        var local = [UInt8](repeating: 0, count: 128)
        var length = socklen_t(local.count)
        let named = local.withUnsafeMutableBytes { bytes in
            getsockname(descriptor, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        let boundPort = named == 0 ? Int(local[2]) << 8 | Int(local[3]) : port
        return BridgeListener(descriptor: descriptor, port: boundPort, loop: loop)
    }

    /// Serves `bridge` until the task is cancelled; then closes the listener and every connection.
    package func serve(_ bridge: HomeBridge, logger: Logger) async {
        let (accepted, acceptedSink) = AsyncStream.makeStream(of: BridgeConnection.self)
        let counts = Counts()
        let descriptor = self.descriptor
        let loop = self.loop
        let source = EventLoopThread.Source(
            descriptor: descriptor, wantsToWrite: { false },
            read: {
                // 16 a pass at most: connections that never stop coming do not keep the loop from its
                // other sockets (poll says again that the listener is readable).
                for _ in 0..<16 {
                    let client = accept(descriptor, nil, nil)
                    guard client >= 0 else {
                        if errno == EINTR || errno == ECONNABORTED { continue }
                        // EAGAIN: none waits; EMFILE and the like: the next pass tries again.
                        return 0
                    }
                    guard counts.open.load(ordering: .relaxed) < Self.maximumConnections else {
                        // Said once a spell: a flood of connections is not a flood of log lines.
                        if !counts.refusing.exchange(true, ordering: .relaxed) {
                            logger.warning(
                                "HomeKit bridge: \(Self.maximumConnections) connections are open; more are closed until one ends"
                            )
                        }
                        close(client)
                        continue
                    }
                    // Said again only after the connections fell well below the limit, not each
                    // time one ends and the next is taken at the limit.
                    if counts.open.load(ordering: .relaxed) < Self.maximumConnections / 2 {
                        counts.refusing.store(false, ordering: .relaxed)
                    }
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    var one: Int32 = 1
                    setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    setsockopt(client, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
                    counts.open.add(1, ordering: .relaxed)
                    acceptedSink.yield(BridgeConnection(descriptor: client, loop: loop, logger: logger))
                }
                return 0
            },
            write: { 0 }, tick: { counts.stopped.load(ordering: .relaxed) ? 1 : 0 })
        guard
            loop.attach(
                source,
                ended: { _ in
                    close(descriptor); acceptedSink.finish()
                })
        else {
            close(descriptor)
            return
        }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await connection in accepted {
                    // On the loop, where the connection's bytes are: a request goes from the read that
                    // finished it to the bridge and back to the socket in the same pass.
                    group.addTask(executorPreference: loop) {
                        await connection.serve(bridge)
                        counts.open.subtract(1, ordering: .relaxed)
                    }
                }
            }
        } onCancel: {
            counts.stopped.store(true, ordering: .relaxed)
            loop.wake()
        }
    }
}

/// What the accept loop and the connections' tasks share: how many connections are open, and
/// whether the listener stops.
private final class Counts: Sendable {
    let open = Atomic(0)
    let stopped = Atomic(false)
    /// Whether connections are being refused (said once until one is taken again).
    let refusing = Atomic(false)
}
