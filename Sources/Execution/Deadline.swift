import Synchronization

/// Races an operation against a timeout without waiting for an operation that ignores cancellation.
///
/// Public, not package, like ``DeadlineTimer``: Swift 6.3 inlines an `@inlinable` member into
/// another module only when its type is public, and the race must be specialized where it is
/// called (see ``race(isolation:timeout:timer:_:)``).
public enum Deadline {
    /// Runs `body` and returns its result, or nil once `timeout` has passed on `timer`'s clock: the
    /// body is then cancelled and left to finish on its own. Cancelling the caller ends the wait at
    /// once with `CancellationError` and cancels the body.
    ///
    /// Whoever finishes first cancels the rest, so a finished body leaves no deadline waiting (at
    /// 2,000 commands a second, timers left sleeping once held ~120 MB).
    ///
    /// Inlinable, with the race and the timer it uses, so that a caller in another module (the
    /// manager's driver calls) gets it specialized for its value and clock, as it was while it lived
    /// in HomeModel: unspecialized, each write looked up the generic metadata of the race's and the
    /// timer's state at run time (docs/benchmarks.md, "Issue 53: CPU per write and the hub's memory").
    @inlinable
    package static func race<Value: Sendable, C: Clock>(
        isolation: isolated (any Actor)? = #isolation, timeout: C.Duration, timer: DeadlineTimer<C>,
        _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        if Task.isCancelled { return .failure(CancellationError()) }
        let race = Race<Value>()
        // A task of the caller's actor (the manager, on the loop): the body runs there, in the same
        // pass, and a driver on the same executor (the virtual devices, zigbee2mqtt's) is called
        // without a hop. A task, so that a body that ignores cancellation can be left behind.
        let run: nonisolated(nonsending) @Sendable () async -> Void = {
            do {
                race.finish(.success(try await body()))
            } catch {
                race.finish(.failure(error))
            }
        }
        // Called from an actor whose executor is a task executor (the loop), the task prefers it, so a
        // body that waits resumes there; otherwise it is the caller's actor's (it captures `isolation`).
        let work =
            taskExecutor(preferredBy: isolation).map { Task(executorPreference: $0, operation: run) }
            ?? Task {
                _ = isolation
                await run()
            }
        if let outcome = race.outcome { return outcome }
        return await withTaskCancellationHandler {
            // Captured, so that this closure too runs on the caller's actor: one that captures nothing
            // isolated is nonisolated, and its code would leave for the global executor and come back.
            _ = isolation
            return await withUnsafeContinuation(isolation: isolation) {
                (continuation: UnsafeContinuation<Result<Value, any Error>?, Never>) in
                race.start(continuation)
                let deadline = timer.schedule(after: timeout) { race.finish(nil) }
                race.arm {
                    work.cancel()
                    timer.cancel(deadline)
                }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// What a task started for `actor` prefers: its executor, when it is an ``ExecutorChoosingActor``
    /// on a task executor (the loop).
    @usableFromInline static func taskExecutor(preferredBy actor: (any Actor)?) -> (any TaskExecutor)? {
        (actor as? any ExecutorChoosingActor)?.executorChoice.taskExecutor
    }

    /// The first of an operation and its timer to finish; later finishers are ignored.
    @usableFromInline final class Race<Value: Sendable>: Sendable {
        @usableFromInline typealias Outcome = Result<Value, any Error>?
        /// Resumed once: only `finish` resumes it, and only the first `finish` decides.
        @usableFromInline typealias Waiter = UnsafeContinuation<Outcome, Never>
        @usableFromInline struct State: Sendable {
            @usableFromInline var waiter: Waiter?
            @usableFromInline var cancel: (@Sendable () -> Void)?
            /// The outcome once decided (nil inside: timed out), kept until someone waits for it.
            @usableFromInline var outcome: Outcome?

            @inlinable init() {}
        }
        @usableFromInline let state: Mutex<State>

        @inlinable init() { state = Mutex(State()) }

        /// The outcome if the race is decided.
        @inlinable var outcome: Outcome? { state.withLock { $0.outcome } }

        /// Waits for the outcome (resumed at once if it is decided).
        @inlinable func start(_ waiter: Waiter) {
            let decided = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiter = waiter
                return nil
            }
            if let decided { waiter.resume(returning: decided) }
        }

        /// Keeps what cancels the body's task and the deadline, to be called when the race is
        /// decided (at once if it is already).
        @inlinable func arm(cancelling cancel: @escaping @Sendable () -> Void) {
            let decided = state.withLock { state -> Bool in
                if state.outcome == nil { state.cancel = cancel }
                return state.outcome != nil
            }
            if decided { cancel() }
        }

        /// Decides the race with `outcome` (nil: timed out) unless it is decided: resumes the
        /// waiting caller and cancels the rest.
        @inlinable func finish(_ outcome: Outcome) {
            let decided = state.withLock { state -> (Waiter?, (@Sendable () -> Void)?)? in
                guard state.outcome == nil else { return nil }
                state.outcome = .some(outcome)
                defer { (state.waiter, state.cancel) = (nil, nil) }
                return (state.waiter, state.cancel)
            }
            guard let (waiter, cancel) = decided else { return }
            cancel?()
            waiter?.resume(returning: outcome)
        }
    }
}
