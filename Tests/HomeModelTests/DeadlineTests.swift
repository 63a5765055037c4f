import Dispatch
import Execution
import Synchronization
import TestSupport
import Testing

@testable import HomeModel

/// The continuous clock, counting the sleeps under way on it.
struct CountingClock: Clock {
    let base = ContinuousClock()
    private let counter = Counter()

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    var now: ContinuousClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }
    var sleepsUnderWay: Int { counter.value.load(ordering: .relaxed) }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        counter.value.add(1, ordering: .relaxed)
        defer { counter.value.subtract(1, ordering: .relaxed) }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}

@Suite("Deadline: an operation raced against its timeout", .timeLimit(.minutes(3)))
struct DeadlineTests {
    @Test("an operation that answers without suspending leaves no deadline waiting, and no timer per race")
    func immediateAnswerLeavesNoDeadline() async throws {
        let clock = CountingClock()
        let timer = DeadlineTimer(clock: clock)
        for index in 0..<200 {
            let outcome = await Deadline.race(timeout: .seconds(3600), timer: timer) { index }
            #expect(try outcome?.get() == index)
        }
        #expect(timer.waiting == 0)
        #expect(clock.sleepsUnderWay <= 1)
    }

    @Test("a finished operation leaves no deadline waiting, and all share one sleeping timer")
    func finishedOperationStopsItsTimer() async throws {
        let clock = CountingClock()
        let timer = DeadlineTimer(clock: clock)
        for index in 0..<200 {
            let outcome = await Deadline.race(timeout: .seconds(3600), timer: timer) { () async -> Int in
                // Suspends, so the race waits with a deadline
                await Task.yield()
                try? await Task.sleep(for: .microseconds(1))
                return index
            }
            #expect(try outcome?.get() == index)
        }
        // The winners cancel their deadlines; the timer's one task may sleep on, no per-race one
        #expect(timer.waiting == 0)
        #expect(clock.sleepsUnderWay <= 1)
    }

    @Test("the timeout wins over an operation that ignores cancellation, and the caller is not held")
    func timeoutWins() async throws {
        final class Flag: Sendable { let isSet = Atomic<Bool>(false) }
        let bodyReturned = Flag()
        // The body waits until the test opens the gate, whatever happens, like a driver stuck in a
        // system call (without holding a thread): only the timer can end the race
        let gate = Gate()
        let outcome = await Deadline.race(timeout: .milliseconds(100), timer: DeadlineTimer(clock: CountingClock())) {
            await gate.pass()
            bodyReturned.isSet.store(true, ordering: .sequentiallyConsistent)
            return 1
        }
        let returnedFirst = bodyReturned.isSet.load(ordering: .sequentiallyConsistent)
        #expect(outcome == nil)
        #expect(!returnedFirst, "the caller waited for the body")
        gate.open()
    }

    @Test("an operation's error is handed back as it was thrown")
    func failureIsPassedOn() async throws {
        struct Refused: Error {}
        let outcome = await Deadline.race(timeout: .seconds(3600), timer: DeadlineTimer(clock: CountingClock())) {
            () throws -> Int in
            throw Refused()
        }
        guard case .failure(let error)? = outcome else {
            Issue.record("expected a failure, got \(String(describing: outcome))")
            return
        }
        #expect(error is Refused)
    }

    @Test("cancelling the caller ends the wait at once with CancellationError")
    func callerCancellation() async throws {
        let clock = CountingClock()
        let timer = DeadlineTimer(clock: clock)
        let task = Task {
            await Deadline.race(timeout: .seconds(3600), timer: timer) { () async throws -> Int in
                try await clock.sleep(for: .seconds(3600))
                return 1
            }
        }
        try await eventually("the race under way: its deadline set, its body and the timer asleep") {
            timer.waiting == 1 && clock.sleepsUnderWay >= 2
        }
        task.cancel()
        let outcome = await task.value
        guard case .failure(let error)? = outcome else {
            Issue.record("expected CancellationError, got \(String(describing: outcome))")
            return
        }
        #expect(error is CancellationError)
        #expect(timer.waiting == 0, "the deadline was cancelled")
        // The body was cancelled too: only the timer's own task may sleep on
        try await eventually("the body's sleep ended (\(clock.sleepsUnderWay) under way)") {
            clock.sleepsUnderWay <= 1
        }
    }

    @Test("deadlines expire in order of expiry, an earlier one scheduled after a later one included")
    func deadlinesExpireInOrder() async throws {
        let timer = DeadlineTimer(clock: ContinuousClock())
        let expired = Mutex<[String]>([])
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        func schedule(_ name: String, _ timeout: Duration) -> DeadlineTimer<ContinuousClock>.Ticket {
            timer.schedule(after: timeout) {
                expired.withLock { $0.append(name) }
                continuation.yield()
            }
        }
        _ = schedule("hour", .seconds(3600))
        _ = schedule("late", .milliseconds(300))
        let cancelled = schedule("cancelled", .milliseconds(100))
        _ = schedule("early", .milliseconds(50))
        timer.cancel(cancelled)
        var iterator = stream.makeAsyncIterator()
        // Waits for the two that are due, whatever the machine's load makes of the times
        _ = await iterator.next()
        _ = await iterator.next()
        #expect(expired.withLock { $0 } == ["early", "late"])
        #expect(timer.waiting == 1)
    }

    @Test("a timer with nothing waiting keeps no task sleeping once its last deadline has passed")
    func idleTimerSleepsNoMore() async throws {
        let clock = CountingClock()
        let timer = DeadlineTimer(clock: clock)
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        _ = timer.schedule(after: .milliseconds(20)) { continuation.yield() }
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
        try await eventually("the timer's sleep ended (\(clock.sleepsUnderWay) under way)") {
            clock.sleepsUnderWay == 0
        }
        #expect(timer.waiting == 0)
    }

    @Test("the operation runs on the caller's actor's executor, before and after it suspends")
    func operationOnCallersActor() async throws {
        let outcome = await OnQueue().race()
        #expect(try outcome?.get() == [true, true])
    }

    @Test("called from an ExecutorChoosingActor on a task executor, the operation's task prefers it")
    func operationPrefersTheChosenExecutor() async throws {
        let outcome = await OnChosenQueue().race()
        #expect(try outcome?.get() == [true, true])
    }

    @Test("an actor's long-lived work prefers its chosen executor, and no longer once it is done")
    func longLivedWorkPrefersTheChosenExecutor() async {
        let actor = OnChosenQueue()
        #expect(await actor.prefersQueueInLongLivedWork() == [false, true, true, false])
    }
}

/// An actor on a queue that is a task executor too, as the manager is on the loop: it says so by
/// conforming to ``ExecutorChoosingActor``, and passes no preference to the race.
private actor OnChosenQueue: ExecutorChoosingActor {
    private let executor = QueueExecutor()
    nonisolated let executorChoice: ExecutorChoice
    nonisolated var unownedExecutor: UnownedSerialExecutor { executorChoice.unownedExecutor }

    init() { executorChoice = ExecutorChoice(executor, otherwise: "unused") }

    /// Whether this task prefers the queue: before `preferringChosenExecutor`, in its body before
    /// and after a suspension, and after it.
    func prefersQueueInLongLivedWork() async -> [Bool] {
        let preferred = executor.asUnownedTaskExecutor()
        let prefersQueue = { withUnsafeCurrentTask { $0?.unownedTaskExecutor == preferred } }
        let before = prefersQueue()
        let during = await preferringChosenExecutor {
            let first = prefersQueue()
            try? await Task.sleep(for: .microseconds(1))
            return [first, prefersQueue()]
        }
        return [before] + during + [prefersQueue()]
    }

    /// Whether the operation's task prefers the queue, before and after it suspends.
    func race() async -> Result<[Bool], any Error>? {
        let preferred = executor.asUnownedTaskExecutor()
        let prefersQueue: @Sendable () -> Bool = { withUnsafeCurrentTask { $0?.unownedTaskExecutor == preferred } }
        return await Deadline.race(timeout: .seconds(3600), timer: DeadlineTimer(clock: ContinuousClock())) {
            let before = prefersQueue()
            try? await Task.sleep(for: .microseconds(1))
            return [before, prefersQueue()]
        }
    }
}

/// An actor on a serial dispatch queue that knows when it is the one running.
private actor OnQueue {
    private let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func race() async -> Result<[Bool], any Error>? {
        let executor = executor
        return await Deadline.race(timeout: .seconds(3600), timer: DeadlineTimer(clock: ContinuousClock())) {
            let before = executor.isCurrent
            await Task.yield()
            try? await Task.sleep(for: .microseconds(1))
            return [before, executor.isCurrent]
        }
    }
}

/// A serial executor on a dispatch queue, a task executor too, that knows when it is the one running.
private final class QueueExecutor: SerialExecutor, TaskExecutor {
    private let queue = DispatchQueue(label: "deadline-tests")
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor())
        }
    }
}
