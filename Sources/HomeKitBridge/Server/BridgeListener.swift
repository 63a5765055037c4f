import HAPProtocol
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A bridge's TCP listener: accepts controllers' connections and runs each, its requests one after
/// the other (HAP's controllers wait for each answer) and its events beside them.
package struct BridgeListener: Sendable {
    private typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HAPOutbound>

    /// The most connections served at once (HAP asks for at least 8; a home of phones, tablets,
    /// watches, home hubs and Home Assistant stays well inside); more are closed at once.
    static let maximumConnections = 64
    /// The largest request body taken (a write of every characteristic of a full bridge fits).
    static let maximumBodyLength = 1 << 20

    private let server: NIOAsyncChannel<Connection, Never>
    /// The port it listens on (the one asked for, or the one the system gave for 0).
    package let port: Int

    private init(server: NIOAsyncChannel<Connection, Never>) {
        self.server = server
        port = server.channel.localAddress?.port ?? 0
    }

    /// Listens on `host:port` (`0.0.0.0` for every IPv4 interface, a port of 0 for any free one).
    package static func bind(host: String, port: Int) async throws -> BridgeListener {
        do {
            let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.socketOption(.so_keepalive), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            HAPFramingHandler(),
                            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
                        ])
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
            return BridgeListener(server: server)
        } catch {
            throw BridgeError(.cannotListen, "cannot listen on \(host):\(port): \(error)")
        }
    }

    /// Serves `bridge` until the task is cancelled; then closes the listener and every connection.
    package func serve(_ bridge: HomeBridge, logger: Logger) async {
        let open = OpenCount()
        do {
            try await server.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        guard open.enter(limit: Self.maximumConnections) else {
                            logger.warning("HomeKit bridge: too many connections; one more is closed")
                            try? await connection.channel.close()
                            continue
                        }
                        // Prefers the bridge's executor (the gateway's loop): a request read on NIO's
                        // thread is handled, written to the manager and answered without another hop.
                        group.addTask(executorPreference: bridge.taskExecutor) {
                            await Self.run(connection, bridge, logger: logger)
                            open.leave()
                        }
                    }
                }
            }
        } catch {
            if !Task.isCancelled { logger.error("HomeKit bridge's listener ended: \(error)") }
        }
    }

    private static func run(_ connection: Connection, _ bridge: HomeBridge, logger: Logger) async {
        let channel = connection.channel
        let (id, events) = await bridge.open { channel.close(promise: nil) }
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await event in events { try await outbound.write(event) }
                    }
                    var head: HTTPRequestHead?
                    var body: [UInt8] = []
                    for try await part in inbound {
                        switch part {
                        case .head(let next):
                            // A body announced over the limit is refused at its head: waiting for
                            // it would hold the connection for as long as the sender likes.
                            if let length = next.headers.first(name: "Content-Length").flatMap({ Int($0) }),
                                length > maximumBodyLength
                            {
                                throw BridgeError(
                                    .cannotListen, "a request body of \(length) bytes, over \(maximumBodyLength)")
                            }
                            head = next
                            body = []
                        case .body(let buffer):
                            body += buffer.readableBytesView
                            guard body.count <= maximumBodyLength else {
                                throw BridgeError(.cannotListen, "a request body over \(maximumBodyLength) bytes")
                            }
                        case .end:
                            guard let request = head else { continue }
                            head = nil
                            try await outbound.write(await bridge.handle(HAPRequest(head: request, body: body), on: id))
                        }
                    }
                    group.cancelAll()
                }
            }
        } catch {
            // A controller that went away, bytes that are not HTTP, a frame that fails
            // authentication: the connection ends, the bridge goes on.
            logger.debug("HomeKit bridge connection ended: \(error)")
        }
        await bridge.closed(id)
    }
}

/// How many connections are open, shared by the accept loop and the connections' tasks.
private final class OpenCount: Sendable {
    private let count = Mutex(0)

    func enter(limit: Int) -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { count.withLock { $0 -= 1 } }
}
