import HomeModel
import Logging
import MQTT
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One controller's connection, served on the gateway's loop: its socket is one of the loop's
/// sources, and its bytes go through SwiftNIO's handlers (``HAPFramingHandler`` under NIOHTTP1's
/// request decoder) in an `EmbeddedChannel`, NIO's channel driven by hand, so that the loop's thread
/// reads, decodes, handles and writes without NIO's own threads. Requests are handled one after the
/// other (HAP's controllers wait for each answer), events beside them.
///
/// Touched on the loop's thread only: the loop calls its source there, and its task prefers the loop.
final class BridgeConnection: @unchecked Sendable {
    /// The largest request body taken (a write of every characteristic of a full bridge fits).
    static let maximumBodyLength = 1 << 20
    /// The most bytes kept for a controller that does not read them; beyond, it is closed (it
    /// verifies again and reads the values afresh).
    static let maximumUnsent = 1 << 20

    private let descriptor: Int32
    private let loop: EventLoopThread
    private let logger: Logger
    private let channel: EmbeddedChannel
    private var unsent: [UInt8] = []
    private var sentOfUnsent = 0
    /// Set when the connection is to end (the bridge drops it, the listener stops, a write failed),
    /// from any thread: the loop ends its source in its next pass.
    private let isEnding = Atomic(false)
    /// Requests read and not yet answered: while there are any, nothing more is read (a
    /// controller waits for each answer; one that sends without pause waits in its socket).
    private var unanswered = 0
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private let requests: AsyncStream<HAPRequest>
    private let requestSink: AsyncStream<HAPRequest>.Continuation

    /// Made on the loop's thread, which the channel's event loop belongs to.
    init(descriptor: Int32, loop: EventLoopThread, logger: Logger) {
        self.descriptor = descriptor
        self.loop = loop
        self.logger = logger
        channel = EmbeddedChannel()
        try? channel.pipeline.syncOperations.addHandlers([
            HAPFramingHandler(), ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
        ])
        _ = channel.connect(to: try! SocketAddress(ipAddress: "0.0.0.0", port: 0))
        (requests, requestSink) = AsyncStream.makeStream(of: HAPRequest.self)
    }

    /// Serves the connection until the controller goes, the bridge drops it or the task is
    /// cancelled, then closes it and tells the bridge.
    ///
    /// Isolated to the bridge (whose executor is the loop): a request goes from the read that
    /// finished it through ``HomeBridge/handle(_:on:)`` to the socket without leaving the bridge's
    /// executor, so no other job of the loop (a change's followers) runs between a write's commit
    /// and its answer. Events come the same way: the bridge calls ``send(_:)`` as it makes them.
    func serve(_ bridge: isolated HomeBridge) async {
        let id = bridge.open(send: { [self] outbound in send(outbound) }, close: { [self] in end() })
        let source = EventLoopThread.Source(
            descriptor: descriptor, wantsToRead: { [self] in unanswered == 0 },
            wantsToWrite: { [self] in sentOfUnsent < unsent.count },
            read: { [self] in read() }, write: { [self] in write() },
            tick: { [self] in isEnding.load(ordering: .relaxed) ? 1 : 0 })
        let descriptor = self.descriptor
        let channel = self.channel
        let attached = loop.attach(source) { [requestSink] _ in
            close(descriptor)
            _ = try? channel.finish(acceptAlreadyClosed: true)
            requestSink.finish()
        }
        if !attached {
            close(descriptor)
            requestSink.finish()
        }
        await withTaskCancellationHandler {
            for await request in requests {
                send(await bridge.handle(request, on: id))
                unanswered -= 1
                // A controller that sends without pause takes its turn behind what else waits on
                // the loop (MQTT's commands), not all of the loop until its requests run out.
                await Task.yield()
            }
        } onCancel: {
            self.end()
        }
        bridge.closed(id)
    }

    /// Ends the connection in the loop's next pass; from any thread.
    private func end() {
        isEnding.store(true, ordering: .relaxed)
        loop.wake()
    }

    /// Writes `outbound` (an answer or an event) to the socket now, or ends the connection (the
    /// controller went, or left ``maximumUnsent`` bytes unread).
    private func send(_ outbound: HAPOutbound) {
        // Off the loop only once it has stopped (its last jobs then run elsewhere): the socket,
        // the loop's, is closed.
        guard loop.isCurrent, !isEnding.load(ordering: .relaxed) else { return }
        do {
            try channel.writeOutbound(outbound)
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                unsent += buffer.readableBytesView
            }
        } catch {
            return end()
        }
        // Out now, not at the end of the loop's pass: an answer would otherwise wait for the rest of
        // the pass's work (the write's MQTT publishes, other controllers' events).
        if write() != 0 { return end() }
        if unsent.count - sentOfUnsent > Self.maximumUnsent {
            logger.warning("HomeKit bridge: a controller reads nothing of what it is sent; its connection is closed")
            end()
        }
    }

    /// Reads what came, up to the end of a request and 64 KiB at most a pass (a peer that never stops
    /// sending does not keep the loop from its other sockets); not 0 when the connection ends
    /// (closed by the peer, bytes that are not HTTP, a frame that fails authentication, a body over
    /// the limit).
    private func read() -> Int32 {
        // Called while a request is unanswered only for a hang-up or an error (poll was not asked
        // for input): look without taking anything, so a controller gone mid-write ends the
        // connection now, instead of poll reporting it again and again until the answer.
        if unanswered > 0 {
            var byte: UInt8 = 0
            let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ? 1 : 0
        }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        for _ in 0..<4 where unanswered == 0 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return 1 }
            if count < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1
            }
            do {
                try channel.writeInbound(ByteBuffer(bytes: buffer[0..<count]))
                while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { try take(part) }
            } catch {
                logger.debug("HomeKit bridge connection ended: \(error)")
                return 1
            }
            guard channel.isActive else { return 1 }
        }
        return 0
    }

    private func take(_ part: HTTPServerRequestPart) throws {
        switch part {
        case .head(let next):
            // A body announced over the limit is refused at its head: waiting for it would hold
            // the connection for as long as the sender likes.
            if let length = next.headers.first(name: "Content-Length").flatMap({ Int($0) }),
                length > Self.maximumBodyLength
            {
                throw BridgeError(.cannotListen, "a request body of \(length) bytes, over \(Self.maximumBodyLength)")
            }
            head = next
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
            guard body.count <= Self.maximumBodyLength else {
                throw BridgeError(.cannotListen, "a request body over \(Self.maximumBodyLength) bytes")
            }
        case .end:
            guard let request = head else { return }
            head = nil
            unanswered += 1
            requestSink.yield(HAPRequest(head: request, body: body))
        }
    }

    /// Writes what waits until the socket takes no more; not 0 when the peer is gone.
    private func write() -> Int32 {
        while sentOfUnsent < unsent.count {
            let count = unsent.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sentOfUnsent, $0.count - sentOfUnsent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1
            }
            sentOfUnsent += count
        }
        unsent.removeAll(keepingCapacity: true)
        sentOfUnsent = 0
        return 0
    }
}
