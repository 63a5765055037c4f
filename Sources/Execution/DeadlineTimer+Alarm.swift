import Synchronization

extension DeadlineTimer {
    /// A loop's wait on the timer that another task can cut short: the schedules wait here for their
    /// next firing and the turn-backs for their next return, and a change of plan rings it. No task
    /// of its own sleeps: the wait is a deadline of the timer. A ring that comes while the loop is
    /// busy ends its next wait at once, so a change that came meanwhile is not slept through.
    package final class Alarm: Sendable {
        private struct State {
            var waiter: UnsafeContinuation<Void, Never>?
            var ticket: Ticket?
            /// Tells the current wait's deadline from one that expired as a ring ended its wait.
            var generation: UInt64 = 0
            /// Rung while nobody waited.
            var rung = false
        }

        private let timer: DeadlineTimer
        private let state = Mutex(State())

        package init(on timer: DeadlineTimer) { self.timer = timer }

        /// Waits until the timer's clock reaches `deadline`, the alarm rings, or the calling task is
        /// cancelled, whichever comes first; at once if it rang since the last wait.
        package func sleep(until deadline: C.Instant) async {
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if state.rung || Task.isCancelled {
                            state.rung = false
                            return true
                        }
                        state.generation &+= 1
                        let generation = state.generation
                        state.waiter = continuation
                        state.ticket = timer.schedule(at: deadline) { [weak self] in self?.end(generation) }
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                end(nil)
            }
        }

        /// Ends the current wait, or, when nobody waits, the next one at once.
        package func ring() { end(nil, ringing: true) }

        /// Ends the wait of `generation` (nil: whichever waits).
        private func end(_ generation: UInt64?, ringing: Bool = false) {
            let (waiter, ticket) = state.withLock { state -> (UnsafeContinuation<Void, Never>?, Ticket?) in
                guard generation == nil || generation == state.generation else { return (nil, nil) }
                if ringing && state.waiter == nil { state.rung = true }
                defer { (state.waiter, state.ticket) = (nil, nil) }
                return (state.waiter, state.ticket)
            }
            if let ticket { timer.cancel(ticket) }
            waiter?.resume()
        }
    }
}
