import JSON
import Synchronization

/// Counters for `B/$health`, shared by the parts of the gateway that count.
package final class GatewayStatistics: Sendable {
    private struct Counts {
        /// The counters so far; the uptime and the last minute's are filled in when read.
        var summary = Summary()
        var dynamicSecurity: JSON?
        var lastMinute = MinuteCounter()
    }

    /// Commands handled per second over the last minute, in a ring of 60 counts.
    struct MinuteCounter {
        private var handled = [Int](repeating: 0, count: 60)
        private var failed = [Int](repeating: 0, count: 60)
        private var second: Int64 = 0

        mutating func count(failed isFailure: Bool, at now: Int64) {
            advance(to: now)
            handled[Int(now % 60)] += 1
            if isFailure { failed[Int(now % 60)] += 1 }
        }

        mutating func totals(at now: Int64) -> (handled: Int, failed: Int) {
            advance(to: now)
            return (handled.reduce(0, +), failed.reduce(0, +))
        }

        private mutating func advance(to now: Int64) {
            guard now > second else { return }
            for passed in (second + 1)...min(now, second + 60) {
                handled[Int(passed % 60)] = 0
                failed[Int(passed % 60)] = 0
            }
            second = now
        }
    }

    private let counts = Mutex(Counts())
    /// When the gateway started, for its uptime.
    package let started = ContinuousClock.now

    package init() {}

    func receivedMessage() { counts.withLock { $0.summary.messagesIn += 1 } }
    func sentMessage() { counts.withLock { $0.summary.messagesOut += 1 } }
    func reconnected() { counts.withLock { $0.summary.brokerReconnects += 1 } }
    /// What the dynamic-security keeper last saw (``AccessKeeper/Status``).
    func recordDynamicSecurity(_ status: JSON) { counts.withLock { $0.dynamicSecurity = status } }

    /// Counts a handled command or request by its outcome.
    package func handled(_ outcome: Handling.Outcome) {
        let second = secondsSinceStart()
        counts.withLock { counts in
            switch outcome {
            case .ignored: break
            case .succeeded:
                counts.summary.commandsSucceeded += 1
                counts.lastMinute.count(failed: false, at: second)
            case .failed(let code):
                counts.summary.commandsFailed[code, default: 0] += 1
                counts.lastMinute.count(failed: true, at: second)
            }
        }
    }

    /// What the gateway's health page shows: the counters so far and the last minute's commands.
    package struct Summary: Sendable, Equatable {
        package var uptime = Duration.zero
        package var messagesIn = 0
        package var messagesOut = 0
        package var brokerReconnects = 0
        package var commandsSucceeded = 0
        /// Failed commands and requests by error code, since the start.
        package var commandsFailed: [String: Int] = [:]
        /// Commands and requests handled in the last 60 seconds, and how many of them failed.
        package var commandsLastMinute = 0
        package var failuresLastMinute = 0
    }

    package func summary() -> Summary {
        let second = secondsSinceStart()
        return counts.withLock { counts in
            var summary = counts.summary
            summary.uptime = ContinuousClock.now - started
            (summary.commandsLastMinute, summary.failuresLastMinute) = counts.lastMinute.totals(at: second)
            return summary
        }
    }

    private func secondsSinceStart() -> Int64 { (ContinuousClock.now - started).components.seconds }

    /// The `B/$health` payload.
    ///
    /// - Parameters:
    ///   - broker: the broker the gateway is connected to (`host:port`), nil when unknown.
    ///   - brokerSwitches: how often the gateway moved to another of its brokers.
    func health(version: String, residentBytes: Int?, broker: String? = nil, brokerSwitches: Int = 0) -> JSON {
        let (summary, dynamicSecurity) = counts.withLock { ($0.summary, $0.dynamicSecurity) }
        let uptime = ContinuousClock.now - started
        let failed = summary.commandsFailed.sorted { $0.key < $1.key }.map {
            (key: $0.key, value: JSON.integer($0.value))
        }
        return .object(
            [
                ("version", .string(version)),
                ("uptimeSeconds", .integer(Int(uptime.components.seconds))),
                ("memory", .object([("residentBytes", residentBytes.map(JSON.integer) ?? .null)])),
                (
                    "broker",
                    .object([
                        ("reconnects", .integer(summary.brokerReconnects)),
                        ("address", broker.map(JSON.string) ?? .null),
                        ("switches", .integer(brokerSwitches)),
                    ])
                ),
                ("messages", .object([("in", .integer(summary.messagesIn)), ("out", .integer(summary.messagesOut))])),
                ("commands", .object([("ok", .integer(summary.commandsSucceeded)), ("failed", .object(failed))])),
            ] + (dynamicSecurity.map { [("dynamicSecurity", $0)] } ?? []))
    }
}
