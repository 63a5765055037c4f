import DequeModule
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The thread the history's writes run on, one job after another: a thread of its own, so that its
/// priority can be lowered for good. A priority set on one of libdispatch's shared workers (where
/// GRDB's own writer queue runs) would stay with whatever ran there next, and a process without
/// privileges cannot raise it back.
///
/// At the lowest priority: Linux's `SCHED_IDLE` (and nice 19 beneath it, where that policy is
/// refused), set on this thread alone. A thread of normal priority that wakes (the gateway's loop
/// with a command, the broker, a client) takes the core from it at once. At nice 19 alone the
/// scheduler (EEVDF) lets the writer run out its slice first: `perf sched` showed a gateway's loop
/// thread wait 2.9 ms, woken, while a nice-19 writer wrote its batch on that core (docs/history.md
/// has the bench). It still gets a share (weight 3 against 1,024 for a normal thread) when other work
/// keeps every core busy; when that starves it, the recorder's buffer fills and drops what no longer
/// fits, and says so (docs/history.md).
///
/// A job's caller is resumed from a second thread, of normal priority: libdispatch starts a new
/// worker of the shared pool from the thread that queues work when none is idle, and the worker
/// keeps its creator's priority, so a resumption from the writer could leave the gateway's
/// requests and timers on a worker at the lowest priority.
final class WriterThread: Sendable {
    /// The jobs given and not yet run, shared with the thread (which must not hold the
    /// ``WriterThread``, whose end ends it).
    private final class Jobs: Sendable {
        /// nil ends the thread.
        let queue = Mutex(Deque<(@Sendable () -> Void)?>())
        let ready = DispatchSemaphore(value: 0)
        let niceValue = Mutex<Int32>(0)
        let policy = Mutex<Int32>(0)

        func add(_ job: (@Sendable () -> Void)?) {
            queue.withLock { $0.append(job) }
            ready.signal()
        }

        /// Runs the jobs as they come until the one that is nil.
        func serve() {
            while true {
                ready.wait()
                guard let job = queue.withLock({ $0.removeFirst() }) else { return }
                job()
            }
        }
    }

    private let jobs = Jobs()
    /// The resumptions of the jobs' callers, on a thread of normal priority.
    private let resumptions = Jobs()

    /// Starts the thread, named `name` for `top -H` and `perf` (the first 15 bytes), at the lowest
    /// priority unless `lowPriority` is false (a benchmark that wants the writes' own speed).
    init(name: String, lowPriority: Bool) {
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [jobs, resumptions] in
            // Foundation's Thread.name does not reach the system's name on Linux.
            try? String(decoding: name.utf8.prefix(15), as: UTF8.self).write(
                toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            #if os(Linux)
                // `who` 0 with PRIO_PROCESS is the calling thread on Linux, not the process.
                let thread = __priority_which_t(PRIO_PROCESS.rawValue)
                if lowPriority {
                    _ = setpriority(thread, 0, 19)
                    var parameters = sched_param(sched_priority: 0)
                    _ = sched_setscheduler(0, WriterThread.idlePolicy, &parameters)
                }
                jobs.niceValue.withLock { $0 = getpriority(thread, 0) }
                jobs.policy.withLock { $0 = sched_getscheduler(0) }
            #endif
            started.signal()
            jobs.serve()
            resumptions.add(nil)
        }
        thread.start()
        started.wait()
        Thread { [resumptions] in resumptions.serve() }.start()
    }

    deinit { jobs.add(nil) }

    /// Linux's `SCHED_IDLE`, which Glibc's module leaves out (it is under `__USE_GNU`).
    static let idlePolicy: Int32 = 5

    /// The thread's nice value, as the system reported it once the thread started (19 at the
    /// lowest priority).
    var niceValue: Int32 { jobs.niceValue.withLock { $0 } }

    /// The thread's scheduling policy, as the system reported it once the thread started
    /// (``idlePolicy`` at the lowest priority, 0 for `SCHED_OTHER`).
    var policy: Int32 { jobs.policy.withLock { $0 } }

    /// Runs `work` on the thread after the jobs given before, and returns its result; the caller's
    /// task waits without holding a thread.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            jobs.add { [resumptions] in
                let result = Result { try work() }
                resumptions.add { continuation.resume(with: result) }
            }
        }
    }
}
