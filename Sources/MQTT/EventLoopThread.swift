import Dispatch
import Execution
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One thread that runs the gateway's actors and serves MQTT connections: the gateway's command path
/// (reading a command, checking it, applying it, publishing what changed, answering) on one thread,
/// with no hand-off between threads, and the packets of a pass written together.
///
/// It is a `SerialExecutor`: the actors that must run on it (the home manager, the publisher, the
/// command server, the drivers that share its connections) return it as their `unownedExecutor`, so
/// their code is on this thread by construction, and a call from one of them to another is no hop.
/// It is a `TaskExecutor` too, which those actors' long-lived tasks prefer (``ExecutorChoice``), so
/// that a wait that ends resumes here and not on the global executor first.
/// An ``MQTTClient`` made with it hands its connection (plain TCP or TLS) to the thread once
/// connected (``serve(_:)``), which drives libmosquitto through its external-loop calls. Each pass
/// reads the socket, runs the jobs that what it read woke, and writes what they queued; the thread
/// sleeps in `poll` when nothing waits. Connecting stays on a thread of the client's, so a slow broker
/// or name lookup never stalls the actors. After ``stop()`` its jobs run one at a time on a dispatch
/// queue.
public final class EventLoopThread: SerialExecutor, TaskExecutor, @unchecked Sendable {
    /// A descriptor the thread serves: its socket and what to do when it is readable or writable
    /// and once per pass, each called on the loop's thread. Each returns a result (libmosquitto's
    /// for an MQTT connection); anything but 0 ends the service.
    package struct Source: @unchecked Sendable {
        var descriptor: Int32
        /// Input already read from the socket and not yet handled (TLS's decrypted bytes), which
        /// `poll` cannot see: the pass reads when this is true, readable socket or not.
        var hasBufferedInput: () -> Bool = { false }
        /// False while the source has taken in more than it has handled: `poll` then does not
        /// watch it for input, and the peer waits in the socket's buffer (and TCP's window).
        var wantsToRead: () -> Bool = { true }
        var wantsToWrite: () -> Bool
        var read: () -> Int32
        var write: () -> Int32
        var tick: () -> Int32

        package init(
            descriptor: Int32, hasBufferedInput: @escaping () -> Bool = { false },
            wantsToRead: @escaping () -> Bool = { true }, wantsToWrite: @escaping () -> Bool,
            read: @escaping () -> Int32, write: @escaping () -> Int32, tick: @escaping () -> Int32
        ) {
            self.descriptor = descriptor
            self.hasBufferedInput = hasBufferedInput
            self.wantsToRead = wantsToRead
            self.wantsToWrite = wantsToWrite
            self.read = read
            self.write = write
            self.tick = tick
        }
    }

    /// A source being served, and what is called on the loop's thread when it ends.
    private final class Service: @unchecked Sendable {
        let source: Source
        let ended: (Int32) -> Void
        init(_ source: Source, ended: @escaping (Int32) -> Void) {
            self.source = source
            self.ended = ended
        }
    }

    private struct State {
        var jobs: [UnownedJob] = []
        /// Jobs of tasks above medium priority: they run before the next ordinary job.
        var urgentJobs: [UnownedJob] = []
        var isSleeping = false
        var services: [Service] = []
        var isStopping = false
        var hasEnded = false
        /// Tasks waiting for the next pass's reads (``nextPass()``).
        var passWaiters: [CheckedContinuation<Void, Never>] = []

        var hasJobs: Bool { !jobs.isEmpty || !urgentJobs.isEmpty }
    }

    private let state = Mutex(State())
    // The pass in progress, touched on the loop's thread only: its connections, their results,
    // the `errno` each failed call left (the pass's later calls overwrite the thread's), and
    // whether ``writeQueuedNow()`` may still write.
    private var passServices: [Service] = []
    private var passResults: [Int32] = []
    private var passErrnos: [Int32] = []
    private var mayWriteEarly = false
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let threadID = Mutex<pthread_t?>(nil)
    private let ended = DispatchSemaphore(value: 0)
    /// Where jobs run once the thread has ended, still one at a time.
    private let afterStop: SerialQueueExecutor
    /// Called on the thread when it comes to rest (``init(name:atRest:)``).
    private let atRest: @Sendable () -> Void

    /// Starts the thread. `atRest` is called on it each time it comes to rest: after work, a whole
    /// `poll` timeout (a second) with nothing to read, write or run, while it serves a connection. The
    /// gateway gives malloc's free pages back to the system there, once per spell of quiet.
    public init(name: String, atRest: @escaping @Sendable () -> Void = {}) {
        afterStop = SerialQueueExecutor(label: "\(name)-stopped")
        self.atRest = atRest
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "could not make the event loop's wake-up pipe: errno \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (wakeReader, wakeWriter) = (ends[0], ends[1])
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            nameCurrentThread(name)
            threadID.withLock { $0 = pthread_self() }
            started.signal()
            run()
            threadID.withLock { $0 = nil }
            ended.signal()
        }
        thread.start()
        started.wait()
    }

    deinit {
        close(wakeReader)
        close(wakeWriter)
    }

    /// True on the loop's own thread.
    public var isCurrent: Bool {
        threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let isUrgent = job.priority.rawValue > TaskPriority.medium.rawValue
        let unowned = UnownedJob(job)
        enum Next { case queued, wake, forward }
        let next: Next = state.withLock { state in
            if state.hasEnded { return .forward }
            if isUrgent { state.urgentJobs.append(unowned) } else { state.jobs.append(unowned) }
            guard state.isSleeping else { return .queued }
            state.isSleeping = false
            return .wake
        }
        switch next {
        case .queued: break
        case .wake: signal()
        case .forward: afterStop.enqueue(ExecutorJob(unowned))
        }
    }

    public func checkIsolated() {
        precondition(isCurrent, "not on the event loop's thread")
    }

    /// Wakes the thread if it sleeps: for a packet queued from another thread, or a source that has
    /// something to say in its next pass (``Source/tick``).
    package func wake() {
        let sleeping = state.withLock { state in
            defer { state.isSleeping = false }
            return state.isSleeping
        }
        if sleeping { signal() }
    }

    /// Returns in the loop's next pass, after it has written what is queued and read what came:
    /// for a task on the loop that publishes much, so the loop's I/O goes on between its steps.
    public func nextPass() async {
        await withCheckedContinuation { waiter in
            let stopped = state.withLock { state in
                guard !state.hasEnded else { return true }
                state.passWaiters.append(waiter)
                return false
            }
            if stopped { waiter.resume() } else { wake() }
        }
    }

    /// Writes what this pass has queued so far now rather than at the pass's end, once a pass
    /// (later calls wait for the end): for a message that the rest of the pass's work should not hold
    /// back, such as a command's new value while its state and events are still rendered. Does nothing
    /// off the loop's thread, outside a pass, or for a connection not yet handed to the loop (one that
    /// has just connected): that one's packets leave once it is served.
    public func writeQueuedNow() {
        guard isCurrent, mayWriteEarly else { return }
        mayWriteEarly = false
        writeQueued()
    }

    /// Writes what each connection of the pass has queued, unless it has already failed.
    private func writeQueued() {
        for index in passServices.indices where passResults[index] == 0 {
            let source = passServices[index].source
            if source.wantsToWrite() {
                passResults[index] = source.write()
                passErrnos[index] = errno
            }
        }
    }

    /// Serves `source` on the loop's thread until one of its calls fails, and returns that result
    /// with the `errno` that call left. Nil if the loop has stopped (the caller serves it).
    func serve(_ source: Source) async -> (rc: Int32, errno: Int32)? {
        await withCheckedContinuation { ended in
            if !attach(source, ended: { ended.resume(returning: ($0, errno)) }) { ended.resume(returning: nil) }
        }
    }

    /// Serves `source` on the loop's thread beside the others until one of its calls fails, then
    /// calls `ended` there with that result: for sockets that are no MQTT connection (the HomeKit
    /// bridge's listener and controllers), served in the same passes as the actors they talk to.
    /// False when the loop is stopping (nothing is served, `ended` is not called).
    package func attach(_ source: Source, ended: @escaping (Int32) -> Void) -> Bool {
        let service = Service(source, ended: ended)
        let accepted = state.withLock { state in
            guard !state.isStopping else { return false }
            state.services.append(service)
            return true
        }
        if accepted { wake() }
        return accepted
    }

    /// Ends the thread once no job is queued, and returns when it has ended; jobs given to it
    /// afterwards run on a dispatch queue, one at a time. Stop the client it serves first: while a connection is
    /// served, or when called on the loop itself, it returns at once and the thread ends later.
    public func stop() {
        let serving = state.withLock { state in
            state.isStopping = true
            return !state.services.isEmpty
        }
        wake()
        if !serving && !isCurrent {
            ended.wait()
            ended.signal()
        }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Runs the jobs queued now, and those they queue, for a bounded number of rounds. Urgent jobs
    /// run before the next ordinary one: the gateway's publisher follows each change before the
    /// next command makes another.
    private func runPending(rounds: Int = 16) {
        var batch: [UnownedJob] = []
        var urgent: [UnownedJob] = []
        let executor = asUnownedSerialExecutor()
        let taskExecutor = asUnownedTaskExecutor()
        for _ in 0..<rounds {
            runUrgent(&urgent, on: executor, taskExecutor)
            state.withLock { swap(&batch, &$0.jobs) }
            if batch.isEmpty { return }
            for job in batch {
                job.runSynchronously(isolatedTo: executor, taskExecutor: taskExecutor)
                runUrgent(&urgent, on: executor, taskExecutor)
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Runs the urgent jobs queued now; those they queue wait for the next call, so urgent work
    /// that keeps coming cannot keep a pass from its reads and writes.
    private func runUrgent(
        _ urgent: inout [UnownedJob], on executor: UnownedSerialExecutor, _ taskExecutor: UnownedTaskExecutor
    ) {
        state.withLock { swap(&urgent, &$0.urgentJobs) }
        for job in urgent { job.runSynchronously(isolatedTo: executor, taskExecutor: taskExecutor) }
        urgent.removeAll(keepingCapacity: true)
    }

    private func run() {
        var descriptors: [pollfd] = []
        var workedSinceRest = false
        while true {
            enum Next { case poll([Service], sleep: Bool), end }
            let next: Next = state.withLock { state in
                if state.isStopping && state.services.isEmpty && !state.hasJobs && state.passWaiters.isEmpty {
                    state.hasEnded = true
                    return .end
                }
                state.isSleeping = !state.hasJobs && state.passWaiters.isEmpty
                return .poll(state.services, sleep: state.isSleeping)
            }
            guard case .poll(let services, let sleep) = next else { break }
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0))
            var buffered = false
            for service in services {
                let events =
                    (service.source.wantsToRead() ? Int16(POLLIN) : 0)
                    | (service.source.wantsToWrite() ? Int16(POLLOUT) : 0)
                descriptors.append(pollfd(fd: service.source.descriptor, events: events, revents: 0))
                buffered = buffered || service.source.hasBufferedInput()
            }
            let timeout: Int32 = buffered || !sleep ? 0 : (services.isEmpty ? -1 : 1000)
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready != 0 || timeout == 0 {
                workedSinceRest = true
            } else if workedSinceRest {
                workedSinceRest = false
                atRest()
            }
            if descriptors[0].revents != 0 {
                var drained = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
                _ = read(wakeReader, &drained, MemoryLayout.size(ofValue: drained))
            }
            state.withLock { $0.isSleeping = false }
            // One pass: read what came, run what it woke, write what that queued.
            passServices = services
            passResults = [Int32](repeating: 0, count: services.count)
            passErrnos = passResults
            for (index, descriptor) in descriptors.dropFirst().enumerated()
            where descriptor.revents & ~Int16(POLLOUT) != 0 || services[index].source.hasBufferedInput() {
                passResults[index] = services[index].source.read()
                passErrnos[index] = errno
            }
            for waiter in state.withLock({ state in
                defer { state.passWaiters.removeAll() }
                return state.passWaiters
            }) {
                waiter.resume()
            }
            mayWriteEarly = true
            runPending()
            mayWriteEarly = false
            // What the pass queued (a command's value, state, event and answer) leaves here, in
            // one write, but for what a job wrote early (``writeQueuedNow()``).
            writeQueued()
            let (results, errnos) = (passResults, passErrnos)
            passServices.removeAll()
            for (index, service) in services.enumerated() {
                var (result, failure) = (results[index], errnos[index])
                if result == 0 { (result, failure) = (service.source.tick(), errno) }
                guard result != 0 else { continue }
                state.withLock { $0.services.removeAll { $0 === service } }
                // `ended` reads the `errno` of the call that failed (``serve(_:)``).
                errno = failure
                service.ended(result)
            }
        }
    }
}

/// Names the calling thread for the system (`top -H`, `perf`, `/proc/<pid>/task/*/comm`), cut to the
/// 15 bytes Linux keeps. Foundation's `Thread.name`, set before the thread starts, does not reach the
/// system's name on Linux, and Glibc's module does not export `pthread_setname_np`.
func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
