import DequeModule
import MQTT
import Synchronization

/// Runs each request at most once: a message that repeats one already taken within ``window``
/// (the same topic, payload, response topic and correlation data, so the same account, operation
/// and `id`) gets the first one's answer again instead of a second execution. MQTT's QoS 1 is "at
/// least once": a client whose PUBLISH was not acknowledged sends it again, and across a bridge the
/// copy is a new message to the hub, so an action set or an `addRoom` sent once could run twice
/// (docs/scaling.md). A repeat that comes while the first still runs waits for its answer.
///
/// Only what carries an `id` is kept (a client that wants the guarantee names its request), only
/// what changes something (a read asked again is read again), and only what succeeded: a failure
/// answers the copies that waited for it and is then forgotten, so that sending it again is a
/// retry. Thread-safe; kept in memory, so a restart of the gateway forgets it (a command the broker
/// redelivers after the restart runs).
package final class RequestLedger: Sendable {
    /// What makes two messages the same request.
    package struct Key: Sendable, Hashable {
        let topic: String
        let payload: [UInt8]
        let responseTopic: String?
        let correlationData: [UInt8]?

        package init(_ message: MQTTMessage) {
            topic = message.topic
            payload = message.payload
            responseTopic = message.properties.responseTopic
            correlationData = message.properties.correlationData
        }

        /// What keeping it costs, about: its bytes.
        var size: Int {
            topic.utf8.count + payload.count + (responseTopic?.utf8.count ?? 0) + (correlationData?.count ?? 0)
        }
    }

    private enum Entry {
        case running(waiters: [CheckedContinuation<Handling?, Never>])
        case done(Handling)
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Finished requests, oldest first, for forgetting them once their window has passed.
        var finished = Deque<(key: Key, at: ContinuousClock.Instant)>()
        /// The bytes of the finished requests' keys.
        var bytes = 0
    }

    /// How long a request's answer is kept for its repeats: 10 minutes, longer than any client's
    /// reconnect and well past a broker's restart.
    package let window: Duration
    /// The most finished requests kept, and their most bytes (a payload may be 64 KiB); beyond
    /// either the oldest are forgotten early, so a flood of distinct ids cannot grow memory without
    /// bound (the rate limit caps how fast it can come).
    package let capacity: Int
    let byteBudget: Int
    private let state = Mutex(State())

    package init(window: Duration = .seconds(600), capacity: Int = 10_000, byteBudget: Int = 8 << 20) {
        self.window = window
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    /// Nil when the request is new: the caller runs it and ends with ``finish(_:with:at:)``. Else the
    /// answer of the first of its kind, once that has finished (a failure's too, for a copy that
    /// waited for it).
    func admit(_ key: Key, at now: ContinuousClock.Instant = .now) async -> Handling? {
        enum Admission {
            case new, repeated(Handling), wait
        }
        while true {
            let admission: Admission = state.withLock { state in
                forgetExpired(&state, at: now)
                switch state.entries[key] {
                case .done(let handling)?: return .repeated(handling)
                case .running?: return .wait
                case nil:
                    state.entries[key] = .running(waiters: [])
                    return .new
                }
            }
            switch admission {
            case .new: return nil
            case .repeated(let handling): return handling
            case .wait:
                // The first one's answer, a failure's too; nil when it ended as a failure in the
                // moment between, and this copy is admitted anew.
                let answer: Handling? = await withCheckedContinuation { waiter in
                    let decided: Handling?? = state.withLock { state in
                        switch state.entries[key] {
                        case .running(let waiters)?:
                            state.entries[key] = .running(waiters: waiters + [waiter])
                            return .none
                        case .done(let handling)?: return .some(handling)
                        case nil: return .some(nil)
                        }
                    }
                    if let decided { waiter.resume(returning: decided) }
                }
                if let answer { return answer }
            }
        }
    }

    /// Records how the request of `key` ended, and answers the repeats that waited for it. A
    /// failure is not kept.
    package func finish(_ key: Key, with handling: Handling, at now: ContinuousClock.Instant = .now) {
        let waiters = state.withLock { state -> [CheckedContinuation<Handling?, Never>] in
            guard case .running(let waiters)? = state.entries[key] else { return [] }
            guard handling.outcome == .succeeded else {
                state.entries[key] = nil
                return waiters
            }
            state.entries[key] = .done(handling)
            state.finished.append((key, now))
            state.bytes += key.size
            while state.finished.count > capacity || state.bytes > byteBudget { forgetOldest(&state) }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: handling) }
    }

    /// Whether a repeat of `key` waits for the first's answer: for tests.
    func isWaited(_ key: Key) -> Bool {
        state.withLock { state in
            guard case .running(let waiters)? = state.entries[key] else { return false }
            return !waiters.isEmpty
        }
    }

    /// Requests whose answers are kept now: for tests.
    var kept: Int { state.withLock { $0.finished.count } }

    private func forgetExpired(_ state: inout State, at now: ContinuousClock.Instant) {
        while let oldest = state.finished.first, now - oldest.at >= window { forgetOldest(&state) }
    }

    private func forgetOldest(_ state: inout State) {
        guard let oldest = state.finished.popFirst() else { return }
        state.entries[oldest.key] = nil
        state.bytes -= oldest.key.size
    }
}
