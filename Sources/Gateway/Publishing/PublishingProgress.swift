import Synchronization

/// How far the gateway has published the model's events, so a command's answer can wait until what
/// the command changed is on the broker: the value topic goes out on the connection before the
/// answer, and a client that subscribes once it has the answer sees the new value.
final class PublishingProgress: Sendable {
    private struct State {
        var published = 0
        var finished = false
        var waiters: [(mark: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// The events announced before the follower subscribed count as published.
    func start(at announced: Int) {
        resume { $0.published = max($0.published, announced) }
    }

    /// One more event is published.
    func advance() {
        resume { $0.published += 1 }
    }

    /// The follower stopped: nobody waits any more, now or later.
    func finish() {
        resume { $0.finished = true }
    }

    /// Returns once `mark` events are published (or publishing has stopped).
    func wait(until mark: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.finished || state.published >= mark { return true }
                state.waiters.append((mark, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func resume(_ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state)
            var ready: [CheckedContinuation<Void, Never>] = []
            let (finished, published) = (state.finished, state.published)
            state.waiters.removeAll { waiter in
                guard finished || waiter.mark <= published else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
