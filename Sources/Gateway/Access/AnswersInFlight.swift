import Execution
import Foundation
import Synchronization

/// The requests being handled whose answers are not sent yet. A change of the broker's access rules
/// waits for them (``settled(within:)``): mosquitto disconnects an account whose roles change, so an
/// administrator who adds a home would otherwise be disconnected before the answer reached it, and a
/// client with a clean session never gets it. Waited for, the answer is queued first on the gateway's
/// one connection and reaches the broker, and the account, first.
final class AnswersInFlight: Sendable {
    struct State {
        var count = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }
    let state = Mutex(State())
    private let timer: DeadlineTimer<AnyClock>

    init(clock: some Clock<Duration> = ContinuousClock()) {
        timer = DeadlineTimer(clock: AnyClock(clock))
    }

    /// A request is being handled; its answer is not sent yet.
    func enter() { state.withLock { $0.count += 1 } }

    /// The request's answer is sent (or it needs none).
    func leave() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no answer is in flight, or after `limit`: a request waiting for a slow device
    /// must not hold back a removed member's loss of access for long.
    func settled(within limit: Duration) async {
        let id = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let settled = state.withLock { state -> Bool in
                guard state.count > 0 else { return true }
                state.waiters[id] = continuation
                return false
            }
            if settled {
                continuation.resume()
                return
            }
            // Whoever waits stops waiting after `limit`, settled or not.
            _ = timer.schedule(after: limit) { [self] in
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
