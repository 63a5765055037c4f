import Synchronization

/// Counters for `B/$health`, shared by the parts of the gateway that count.
public final class GatewayStatistics: Sendable {
    private struct Counts {
        var messagesIn = 0
        var messagesOut = 0
        var brokerReconnects = 0
        var commandsOK = 0
        var commandsFailed: [String: Int] = [:]
        var dynamicSecurity: JSON?
    }

    private let counts = Mutex(Counts())
    /// When the gateway started, for its uptime.
    public let started = ContinuousClock.now

    public init() {}

    public func receivedMessage() { counts.withLock { $0.messagesIn += 1 } }
    public func sentMessage() { counts.withLock { $0.messagesOut += 1 } }
    public func reconnected() { counts.withLock { $0.brokerReconnects += 1 } }
    /// What the dynamic-security keeper last saw (``AccessKeeper/Status``).
    func recordDynamicSecurity(_ status: JSON) { counts.withLock { $0.dynamicSecurity = status } }

    /// Counts a handled command or request by its outcome.
    public func handled(_ outcome: Handling.Outcome) {
        counts.withLock { counts in
            switch outcome {
            case .ignored: break
            case .succeeded: counts.commandsOK += 1
            case .failed(let code): counts.commandsFailed[code, default: 0] += 1
            }
        }
    }

    /// The `B/$health` payload.
    func health(version: String, residentBytes: Int?) -> JSON {
        let counts = counts.withLock { $0 }
        let uptime = ContinuousClock.now - started
        let failed = counts.commandsFailed.sorted { $0.key < $1.key }.map {
            (key: $0.key, value: JSON.integer($0.value))
        }
        return .object(
            [
                ("version", .string(version)),
                ("uptimeSeconds", .integer(Int(uptime.components.seconds))),
                ("memory", .object([("residentBytes", residentBytes.map(JSON.integer) ?? .null)])),
                ("broker", .object([("reconnects", .integer(counts.brokerReconnects))])),
                ("messages", .object([("in", .integer(counts.messagesIn)), ("out", .integer(counts.messagesOut))])),
                ("commands", .object([("ok", .integer(counts.commandsOK)), ("failed", .object(failed))])),
            ] + (counts.dynamicSecurity.map { [("dynamicSecurity", $0)] } ?? []))
    }
}
