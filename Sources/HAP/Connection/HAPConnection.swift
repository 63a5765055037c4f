import Execution
import HAPProtocol
import NIOCore
import NIOPosix

/// One TCP connection to an accessory: plain HTTP for pair setup and pair verify, then, once
/// ``secure(with:)`` is called, HAP's encrypted session. One request at a time, answered in order;
/// `EVENT/1.0` notifications come out of ``events``. Any protocol violation (a frame that fails
/// authentication, bytes that are not HTTP) closes the connection: HAP has no way to resynchronise.
/// Its failures are ``HAPError``s: `connectFailed`, `closed`, `timedOut`, or the violation's own.
package actor HAPConnection {
    package nonisolated let host: String
    package nonisolated let port: Int
    /// Notifications the accessory sent (`EVENT/1.0`), in order; finishes when the connection ends.
    package nonisolated let events: AsyncStream<HTTPMessage>
    private let eventSink: AsyncStream<HTTPMessage>.Continuation

    private var outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private var channel: (any Channel)?
    private var session: SecureSession?
    private var parser = HTTPResponseParser()
    private var answers: [CheckedContinuation<HTTPMessage, any Error>] = []
    /// One request at a time: each waits for the answer before the next is sent.
    private let turns = Turns()
    private var ended: (any Error)?
    /// Each request's timeout.
    private nonisolated let timer: DeadlineTimer<AnyClock>

    private init(host: String, port: Int, timer: DeadlineTimer<AnyClock>) {
        self.host = host
        self.port = port
        self.timer = timer
        (events, eventSink) = AsyncStream.makeStream(of: HTTPMessage.self, bufferingPolicy: .bufferingNewest(4_096))
    }

    /// Connects to `host:port` within `timeout`; request timeouts run on `timer`.
    package static func open(
        host: String, port: Int, timeout: Duration = .seconds(5), timer: DeadlineTimer<AnyClock> = .continuous
    ) async throws -> HAPConnection {
        let connection = HAPConnection(host: host, port: port, timer: timer)
        let asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + 1))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let wrap: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, ByteBuffer>> = { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel(wrappingChannelSynchronously: channel) }
        }
        do {
            // An address is not looked up: NIO's lookup waits for a dispatch thread (`getaddrinfo`).
            if let address = try? SocketAddress(ipAddress: host, port: port) {
                asyncChannel = try await bootstrap.connect(to: address, channelInitializer: wrap)
            } else {
                asyncChannel = try await bootstrap.connect(host: host, port: port, channelInitializer: wrap)
            }
        } catch {
            throw HAPError(.connectFailed, "\(host):\(port): \(error)")
        }
        await connection.run(asyncChannel)
        return connection
    }

    /// Whether something accepts a TCP connection at `host:port` (closed again at once): an address
    /// where nothing listens is no accessory to offer.
    package static func isListening(
        host: String, port: Int, timeout: Duration = .seconds(2), timer: DeadlineTimer<AnyClock> = .continuous
    ) async -> Bool {
        guard let connection = try? await open(host: host, port: port, timeout: timeout, timer: timer) else {
            return false
        }
        await connection.close()
        return true
    }

    private func run(_ asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let ready = AsyncStream<Void>.makeStream()
        // The reader outlives this call (it feeds every request's answer) and ends with the connection.
        Task { [weak self] in
            do {
                try await asyncChannel.executeThenClose { inbound, outbound in
                    await self?.attach(outbound, channel: asyncChannel.channel)
                    ready.continuation.finish()
                    for try await buffer in inbound {
                        guard let self, await self.received(buffer) else { break }
                    }
                }
                await self?.end(HAPError(.closed, "the accessory closed the connection"))
            } catch {
                ready.continuation.finish()
                await self?.end(HAPError(.closed, "\(error)"))
            }
        }
        for await _ in ready.stream {}
    }

    private func attach(_ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel) {
        self.outbound = outbound
        self.channel = channel
    }

    /// From now on everything is encrypted with the session's keys (after pair verify).
    func secure(with keys: SessionKeys) {
        session = .controller(keys)
    }

    /// Whether the connection still works.
    package var isOpen: Bool { ended == nil }

    /// Sends `request` and returns its answer, waiting at most `timeout`; a time-out closes the
    /// connection (its answer could still come and be taken for the next request's).
    package func send(_ request: HTTPRequest, timeout: Duration = .seconds(10)) async throws -> HTTPMessage {
        await turns.take()
        defer { turns.end() }
        if let ended { throw ended }
        guard let outbound else { throw HAPError(.closed, "not connected") }
        var bytes = request.encoded(host: "\(host):\(port)")
        if session != nil {
            do {
                bytes = try session!.encrypt(bytes)
            } catch {
                end(error)
                throw error
            }
        }
        // The timeout ends the connection, unless the answer comes first.
        let expired = HAPError(.timedOut, "no answer to \(request.method) \(request.path) in \(timeout)")
        let ticket = timer.schedule(after: timeout) { [weak self] in await self?.end(expired) }
        defer { timer.cancel(ticket) }
        return try await withCheckedThrowingContinuation { continuation in
            answers.append(continuation)
            // The continuation's closure is synchronous: the write goes in a task of the actor's.
            Task {
                do {
                    try await outbound.write(ByteBuffer(bytes: bytes))
                } catch {
                    self.end(HAPError(.closed, "\(error)"))
                }
            }
        }
    }

    /// Closes the connection; waiting requests fail.
    package func close() {
        end(HAPError(.closed, "closed by the controller"))
    }

    // MARK: Inside

    /// Takes bytes from the accessory; false when the connection must end.
    private func received(_ buffer: ByteBuffer) -> Bool {
        guard ended == nil else { return false }
        var bytes = Array(buffer.readableBytesView)
        do {
            if session != nil { bytes = try session!.decrypt(bytes) }
            parser.append(bytes)
            while let message = try parser.next() {
                if message.kind == .event {
                    eventSink.yield(message)
                } else if !answers.isEmpty {
                    answers.removeFirst().resume(returning: message)
                } else {
                    throw HAPError(.unexpectedMessage, "an answer nobody asked for")
                }
            }
            return true
        } catch {
            end(error)
            return false
        }
    }

    private func end(_ error: any Error) {
        guard ended == nil else { return }
        ended = error
        for answer in answers { answer.resume(throwing: error) }
        answers.removeAll()
        eventSink.finish()
        channel?.close(promise: nil)
        outbound?.finish()
    }
}
