import MQTT
import Synchronization

/// The gateway's own clearings of command topics, on their way back to it. MQTT 3.1.1 has no "no
/// local": when the gateway clears a retained command (an empty retained message), the broker
/// delivers that empty message to the gateway's own command subscription as a plain command, and
/// `$run` and `$identify` take an empty payload, so the clearing would run the command it cleared.
/// The gateway notes each clearing here and drops its echo. (With MQTT 5 the subscription is "no
/// local" and nothing comes back.)
///
/// A clearing whose echo never comes (the connection dropped) is forgotten after `lifetime`, so a
/// client's own empty command on that topic later is not mistaken for it.
package final class ClearingEchoes: Sendable {
    private struct Pending {
        var count: Int
        var until: ContinuousClock.Instant
    }

    let lifetime = Duration.seconds(30)
    private let pending = Mutex<[String: Pending]>([:])

    /// Notes that the gateway is clearing `topic`.
    package func expect(_ topic: String, at now: ContinuousClock.Instant = .now) {
        pending.withLock { pending in
            pending = pending.filter { $0.value.until > now }
            pending[topic, default: Pending(count: 0, until: now)].count += 1
            pending[topic]!.until = now + lifetime
        }
    }

    /// Whether `message` is the echo of a clearing (then it is taken off the list and must be
    /// dropped).
    func consume(_ message: MQTTMessage, at now: ContinuousClock.Instant = .now) -> Bool {
        guard message.payload.isEmpty else { return false }
        return pending.withLock { pending in
            guard let entry = pending[message.topic], entry.until > now else {
                pending[message.topic] = nil
                return false
            }
            pending[message.topic] = entry.count > 1 ? Pending(count: entry.count - 1, until: entry.until) : nil
            return true
        }
    }
}
