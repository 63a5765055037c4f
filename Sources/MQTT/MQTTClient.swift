import AsyncMailbox
import Execution
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// An MQTT client: connect, publish, subscribe, and one ordered stream of incoming messages. It
/// reconnects by itself (exponential backoff with jitter, over the configured brokers in turn),
/// subscribes again after every reconnect, and resends unacknowledged QoS 1/2 publishes after a
/// reconnect.
///
/// The protocol is libmosquitto's, on plain TCP and TLS alike. One task of the client's makes the
/// attempts and waits the backoff between them on the clock it was given. Each attempt connects on
/// a thread of its own (bounded by `connectTimeout`, up to the broker's CONNACK); the connection is
/// then served by the ``EventLoopThread`` the client was given, through libmosquitto's external-loop
/// calls, or else by libmosquitto's own loop on a thread of the client's. What libmosquitto reports
/// is only copied into Swift values and yielded, or resumes a waiting caller. Shut the client down
/// with `disconnect()` (or run it as a `Service`), which sends DISCONNECT, ends the task and
/// finishes the streams.
public final class MQTTClient: Service, Sendable {
    public let configuration: MQTTConfiguration
    /// The thread that serves the connection and runs the tasks that prefer it, if the client was
    /// given one; otherwise the client's own thread serves the connection. Work on what the client
    /// reads belongs there.
    public let loop: EventLoopThread?
    /// Every message from the broker, in the order it arrived. One consumer; it finishes on shutdown.
    public let messages: Mailbox<MQTTMessage>

    private let messageSink: Mailbox<MQTTMessage>.Sender
    private let engine: Mosquitto
    private let state = Mutex(State())
    private let logger: Logger
    private let clock: AnyClock
    /// The wait between attempts, which a shutdown cuts short.
    private let backoff: DeadlineTimer<AnyClock>.Alarm

    /// - Parameters:
    ///   - loop: serve the connection on this thread (see ``EventLoopThread``).
    ///   - clock: the clock of the backoff between attempts (a test's, to retry without waiting).
    public init(
        _ configuration: MQTTConfiguration, logger: Logger = Logger(label: "homegate.mqtt"),
        loop: EventLoopThread? = nil, clock: any Clock<Duration> = ContinuousClock()
    ) throws {
        let keepAlive = configuration.keepAlive.components.seconds
        guard keepAlive == 0 || (5...65535).contains(keepAlive), configuration.keepAlive.components.attoseconds == 0
        else {
            throw MQTTError(
                .invalidArgument,
                "keep-alive \(configuration.keepAlive) is not 0 (off) or a whole number of seconds from 5 to 65535")
        }
        guard configuration.connectTimeout > .zero else {
            throw MQTTError(.invalidArgument, "the connect timeout must be above 0")
        }
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.clock = AnyClock(clock)
        backoff = .init(on: DeadlineTimer(clock: self.clock))
        (messages, messageSink) = Mailbox.make()
        engine = try Mosquitto(configuration: configuration)
        if loop != nil { Self.reportWakeupPair(closed: engine.closeWakeupPair(), logger: logger) }
        // Unretained is enough: callbacks run only while an attempt or a connection is served, and the
        // attempts' task holds `self`.
        engine.installCallbacks(
            context: Unmanaged.passUnretained(self).toOpaque(),
            logging: configuration.tls != nil || logger.logLevel <= .debug)
    }

    deinit {
        engine.destroy()
    }

    /// Whether the process has said how it serves libmosquitto's wake-up pair (once: every client
    /// served by a loop takes the same way, and a hub has several).
    private static let wakeupPairReported = Atomic(false)

    /// Says once, at notice level, which way the clients served by a loop take: the pair closed (a
    /// libmosquitto whose layout is known), or left open, the library's public way, only slower.
    private static func reportWakeupPair(closed: Bool, logger: Logger) {
        guard !wakeupPairReported.exchange(true, ordering: .relaxed) else { return }
        let version = Mosquitto.libraryVersion
        if closed {
            logger.notice("libmosquitto \(version): its wake-up socket pair is closed for the clients the loop serves")
        } else if Mosquitto.knowsWakeupPairLayout {
            logger.notice(
                "libmosquitto \(version): its wake-up socket pair was not where this release keeps it: left open (slower reads)"
            )
        } else {
            logger.notice(
                "libmosquitto \(version) is a release whose layout homegate does not know: its wake-up socket pair is left open, the library's own way (slower reads)"
            )
        }
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
            // Told under the lock: an event emitted meanwhile comes after it, not before.
            let current: MQTTConnectionEvent? =
                state.isConnectionAnnounced ? .connected(sessionPresent: state.sessionPresent) : nil
            if let current { sink.yield(current) }
            return (state.nextSinkID, current)
        }
        if current == .closed {
            sink.yield(.closed)
            sink.finish()
        }
        sink.onTermination = { [weak self] _ in
            self?.state.withLock { $0.eventSinks.removeAll { $0.id == id } }
        }
        return stream
    }

    /// Tells every listener of ``connectionEvents()``. Whether a listener starting now is told it is
    /// connected changes under the same lock as the list of those told here: `isConnected` is set
    /// earlier, and a listener starting between the two would hear of one connection twice (the
    /// gateway then announced `online` twice).
    private func emit(_ event: MQTTConnectionEvent) {
        let sinks = state.withLock { state in
            state.isConnectionAnnounced = if case .connected = event { true } else { false }
            return state.eventSinks.map(\.sink)
        }
        for sink in sinks { sink.yield(event) }
    }

    /// True while the broker has accepted the connection.
    public var isConnected: Bool { state.withLock { $0.isConnected } }

    /// The broker of the connection now, nil while there is none.
    public var connectedBroker: MQTTConfiguration.Broker? {
        state.withLock { $0.isConnected ? configuration.brokers[$0.brokerIndex] : nil }
    }

    /// How many times the client has connected to another broker than the one before.
    public var brokerSwitches: Int { state.withLock { $0.brokerSwitches } }

    // MARK: Connecting

    /// Connects, and returns when the broker accepted the connection, with whether it kept a session
    /// for us. Fails with the broker's or the library's reason (wrong password, nothing listening,
    /// untrusted certificate) unless `retryInitialConnection` is set. Returns at once when connected.
    @discardableResult
    public func connect() async throws -> Bool {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Bool, any Error>) in
            enum Next { case wait, connected(Bool), closed }
            let next: Next = state.withLock { state in
                switch state.phase {
                case .idle:
                    state.phase = .running
                    state.connectWaiters.append(waiter)
                    // Not a child of the caller's task: `connect()` returns once connected, and the
                    // attempts go on until `disconnect()`, which awaits them.
                    state.attempts = Task { await self.keepConnected() }
                    return .wait
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
            case .wait: break
            case .connected(let sessionPresent): waiter.resume(returning: sessionPresent)
            case .closed: waiter.resume(throwing: MQTTError(.clientClosed, "the client has been shut down"))
            }
        }
    }

    /// Sends DISCONNECT (so the broker does not publish the will), ends the attempts, fails whatever
    /// still waits for an acknowledgement and finishes both streams. Safe to call twice.
    public func disconnect() async {
        requestStop()
        await state.withLock { $0.attempts }?.value
    }

    /// Connects, then keeps the connection until graceful shutdown or cancellation, then disconnects.
    /// A shutdown while no broker has answered yet ends it too (it returns without an error then).
    public func run() async throws {
        try await withTaskCancellationOrGracefulShutdownHandler {
            do {
                try await connect()
            } catch let error as MQTTError where error.code == .clientClosed {
                return
            }
            await state.withLock { $0.attempts }?.value
        } onCancelOrGracefulShutdown: {
            self.requestStop()
        }
    }

    private func requestStop() {
        let previous: Phase = state.withLock { state in
            let previous = state.phase
            if previous == .idle { state.phase = .closed }
            if previous == .running {
                state.phase = .stopping
                state.stopRequestedAt = .now
            }
            return previous
        }
        switch previous {
        case .running:
            engine.disconnect()
            loopHasQueued()
            backoff.ring()
        case .idle:
            finishStreams()
        case .stopping, .closed:
            break
        }
    }

    // MARK: Publishing and subscribing

    /// Publishes one message. Returns when it is handed to the network (QoS 0) or when the broker
    /// acknowledged it (QoS 1: PUBACK, QoS 2: PUBCOMP). A QoS 1/2 publish made while the connection is
    /// down is kept and sent after the reconnect; the call returns once that is acknowledged.
    nonisolated(nonsending) public func publish(
        _ topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) async throws {
        try ensureOpen()
        let mid = try engine.publish(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
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
    /// across reconnects; a QoS 0 message made while there is no connection throws `notConnected`.
    public func send(
        _ topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) throws {
        try ensureOpen()
        let mid = try engine.publish(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
        loopHasQueued()
        discardCompletion(of: mid, qos: qos)
    }

    /// A packet was queued: the loop, if it sleeps, must wake up to write it. On the loop's thread
    /// it is written before the loop sleeps; without a loop, libmosquitto wakes its own.
    private func loopHasQueued() {
        if let loop, !loop.isCurrent { loop.wake() }
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
    nonisolated(nonsending) public func publish(
        _ topic: String, _ text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) async throws {
        try await publish(topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }

    /// Subscribes to `filters` and returns the QoS the broker granted for each, once it acknowledged.
    /// Throws `subscriptionRefused` naming the filters the broker refused (the others stay subscribed).
    /// Subscriptions are made again after a reconnect whenever the broker did not keep the session.
    /// Filters that do not fit in one packet of the broker's maximum size (MQTT v5) go out in several.
    @discardableResult
    nonisolated(nonsending) public func subscribe(
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
            let packets = try queueSubscriptions(filters, qos: qos, options: options)
            loopHasQueued()
            var reasonCodes: [Int32] = []
            for packet in packets {
                guard
                    case .subscribed(let codes) = try await completion(
                        of: packet.mid, kind: .subscribe, sentBefore: connection)
                else {
                    return []
                }
                reasonCodes += codes
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

    /// Queues SUBSCRIBE packets for `filters`: one, or as many as the broker's maximum packet size
    /// takes, each with its message id.
    private func queueSubscriptions(
        _ filters: [String], qos: MQTTQoS, options: MQTTSubscribeOptions
    ) throws(MQTTError) -> [(filters: [String], mid: Int32)] {
        do throws(MQTTError) {
            return [(filters, try engine.subscribe(filters, qos: qos, options: options))]
        } catch {
            guard error.code == .packetTooLarge, filters.count > 1 else { throw error }
            let half = filters.count / 2
            return try queueSubscriptions(Array(filters[..<half]), qos: qos, options: options)
                + queueSubscriptions(Array(filters[half...]), qos: qos, options: options)
        }
    }

    /// Unsubscribes from `filters`; returns when the broker acknowledged.
    nonisolated(nonsending) public func unsubscribe(from filters: [String]) async throws {
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
    private func completion(
        of mid: Int32, kind: Pending.Kind, sentBefore connection: Int? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> Completion {
        try await withTaskCancellationHandler {
            // Captured, so that the wait stays on the caller's actor (the loop) instead of leaving.
            _ = isolation
            return try await withCheckedThrowingContinuation(isolation: isolation) {
                (waiter: CheckedContinuation<Completion, any Error>) in
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

    // MARK: Attempts

    /// Connects and serves connections until the client is shut down (or, without
    /// `retryInitialConnection`, until the first round over the brokers has failed). Each failed
    /// attempt moves on to the next broker at once; a round ends when the last one failed or a
    /// connection was lost, and the next starts with the first broker after the backoff's delay, on
    /// the client's clock. The delay grows after each round that failed and each connection that did
    /// not last `reconnect.stableAfter`.
    private func keepConnected() async {
        var brokerIndex = 0
        // The backoff's attempt number for the next delay.
        var attempt = 0
        while state.withLock({ $0.phase == .running }) {
            let broker = configuration.brokers[brokerIndex]
            state.withLock { $0.beginAttempt(broker: brokerIndex) }
            var ended = await onOwnThread { self.openConnection(to: broker) }
            var connectedAt: AnyClock.Instant?
            if ended.rc == Mosquitto.success {
                connectedAt = clock.now
                ended = await serveConnection()
            }
            let failure = state.withLock {
                $0.endAttempt(
                    ended, version: configuration.protocolVersion,
                    connectedFor: connectedAt.map { $0.duration(to: clock.now) },
                    stableAfter: configuration.reconnect.stableAfter)
            }
            failSubscribeWaiters(with: failure.error)
            if failure.isStopping { break }
            if let connectedAt, connectedAt.duration(to: clock.now) >= configuration.reconnect.stableAfter {
                attempt = 0
            }
            let roundEnded = connectedAt != nil || brokerIndex == configuration.brokers.count - 1
            if !failure.hasEverConnected && !configuration.retryInitialConnection && roundEnded {
                failConnectWaiters(with: failure.error)
                state.withLock { $0.phase = .closed }
                break
            }
            let delay: Duration = roundEnded ? configuration.reconnect.delay(forAttempt: attempt) : .zero
            if roundEnded { attempt += 1 }
            brokerIndex = roundEnded ? 0 : brokerIndex + 1
            logger.warning(
                connectedAt == nil
                    ? "MQTT connection to \(broker) failed, retrying" : "MQTT connection to \(broker) lost, retrying",
                metadata: [
                    "error": "\(failure.error)", "retryIn": "\(delay)", "next": "\(configuration.brokers[brokerIndex])",
                ])
            emit(.disconnected(failure.error, retryIn: delay))
            if delay > .zero { await backoff.sleep(until: clock.now.advanced(by: delay)) }
        }
        failConnectWaiters(with: MQTTError(.clientClosed, "the client was shut down before it connected"))
        let waiters = state.withLock { state in
            state.phase = .closed
            defer { state.pending.removeAll() }
            return state.pending.values.compactMap { if case .waiting(_, let waiter) = $0 { waiter } else { nil } }
        }
        let closed = MQTTError(.clientClosed, "the client was shut down before the broker acknowledged")
        for waiter in waiters { waiter.resume(throwing: closed) }
        finishStreams()
    }

    /// Runs `body` on a thread of the client's and returns its result with that thread's `errno`:
    /// libmosquitto's connect (its name lookup) and its own loop block, so they stay off the
    /// cooperative pool and the loop.
    private func onOwnThread(_ body: @escaping @Sendable () -> Int32) async -> (rc: Int32, errno: Int32) {
        let name = "mqtt-\(configuration.clientID)"
        return await withCheckedContinuation { done in
            Thread {
                nameCurrentThread(name)
                let rc = body()
                done.resume(returning: (rc, errno))
            }.start()
        }
    }

    /// Opens a connection to `broker` on the calling thread and serves it until the broker's
    /// CONNACK, within `connectTimeout`: success once the broker accepted, else why not.
    private func openConnection(to broker: MQTTConfiguration.Broker) -> Int32 {
        let deadline = ContinuousClock.now + configuration.connectTimeout
        var rc = engine.connect(to: broker, keepAlive: configuration.keepAlive)
        while rc == Mosquitto.success {
            let (phase, isConnected) = state.withLock { ($0.phase, $0.isConnected) }
            if isConnected { return Mosquitto.success }
            // A shutdown while connecting: nothing to say goodbye to yet.
            if phase != .running { return Mosquitto.connectionLost }
            let remaining = deadline - .now
            guard remaining > .zero else {
                state.withLock {
                    $0.timeout = MQTTError(
                        .connectionFailed,
                        "no answer from \(broker) within \(configuration.connectTimeout) (connect timeout)")
                }
                return Mosquitto.timedOut
            }
            rc = engine.loop(timeout: min(remaining, selectTimeout / 2))
        }
        return rc
    }

    /// How long one `mosquitto_loop` may wait (while connecting, and serving where no loop does):
    /// a client given a loop has no wake-up pair (``Mosquitto/closeWakeupPair()``), so nothing that
    /// another thread queues ends the wait early.
    private var selectTimeout: Duration { loop == nil ? .seconds(1) : .milliseconds(100) }

    /// Reads and writes until the connection ends (or a stop takes too long), on the loop if the
    /// client has one.
    private func serveConnection() async -> (rc: Int32, errno: Int32) {
        let tooLong = Mosquitto.connectionLost
        if let loop {
            let engine = engine
            let source = EventLoopThread.Source(
                descriptor: engine.socket, hasBufferedInput: { engine.hasBufferedInput },
                wantsToWrite: { engine.wantsToWrite },
                read: { engine.loopRead() }, write: { engine.loopWrite() },
                tick: { [self] in
                    let rc = engine.loopMisc()
                    return rc == Mosquitto.success && state.withLock({ $0.stopHasTakenTooLong }) ? tooLong : rc
                })
            if let ended = await loop.serve(source) { return ended }
        }
        return await onOwnThread { [self] in
            var rc: Int32
            repeat {
                rc = engine.loop(timeout: selectTimeout)
            } while rc == Mosquitto.success && !state.withLock { $0.stopHasTakenTooLong }
            return rc
        }
    }

    private func finishStreams() {
        let sinks = state.withLock { state -> [AsyncStream<MQTTConnectionEvent>.Continuation]? in
            guard !state.streamsFinished else { return nil }
            state.streamsFinished = true
            defer { state.eventSinks.removeAll() }
            return state.eventSinks.map(\.sink)
        }
        guard let sinks else { return }
        messageSink.finish()
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

    /// libmosquitto does not resend SUBSCRIBE/UNSUBSCRIBE after a reconnect, so their waiters fail.
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

    func didConnect(reasonCode: Int32, sessionPresent: Bool, limits: BrokerLimits) {
        guard reasonCode == 0 else {
            let refusal = Mosquitto.connectRefusal(reasonCode: reasonCode, version: configuration.protocolVersion)
            state.withLock { $0.refusal = refusal }
            return
        }
        let (waiters, resubscriptions, broker, switched) = state.withLock { state in
            state.isConnected = true
            state.sessionPresent = sessionPresent
            let switched = state.lastConnectedBroker.map { $0 != state.brokerIndex } ?? false
            if switched { state.brokerSwitches += 1 }
            state.lastConnectedBroker = state.brokerIndex
            defer { state.connectWaiters.removeAll() }
            // Also when the broker says it kept the session: a broker that crashed and restored its
            // persistence file (mosquitto writes it every autosave_interval) may hold the session
            // without the subscriptions made after the last save. Subscribing again replaces a kept
            // subscription; its cost is the retained messages, which the broker sends once more.
            let resubscriptions = Dictionary(grouping: state.subscriptions.keys.sorted()) { state.subscriptions[$0]! }
            return (state.connectWaiters, resubscriptions, configuration.brokers[state.brokerIndex], switched)
        }
        logger.info(
            switched ? "MQTT connected to \(broker), another broker than before" : "MQTT connected to \(broker)",
            metadata: ["sessionPresent": "\(sessionPresent)"])
        warnAbout(limits, broker: broker)
        // Queued before anyone hears of the connection, so that what they publish in answer reaches
        // the broker after the subscriptions (a client that sees our `online` can be answered).
        for (record, filters) in resubscriptions {
            do {
                for packet in try queueSubscriptions(filters, qos: record.qos, options: record.options) {
                    state.withLock { $0.pending[packet.mid] = .resubscription(packet.filters) }
                }
            } catch {
                logger.error("could not subscribe again", metadata: ["filters": "\(filters)", "error": "\(error)"])
            }
        }
        emit(.connected(sessionPresent: sessionPresent))
        for waiter in waiters { waiter.resume(returning: sessionPresent) }
    }

    /// A broker that offers less than MQTT's full set says so in its CONNACK; what a client then
    /// cannot do should be in the log once per connection, not only in failed publishes.
    private func warnAbout(_ limits: BrokerLimits, broker: MQTTConfiguration.Broker) {
        if let maximumQoS = limits.maximumQoS, maximumQoS < .exactlyOnce {
            logger.warning(
                "the broker \(broker) accepts publishes up to QoS \(maximumQoS.rawValue) only; higher ones are refused")
        }
        if !limits.retainAvailable {
            logger.warning(
                "the broker \(broker) keeps no retained messages: retained publishes are refused, and subscribers see nothing until the next change"
            )
        }
    }

    func didDisconnect(reasonCode: Int32) {
        state.withLock { state in
            state.isConnected = false
            // The broker's DISCONNECT reason comes first; libmosquitto's own code for the closed
            // socket follows it and says less.
            if reasonCode != 0 && state.disconnectReason == nil { state.disconnectReason = reasonCode }
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

    /// A PUBLISH whose topic name has wildcards, which MQTT does not allow: dropped.
    func didReceiveInvalid(topic: String) {
        logger.warning("dropped a message from the broker with an invalid topic name", metadata: ["topic": "\(topic)"])
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

    struct State {
        var phase = Phase.idle
        var isConnected = false
        /// Whether the last event told to ``connectionEvents()`` listeners was `.connected`.
        var isConnectionAnnounced = false
        var sessionPresent = false
        var connectWaiters: [CheckedContinuation<Bool, any Error>] = []
        var pending: [Int32: Pending] = [:]
        var subscriptions: [String: Subscription] = [:]
        var refusal: MQTTError?
        var timeout: MQTTError?
        /// The broker of the attempt or connection now, and of the last accepted connection (nil
        /// until one was accepted).
        var brokerIndex = 0
        var lastConnectedBroker: Int?
        var brokerSwitches = 0
        var disconnectReason: Int32?
        var lastLoggedError: String?
        var stopRequestedAt: ContinuousClock.Instant?
        /// The task that makes the attempts and serves the connections, from the first `connect()`.
        var attempts: Task<Void, Never>?
        var streamsFinished = false
        var eventSinks: [(id: Int, sink: AsyncStream<MQTTConnectionEvent>.Continuation)] = []
        var nextSinkID = 0
        /// How many connection attempts have ended: a SUBSCRIBE sent before a change of this number
        /// went down with its connection.
        var connectionsEnded = 0

        /// A DISCONNECT normally closes the socket at once; never wait on a silent broker for long.
        var stopHasTakenTooLong: Bool {
            guard let stopRequestedAt else { return false }
            return ContinuousClock.now - stopRequestedAt > .seconds(3)
        }

        mutating func beginAttempt(broker: Int) {
            brokerIndex = broker
            refusal = nil
            timeout = nil
            disconnectReason = nil
            lastLoggedError = nil
        }

        /// Why the attempt or connection ended, in the broker's or the library's words.
        mutating func endAttempt(
            _ ended: (rc: Int32, errno: Int32), version: MQTTConfiguration.ProtocolVersion, connectedFor: Duration?,
            stableAfter: Duration
        ) -> (error: MQTTError, isStopping: Bool, hasEverConnected: Bool) {
            isConnected = false
            connectionsEnded += 1
            var error: MQTTError
            if let refusal {
                error = refusal
            } else if let timeout {
                error = timeout
            } else if let disconnectReason, disconnectReason >= 0x80 {
                // A DISCONNECT from the broker (MQTT v5) says why in a reason code.
                var message = "broker closed the connection: \(Mosquitto.reasonString(disconnectReason))"
                if disconnectReason == 0x8E {
                    message += " (another client connected with the same client id)"
                }
                error = MQTTError(.connectionLost, message, reasonCode: Int(disconnectReason))
            } else {
                error = Mosquitto.error(forResult: ended.rc, systemError: ended.errno, detail: lastLoggedError)
            }
            // A broker that closes a connection it accepted a moment ago, without a word (mosquitto
            // 2.0 says nothing to the client whose session another takes over).
            if let connectedFor, connectedFor < min(stableAfter, .seconds(5)), error.code == .connectionLost,
                disconnectReason ?? 0 < 0x80
            {
                let seconds = connectedFor / .seconds(1)
                error = MQTTError(
                    error.code,
                    "\(error.message) The broker closed it \(String(format: "%.1f", seconds)) s after accepting it, without a reason: another client with the same client id, or a limit of the broker's (its log says which).",
                    reasonCode: error.reasonCode)
            }
            // A v5 CONNECT that a 3.1.1-only broker drops instead of refusing.
            if version == .v5 && refusal == nil && lastConnectedBroker == nil
                && (error.code == .connectionLost || error.code == .protocolError || timeout != nil)
            {
                error = MQTTError(
                    error.code, "\(error.message); \(MQTTError.protocolHint)", reasonCode: error.reasonCode)
            }
            return (error, phase != .running, lastConnectedBroker != nil)
        }
    }
}
