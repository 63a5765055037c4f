import AsyncMailbox
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// An MQTT client: connect, publish, subscribe, and one ordered stream of incoming messages. It
/// reconnects by itself (exponential backoff with jitter), subscribes again when the broker lost
/// the session, and resends unacknowledged QoS 1/2 publishes after a reconnect.
///
/// The protocol is ``TCPEngine``'s (Swift) on plain TCP and libmosquitto's with TLS. One network
/// thread of its own connects and, without an ``EventLoopThread``, serves the connection; what
/// the engine reports is only copied into Swift values and yielded, or resumes a waiting caller.
/// Shut the client down with `disconnect()` (or run it as a `Service`), which sends DISCONNECT,
/// ends the thread and finishes the streams.
public final class MQTTClient: Service, Sendable {
    public let configuration: MQTTConfiguration
    /// The thread that serves the connection and runs the tasks that prefer it, if the client was
    /// given one; otherwise the client's own thread serves the connection.
    public let loop: EventLoopThread?
    /// Every message from the broker, in the order it arrived. One consumer; it finishes on shutdown.
    public let messages: Mailbox<MQTTMessage>

    private let messageSink: Mailbox<MQTTMessage>.Sender
    private let engine: any MQTTEngine
    private let state = Mutex(State())
    private let logger: Logger
    /// Interrupts the wait between reconnect attempts when the client is shut down.
    private let wakeUp = DispatchSemaphore(value: 0)
    private let networkThreadEnded = DispatchGroup()

    /// - Parameter loop: serve the connection on this thread (see ``EventLoopThread``).
    public init(
        _ configuration: MQTTConfiguration, logger: Logger = Logger(label: "homegate.mqtt"),
        loop: EventLoopThread? = nil
    ) throws {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        (messages, messageSink) = Mailbox.make()
        engine =
            configuration.tls == nil
            ? try TCPEngine(configuration: configuration) : try Mosquitto(configuration: configuration)
        // Unretained is enough: callbacks run only on the network thread, whose closure holds `self`.
        engine.installCallbacks(
            context: Unmanaged.passUnretained(self).toOpaque(),
            logging: configuration.tls != nil || logger.logLevel <= .debug)
    }

    deinit {
        engine.destroy()
    }

    /// Connection state changes, in order, for one consumer each call: the stream starts with
    /// `.connected` when the client is connected already, and with `.closed` when it was shut down.
    /// Keeps the newest 64 events if the consumer falls behind.
    public func connectionEvents() -> AsyncStream<MQTTConnectionEvent> {
        let (stream, sink) = AsyncStream.makeStream(of: MQTTConnectionEvent.self, bufferingPolicy: .bufferingNewest(64))
        let (id, current): (Int, MQTTConnectionEvent?) = state.withLock { state in
            state.nextSinkID += 1
            if state.streamsFinished { return (state.nextSinkID, .closed) }
            state.eventSinks.append((state.nextSinkID, sink))
            return (state.nextSinkID, state.isConnected ? .connected(sessionPresent: state.sessionPresent) : nil)
        }
        if let current { sink.yield(current) }
        if current == .closed { sink.finish() }
        sink.onTermination = { [weak self] _ in
            self?.state.withLock { $0.eventSinks.removeAll { $0.id == id } }
        }
        return stream
    }

    private func emit(_ event: MQTTConnectionEvent) {
        let sinks = state.withLock { $0.eventSinks.map(\.sink) }
        for sink in sinks { sink.yield(event) }
    }

    /// True while the broker has accepted the connection.
    public var isConnected: Bool { state.withLock { $0.isConnected } }

    /// The loop that serves the connection: ``loop`` for plain TCP, nil with TLS (libmosquitto's
    /// thread serves it) or without a loop. Work on what the client reads belongs there.
    public var servingLoop: EventLoopThread? { engine is TCPEngine ? loop : nil }

    // MARK: Connecting

    /// Connects, and returns when the broker accepted the connection, with whether it kept a session
    /// for us. Fails with the broker's or the library's reason (wrong password, nothing listening,
    /// untrusted certificate) unless `retryInitialConnection` is set. Returns at once when connected.
    @discardableResult
    public func connect() async throws -> Bool {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Bool, any Error>) in
            enum Next { case start, wait, connected(Bool), closed }
            let next: Next = state.withLock { state in
                switch state.phase {
                case .idle:
                    state.phase = .running
                    state.connectWaiters.append(waiter)
                    return .start
                case .running where state.isConnected:
                    return .connected(state.sessionPresent)
                case .running:
                    state.connectWaiters.append(waiter)
                    return .wait
                case .stopping, .closed:
                    return .closed
                }
            }
            switch next {
            case .start: startNetworkThread()
            case .wait: break
            case .connected(let sessionPresent): waiter.resume(returning: sessionPresent)
            case .closed: waiter.resume(throwing: MQTTError(.clientClosed, "the client has been shut down"))
            }
        }
    }

    /// Sends DISCONNECT (so the broker does not publish the will), stops the network thread, fails
    /// whatever still waits for an acknowledgement and finishes both streams. Safe to call twice.
    public func disconnect() async {
        requestStop()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            networkThreadEnded.notify(queue: .global()) { done.resume() }
        }
    }

    /// Connects, then keeps the connection until graceful shutdown or cancellation, then disconnects.
    public func run() async throws {
        try await connect()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    networkThreadEnded.notify(queue: .global()) { done.resume() }
                }
            } onGracefulShutdown: {
                self.requestStop()
            }
        } onCancel: {
            self.requestStop()
        }
    }

    private func requestStop() {
        enum Previous { case idle, running, other }
        let previous: Previous = state.withLock { state in
            switch state.phase {
            case .idle:
                state.phase = .closed
                return .idle
            case .running:
                state.phase = .stopping
                state.stopRequestedAt = .now
                return .running
            case .stopping, .closed:
                return .other
            }
        }
        switch previous {
        case .running:
            engine.disconnect()
            loopHasQueued()
            wakeUp.signal()
        case .idle:
            finishStreams()
        case .other:
            break
        }
    }

    // MARK: Publishing and subscribing

    /// Publishes one message. Returns when it is handed to the network (QoS 0) or when the broker
    /// acknowledged it (QoS 1: PUBACK, QoS 2: PUBCOMP). A QoS 1/2 publish made while the connection is
    /// down is kept and sent after the reconnect; the call returns once that is acknowledged.
    public func publish(
        _ topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) async throws {
        try ensureOpen()
        let mid = try engine.publish(
            topic: topic, payload: payload, qos: qos, retain: retain, properties: properties, awaited: true)
        loopHasQueued()
        guard qos != .atMostOnce else {
            discardCompletion(of: mid, qos: qos)
            return
        }
        if case .published(let reasonCode) = try await completion(of: mid, kind: .publish), reasonCode >= 0x80 {
            throw MQTTError(
                .publishRefused, "broker refused publish to '\(topic)': \(Mosquitto.reasonString(reasonCode))",
                reasonCode: Int(reasonCode))
        }
    }

    /// Queues one message and returns at once, without waiting for the broker's acknowledgement:
    /// for bulk publishing (the retained view of a home). The engine still delivers QoS 1/2,
    /// across reconnects; a QoS 0 message is dropped when there is no connection.
    public func send(
        _ topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) throws {
        try ensureOpen()
        // TCPEngine then reports no completion (mid 0): no entry in `pending` to add and remove.
        let mid = try engine.publish(
            topic: topic, payload: payload, qos: qos, retain: retain, properties: properties, awaited: false)
        loopHasQueued()
        discardCompletion(of: mid, qos: qos)
    }

    /// On the client's loop, writes what its current pass has queued now instead of at the pass's
    /// end (once a pass, see ``EventLoopThread/writeQueuedNow()``); elsewhere, and without a loop, it
    /// does nothing.
    public func writeQueuedNow() { loop?.writeQueuedNow() }

    /// A packet was queued: the loop, if it sleeps, must wake up to write it. On the loop's thread
    /// it is written before the loop sleeps.
    private func loopHasQueued() {
        if let loop, !loop.isCurrent { loop.wake() }
        engine.wakeLoop()
    }

    /// Nobody waits for `mid`: drop its completion, whether it came already or comes later. Id 0
    /// never completes.
    private func discardCompletion(of mid: Int32, qos: MQTTQoS) {
        guard mid != 0 else { return }
        state.withLock { state in
            if state.pending.removeValue(forKey: mid) == nil {
                state.pending[mid] = .discard(untilReconnect: qos == .atMostOnce)
            }
        }
    }

    /// Publishes UTF-8 text.
    public func publish(
        _ topic: String, _ text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) async throws {
        try await publish(topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }

    /// Subscribes to `filters` and returns the QoS the broker granted for each, once it acknowledged.
    /// Throws `subscriptionRefused` naming the filters the broker refused (the others stay subscribed).
    /// Subscriptions are made again after a reconnect whenever the broker did not keep the session.
    @discardableResult
    public func subscribe(
        to filters: [String], qos: MQTTQoS = .atLeastOnce, options: MQTTSubscribeOptions = []
    ) async throws -> [MQTTQoS] {
        guard !filters.isEmpty else { return [] }
        try ensureOpen()
        let record = Subscription(qos: qos, options: options)
        state.withLock { state in
            for filter in filters { state.subscriptions[filter] = record }
        }
        do {
            let connection = state.withLock { $0.connectionsEnded }
            let mid = try engine.subscribe(filters, qos: qos, options: options)
            loopHasQueued()
            guard
                case .subscribed(let reasonCodes) = try await completion(
                    of: mid, kind: .subscribe, sentBefore: connection)
            else {
                return []
            }
            var granted: [MQTTQoS] = []
            var refused: [String] = []
            for (filter, reasonCode) in zip(filters, reasonCodes) {
                if let qos = MQTTQoS(rawValue: Int(reasonCode)) {
                    granted.append(qos)
                } else {
                    refused.append("'\(filter)': \(Mosquitto.reasonString(reasonCode))")
                    _ = state.withLock { $0.subscriptions.removeValue(forKey: filter) }
                }
            }
            guard refused.isEmpty else {
                throw MQTTError(
                    .subscriptionRefused, "broker refused subscription to \(refused.joined(separator: ", "))",
                    reasonCode: reasonCodes.first { $0 >= 0x80 }.map(Int.init))
            }
            return granted
        } catch let error as MQTTError where error.code != .subscriptionRefused {
            state.withLock { state in
                for filter in filters where state.subscriptions[filter] == record {
                    state.subscriptions.removeValue(forKey: filter)
                }
            }
            throw error
        }
    }

    /// Unsubscribes from `filters`; returns when the broker acknowledged.
    public func unsubscribe(from filters: [String]) async throws {
        guard !filters.isEmpty else { return }
        try ensureOpen()
        state.withLock { state in
            for filter in filters { state.subscriptions.removeValue(forKey: filter) }
        }
        let connection = state.withLock { $0.connectionsEnded }
        let mid = try engine.unsubscribe(filters)
        loopHasQueued()
        _ = try await completion(of: mid, kind: .unsubscribe, sentBefore: connection)
    }

    private func ensureOpen() throws(MQTTError) {
        let phase = state.withLock { $0.phase }
        switch phase {
        case .running: return
        case .idle: throw MQTTError(.notConnected, "connect() first")
        case .stopping, .closed: throw MQTTError(.clientClosed, "the client has been shut down")
        }
    }

    /// Waits until the broker acknowledged message `mid`, whether the acknowledgement is already in
    /// or not. Cancelling the task stops the wait with `CancellationError` (a QoS 1/2 publish may
    /// still be delivered by the library afterwards).
    ///
    /// `sentBefore` is the count of ended connections when a SUBSCRIBE or UNSUBSCRIBE was handed to
    /// the engine: if that connection has ended since, the packet is lost (no engine resends it)
    /// and the waiters of that connection were already failed, so this wait fails at once.
    private func completion(of mid: Int32, kind: Pending.Kind, sentBefore connection: Int? = nil) async throws
        -> Completion
    {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Completion, any Error>) in
                enum Outcome { case arrived(Completion), wait, closed, cancelled, lost }
                let outcome: Outcome = state.withLock { state in
                    if case .arrived(let completion) = state.pending[mid] {
                        state.pending.removeValue(forKey: mid)
                        return .arrived(completion)
                    }
                    if state.phase == .closed { return .closed }
                    if let connection, connection != state.connectionsEnded { return .lost }
                    if Task.isCancelled { return .cancelled }
                    state.pending[mid] = .waiting(kind, waiter)
                    return .wait
                }
                switch outcome {
                case .arrived(let completion): waiter.resume(returning: completion)
                case .wait: break
                case .closed:
                    waiter.resume(
                        throwing: MQTTError(.clientClosed, "the client was shut down before the broker acknowledged"))
                case .cancelled: waiter.resume(throwing: CancellationError())
                case .lost:
                    waiter.resume(
                        throwing: MQTTError(.connectionLost, "the connection ended before the broker acknowledged"))
                }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Completion, any Error>? = state.withLock { state in
                guard case .waiting(_, let waiter) = state.pending[mid] else { return nil }
                state.pending[mid] = .discard(untilReconnect: false)
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    // MARK: The network thread

    private func startNetworkThread() {
        networkThreadEnded.enter()
        let name = "mqtt-\(configuration.clientID)"
        let thread = Thread { [self] in
            nameCurrentThread(name)
            runNetworkLoop()
            networkThreadEnded.leave()
        }
        thread.start()
    }

    private func runNetworkLoop() {
        var isFirstAttempt = true
        while state.withLock({ $0.phase == .running }) {
            state.withLock { $0.beginAttempt() }
            var rc =
                isFirstAttempt
                ? engine.connect(
                    host: configuration.host, port: configuration.port, keepAlive: configuration.keepAlive,
                    sessionExpiry: configuration.cleanSession
                        ? nil : UInt32(clamping: configuration.sessionExpiry.components.seconds))
                : engine.reconnect()
            isFirstAttempt = false
            if rc == Mosquitto.success {
                // A shutdown requested while the socket was opening found no connection to close.
                if state.withLock({ $0.phase != .running }) { engine.disconnect() }
                rc = serveConnection()
            }
            let failure = state.withLock { $0.endAttempt(rc: rc) }
            failSubscribeWaiters(with: failure.error)
            if failure.isStopping { break }
            if !failure.hasEverConnected && !configuration.retryInitialConnection {
                failConnectWaiters(with: failure.error)
                state.withLock { $0.phase = .closed }
                break
            }
            let delay = configuration.reconnect.delay(forAttempt: failure.attempt)
            logger.warning(
                "MQTT connection to \(configuration.host):\(configuration.port) down, retrying",
                metadata: ["error": "\(failure.error)", "retryIn": "\(delay)"])
            emit(.disconnected(failure.error, retryIn: delay))
            _ = wakeUp.wait(timeout: .now() + .nanoseconds(Int(delay.nanoseconds)))
        }
        failConnectWaiters(with: MQTTError(.clientClosed, "the client was shut down before it connected"))
        let waiters = state.withLock { state in
            state.phase = .closed
            return state.pending.values.compactMap { if case .waiting(_, let waiter) = $0 { waiter } else { nil } }
        }
        state.withLock { $0.pending.removeAll() }
        let closed = MQTTError(.clientClosed, "the client was shut down before the broker acknowledged")
        for waiter in waiters { waiter.resume(throwing: closed) }
        finishStreams()
    }

    /// Reads and writes until the connection ends (or a stop takes too long), on the loop if the
    /// client has one.
    private func serveConnection() -> Int32 {
        let tooLong = Mosquitto.connectionLost
        // With TLS, libmosquitto serves it on the client's own thread.
        if let loop, let engine = engine as? TCPEngine {
            let source = EventLoopThread.Source(
                descriptor: engine.socket, wantsToWrite: { engine.wantsToWrite },
                read: { engine.loopRead() }, write: { engine.loopWrite() },
                tick: { [self] in
                    let rc = engine.loopMisc()
                    return rc == Mosquitto.success && state.withLock({ $0.stopHasTakenTooLong }) ? tooLong : rc
                })
            if let rc = loop.serve(source) { return rc }
        }
        var rc: Int32
        repeat {
            rc = engine.loop(timeout: .seconds(1))
        } while rc == Mosquitto.success && !state.withLock { $0.stopHasTakenTooLong }
        return rc
    }

    private func finishStreams() {
        let alreadyFinished = state.withLock { state in
            defer { state.streamsFinished = true }
            return state.streamsFinished
        }
        guard !alreadyFinished else { return }
        messageSink.finish()
        let sinks = state.withLock { state in
            defer { state.eventSinks.removeAll() }
            return state.eventSinks.map(\.sink)
        }
        for sink in sinks {
            sink.yield(.closed)
            sink.finish()
        }
    }

    private func failConnectWaiters(with error: MQTTError) {
        let waiters = state.withLock { state in
            defer { state.connectWaiters.removeAll() }
            return state.connectWaiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Neither engine resends SUBSCRIBE/UNSUBSCRIBE after a reconnect, so their waiters fail.
    /// (QoS 1/2 publishes are resent and keep waiting.)
    private func failSubscribeWaiters(with error: MQTTError) {
        let waiters = state.withLock { state in
            var waiters: [CheckedContinuation<Completion, any Error>] = []
            for (mid, pending) in state.pending {
                switch pending {
                case .waiting(let kind, let waiter) where kind != .publish:
                    waiters.append(waiter)
                    state.pending.removeValue(forKey: mid)
                case .discard(untilReconnect: true):
                    // A QoS 0 message not written before the connection broke is never completed.
                    state.pending.removeValue(forKey: mid)
                default:
                    break
                }
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    // MARK: Callbacks (network thread)

    static func from(_ context: UnsafeMutableRawPointer?) -> MQTTClient {
        Unmanaged<MQTTClient>.fromOpaque(context!).takeUnretainedValue()
    }

    func didConnect(reasonCode: Int32, sessionPresent: Bool) {
        guard reasonCode == 0 else {
            let refusal = engine.connectRefusal(reasonCode: reasonCode)
            state.withLock { $0.refusal = refusal }
            return
        }
        let (waiters, resubscriptions) = state.withLock { state in
            state.isConnected = true
            state.hasEverConnected = true
            state.sessionPresent = sessionPresent
            state.attempt = 0
            defer { state.connectWaiters.removeAll() }
            return (state.connectWaiters, sessionPresent ? [:] : state.subscriptionsByOptions)
        }
        logger.info(
            "MQTT connected to \(configuration.host):\(configuration.port)",
            metadata: ["sessionPresent": "\(sessionPresent)"])
        emit(.connected(sessionPresent: sessionPresent))
        for (record, filters) in resubscriptions {
            do {
                let mid = try engine.subscribe(filters, qos: record.qos, options: record.options)
                state.withLock { $0.pending[mid] = .resubscription(filters) }
            } catch {
                logger.error("could not subscribe again", metadata: ["filters": "\(filters)", "error": "\(error)"])
            }
        }
        for waiter in waiters { waiter.resume(returning: sessionPresent) }
    }

    func didDisconnect(reasonCode: Int32) {
        state.withLock { state in
            state.isConnected = false
            if reasonCode != 0 { state.disconnectReason = reasonCode }
        }
    }

    func didComplete(mid: Int32, with completion: Completion) {
        let pending = state.withLock { state in
            let pending = state.pending.removeValue(forKey: mid)
            if pending == nil { state.pending[mid] = .arrived(completion) }
            return pending
        }
        switch pending {
        case .waiting(_, let waiter):
            waiter.resume(returning: completion)
        case .resubscription(let filters):
            if case .subscribed(let codes) = completion {
                for (filter, code) in zip(filters, codes) where code >= 0x80 {
                    logger.error(
                        "broker refused subscription after reconnect",
                        metadata: ["filter": "\(filter)", "reason": "\(Mosquitto.reasonString(code))"])
                }
            }
        case .discard, .arrived, nil:
            break
        }
    }

    func didReceive(_ message: MQTTMessage) {
        messageSink.yield(message)
    }

    func didLog(_ text: String, isError: Bool) {
        if isError { state.withLock { $0.lastLoggedError = text } }
        logger.debug("mqtt: \(text)")
    }
}

// MARK: - State

extension MQTTClient {
    /// What an acknowledgement from the broker completes.
    enum Completion: Sendable {
        case published(reasonCode: Int32)
        case subscribed(reasonCodes: [Int32])
        case unsubscribed
    }

    /// What is known about a message id: someone waits for it, its acknowledgement came before the
    /// caller registered, nobody will wait (QoS 0, `send`, a cancelled wait: a QoS 0 id is dropped at
    /// a disconnect since it will never complete, a QoS 1/2 one when its acknowledgement comes), or it
    /// is a subscription made again after a reconnect.
    enum Pending {
        enum Kind { case publish, subscribe, unsubscribe }
        case waiting(Kind, CheckedContinuation<Completion, any Error>)
        case arrived(Completion)
        case discard(untilReconnect: Bool)
        case resubscription([String])
    }

    struct Subscription: Hashable {
        var qos: MQTTQoS
        var options: MQTTSubscribeOptions
    }

    enum Phase { case idle, running, stopping, closed }

    struct AttemptResult {
        var error: MQTTError
        var isStopping: Bool
        var hasEverConnected: Bool
        var attempt: Int
    }

    struct State {
        var phase = Phase.idle
        var isConnected = false
        var hasEverConnected = false
        var sessionPresent = false
        var attempt = 0
        var connectWaiters: [CheckedContinuation<Bool, any Error>] = []
        var pending: [Int32: Pending] = [:]
        var subscriptions: [String: Subscription] = [:]
        var refusal: MQTTError?
        var disconnectReason: Int32?
        var lastLoggedError: String?
        var stopRequestedAt: ContinuousClock.Instant?
        var streamsFinished = false
        var eventSinks: [(id: Int, sink: AsyncStream<MQTTConnectionEvent>.Continuation)] = []
        var nextSinkID = 0
        /// How many connection attempts have ended: a SUBSCRIBE sent before a change of this number
        /// went down with its connection.
        var connectionsEnded = 0

        var subscriptionsByOptions: [Subscription: [String]] {
            Dictionary(grouping: subscriptions.keys.sorted()) { subscriptions[$0]! }
        }

        /// A DISCONNECT normally closes the socket at once; never wait on a silent broker for long.
        var stopHasTakenTooLong: Bool {
            guard let stopRequestedAt else { return false }
            return ContinuousClock.now - stopRequestedAt > .seconds(3)
        }

        mutating func beginAttempt() {
            refusal = nil
            disconnectReason = nil
            lastLoggedError = nil
        }

        /// Why the attempt or connection ended, in the broker's or the library's words.
        mutating func endAttempt(rc: Int32) -> AttemptResult {
            isConnected = false
            connectionsEnded += 1
            let error: MQTTError
            if let refusal {
                error = refusal
            } else if let disconnectReason, rc != Mosquitto.success {
                error = MQTTError(
                    .connectionLost, "broker closed the connection: \(Mosquitto.reasonString(disconnectReason))",
                    reasonCode: Int(disconnectReason))
            } else {
                error = Mosquitto.error(forResult: rc, detail: lastLoggedError)
            }
            defer { attempt += 1 }
            return AttemptResult(
                error: error, isStopping: phase != .running, hasEverConnected: hasEverConnected, attempt: attempt)
        }
    }
}
