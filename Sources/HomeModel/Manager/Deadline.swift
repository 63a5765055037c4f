import Synchronization

/// Races an operation against a timeout without waiting for an operation that ignores cancellation.
enum Deadline {
    /// Runs `body` and returns its result, or nil once `timeout` has passed on `timer`'s clock: the
    /// body is then cancelled and left to finish on its own. Cancelling the caller ends the wait at
    /// once with `CancellationError` and cancels the body.
    ///
    /// Whoever finishes first cancels the rest, so a finished body leaves no deadline waiting (at
    /// 2,000 commands a second, timers left sleeping once held ~120 MB).
    static func race<Value: Sendable, C: Clock>(
        timeout: C.Duration, timer: DeadlineTimer<C>, _ body: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        let race = Race<Value>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, any Error>?, Never>) in
                race.start(continuation)
                let work = Task {
                    do {
                        race.finish(.success(try await body()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                let deadline = timer.schedule(after: timeout) { race.finish(nil) }
                race.arm(cancelling: [work.cancel, { timer.cancel(deadline) }])
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first of an operation and its timer to finish; later finishers are ignored.
    private final class Race<Value: Sendable>: Sendable {
        typealias Waiter = CheckedContinuation<Result<Value, any Error>?, Never>
        private let state = Mutex<(waiter: Waiter?, cancels: [@Sendable () -> Void], done: Bool)>((nil, [], false))

        func start(_ waiter: Waiter) {
            let early = state.withLock { state -> Bool in
                if state.done { return true }
                state.waiter = waiter
                return false
            }
            if early { waiter.resume(returning: .failure(CancellationError())) }
        }

        /// Keeps what cancels the body's task and the deadline, to be called when the race is
        /// decided (at once if it is already).
        func arm(cancelling cancels: [@Sendable () -> Void]) {
            let done = state.withLock { state -> Bool in
                if !state.done { state.cancels = cancels }
                return state.done
            }
            if done { for cancel in cancels { cancel() } }
        }

        /// Resumes the waiting caller with `outcome` (nil: timed out) unless another came first.
        func finish(_ outcome: Result<Value, any Error>?) {
            let (waiter, cancels) = state.withLock { state -> (Waiter?, [@Sendable () -> Void]) in
                guard !state.done else { return (nil, []) }
                state.done = true
                defer { (state.waiter, state.cancels) = (nil, []) }
                return (state.waiter, state.cancels)
            }
            for cancel in cancels { cancel() }
            waiter?.resume(returning: outcome)
        }
    }
}
