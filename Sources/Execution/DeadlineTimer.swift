import DequeModule
import Synchronization

/// The one timer facility: what should happen later (a command's timeout, the group commit's window,
/// the next probe of a silent accessory, a `$layout` rendered late, a retry's backoff) waits here in
/// order of expiry, on the clock it is given, and a single task sleeps until the earliest. A test
/// gives it a clock it advances by hand, so a day of timers runs in milliseconds. A deadline costs no
/// task of its own (a task to start, a sleep to register, and a wake-up to cancel it: a tenth of a
/// command's thread switches).
///
/// The deadlines of one timeout arrive in order, so the task is armed only when the timer was idle
/// or an earlier deadline arrives; while commands flow it wakes about once per timeout. Deadlines
/// that are cancelled leave at once (commands end in about the order they began, so that is the
/// front of the queue), so what is kept is about the commands in flight.
///
/// Public, not package, so that its inlinable scheduling is inlined into other modules (see
/// ``Deadline``).
public final class DeadlineTimer<C: Clock>: Sendable {
    /// A scheduled deadline, for ``cancel(_:)``.
    public struct Ticket: Sendable, Hashable {
        @usableFromInline let id: UInt64

        @inlinable init(id: UInt64) { self.id = id }
    }

    // Scheduling and cancelling are inlinable (with what they touch), so that a caller in another
    // module gets them specialized for its clock (see Deadline).
    @usableFromInline struct Entry: Sendable {
        @usableFromInline let deadline: C.Instant
        @usableFromInline let id: UInt64
        @usableFromInline let expire: Expiry

        @inlinable init(deadline: C.Instant, id: UInt64, expire: Expiry) {
            (self.deadline, self.id, self.expire) = (deadline, id, expire)
        }
    }

    @usableFromInline struct State: Sendable {
        /// Waiting deadlines, earliest first.
        @usableFromInline var entries = Deque<Entry>()
        @usableFromInline var nextID: UInt64 = 0
        /// The task sleeping until `deadline`, and its generation (a task replaced by an earlier
        /// deadline may still wake; it then arms nothing).
        @usableFromInline var armed: (deadline: C.Instant, generation: UInt64, task: Task<Void, Never>)?
        @usableFromInline var generation: UInt64 = 0

        @usableFromInline init() {}
    }

    /// What happens at a deadline: a call on the timer's task (it must not wait), or work that may
    /// wait (enter an actor), in a task of its own.
    @usableFromInline enum Expiry: Sendable {
        case call(@Sendable () -> Void)
        case work(@Sendable () async -> Void)
    }

    @usableFromInline package let clock: C
    @usableFromInline let state = Mutex(State())

    package init(clock: C) { self.clock = clock }

    /// Deadlines scheduled and neither expired nor cancelled yet.
    package var waiting: Int { state.withLock { $0.entries.count } }

    /// Calls `expire` (once, on the timer's task: it must not block) when `timeout` has passed, unless
    /// the deadline is cancelled first.
    @inlinable
    package func schedule(after timeout: C.Duration, _ expire: @escaping @Sendable () -> Void) -> Ticket {
        schedule(at: clock.now.advanced(by: timeout), .call(expire))
    }

    /// Runs `work` once `timeout` has passed, in a task of its own (it may enter an actor and wait),
    /// unless the deadline is cancelled first.
    @inlinable
    package func schedule(after timeout: C.Duration, work: @escaping @Sendable () async -> Void) -> Ticket {
        schedule(at: clock.now.advanced(by: timeout), .work(work))
    }

    /// Calls `expire` (once, on the timer's task: it must not block) when the clock reaches
    /// `deadline`, unless the deadline is cancelled first.
    @inlinable
    package func schedule(at deadline: C.Instant, _ expire: @escaping @Sendable () -> Void) -> Ticket {
        schedule(at: deadline, .call(expire))
    }

    @inlinable
    func schedule(at deadline: C.Instant, _ expire: Expiry) -> Ticket {
        state.withLock { state in
            let id = state.nextID
            state.nextID &+= 1
            let after = state.entries.lastIndex { $0.deadline <= deadline }.map { $0 + 1 } ?? 0
            state.entries.insert(Entry(deadline: deadline, id: id, expire: expire), at: after)
            if let armed = state.armed, armed.deadline <= deadline { return Ticket(id: id) }
            state.armed?.task.cancel()
            arm(until: deadline, &state)
            return Ticket(id: id)
        }
    }

    /// Forgets a deadline that has not expired (nothing happens for one that has).
    @inlinable
    package func cancel(_ ticket: Ticket) {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == ticket.id }) else { return }
            state.entries.remove(at: index)
        }
    }

    @usableFromInline func arm(until deadline: C.Instant, _ state: inout State) {
        state.generation &+= 1
        let generation = state.generation
        // The timer's one sleeping task, for the earliest deadline.
        let task = Task { [clock] in
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            self.fire(generation)
        }
        state.armed = (deadline, generation, task)
    }

    /// Expires what is due, and arms the task for the next deadline unless a newer task has it.
    private func fire(_ generation: UInt64) {
        let due = state.withLock { state -> [Entry] in
            let now = clock.now
            let due = Array(state.entries.prefix { $0.deadline <= now })
            state.entries.removeFirst(due.count)
            if state.armed?.generation == generation {
                state.armed = nil
                if let next = state.entries.first { arm(until: next.deadline, &state) }
            }
            return due
        }
        for entry in due {
            switch entry.expire {
            case .call(let call): call()
            // Not a child of the timer's task: that one may be cancelled when an earlier deadline
            // comes, and the work must not be.
            case .work(let work): Task { await work() }
            }
        }
    }
}
