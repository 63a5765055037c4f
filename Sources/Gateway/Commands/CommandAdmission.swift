import HomeModel
import MQTT
import Synchronization

/// How many commands the gateway works on at once. Beyond the limit a command is answered at once
/// with `tooManyRequests` instead of waiting: a gateway that cannot keep up sheds load and stays
/// responsive, rather than queueing without bound (memory) and answering minutes late.
final class CommandAdmission: Sendable {
    let limit = 1000
    private let inFlight = Atomic<Int>(0)

    /// Takes a place for one command; false when all are taken.
    func enter() -> Bool {
        let (taken, _) = inFlight.add(1, ordering: .relaxed)
        guard taken <= limit else {
            inFlight.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives the place back when the command is done.
    package func leave() { inFlight.subtract(1, ordering: .relaxed) }
}

extension CommandRouter {
    /// The answer to a command that came while the gateway was busy with `limit` others: ignored
    /// when it is no command, else refused with `tooManyRequests`. Reads only the topic (and a request's id).
    func refuseWhileBusy(_ message: MQTTMessage, limit: Int) -> Handling {
        guard !message.retain, let command = try? topics.parse(message.topic) else { return .ignored }
        let error = HomeError(
            .tooManyRequests, "The gateway is working on \(limit) commands; nothing was done, send again shortly.")
        return refusal(message, command: command, error, respondingTo: true)
    }
}
