import Synchronization
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
    @Test("a finished operation leaves no timer sleeping until its deadline")
    func finishedOperationStopsItsTimer() async throws {
        let clock = CountingClock()
        for index in 0..<200 {
            let outcome = await Deadline.race(timeout: .seconds(3600), clock: clock) { index }
            #expect(try outcome?.get() == index)
        }
        // The winners cancel their timers; cancelled sleeps end promptly, not in an hour
        let waitUntil = ContinuousClock.now + .seconds(10)
        while clock.sleepsUnderWay > 0 && ContinuousClock.now < waitUntil {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(clock.sleepsUnderWay == 0)
    }

    @Test("the timeout wins over an operation that ignores cancellation, and the caller is not held")
    func timeoutWins() async throws {
        final class Flag: Sendable { let isSet = Atomic<Bool>(false) }
        let bodyReturned = Flag()
        // The body waits until the test opens the gate, whatever happens, like a driver stuck in a
        // system call (without holding a thread): only the timer can end the race
        let gate = Gate()
        let outcome = await Deadline.race(timeout: .milliseconds(100), clock: CountingClock()) {
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
        let outcome = await Deadline.race(timeout: .seconds(3600), clock: CountingClock()) { () throws -> Int in
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
        let task = Task {
            await Deadline.race(timeout: .seconds(3600), clock: clock) { () async throws -> Int in
                try await clock.sleep(for: .seconds(3600))
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let outcome = await task.value
        guard case .failure(let error)? = outcome else {
            Issue.record("expected CancellationError, got \(String(describing: outcome))")
            return
        }
        #expect(error is CancellationError)
        // The body and the timer were cancelled too: neither sleeps on for the hour
        let waitUntil = ContinuousClock.now + .seconds(10)
        while clock.sleepsUnderWay > 0 && ContinuousClock.now < waitUntil {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(clock.sleepsUnderWay == 0)
    }
}
