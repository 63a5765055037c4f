import Execution
import TestSupport
import Testing

/// The timer's alarm, the schedule and turn-back services' wait, on a clock the test moves.
@Suite("DeadlineTimer.Alarm: a wait a change of plan cuts short", .timeLimit(.minutes(5)))
struct AlarmTests {
    /// An alarm on a timer of a manual clock.
    struct Fixture {
        let clock = ManualClock()
        let timer: DeadlineTimer<ManualClock>
        let alarm: DeadlineTimer<ManualClock>.Alarm

        init() {
            timer = DeadlineTimer(clock: clock)
            alarm = DeadlineTimer.Alarm(on: timer)
        }

        func sleep(_ seconds: Int64) async { await alarm.sleep(until: clock.now.advanced(by: .seconds(seconds))) }

        /// A task waiting `seconds` on the alarm, once its deadline is on the timer.
        func waiting(_ seconds: Int64) async throws -> Task<Void, Never> {
            let task = Task { await sleep(seconds) }
            try await eventually("the alarm waits") { timer.waiting == 1 }
            return task
        }
    }

    @Test("a wait ends at its deadline, not before, and leaves nothing on the timer")
    func endsAtItsDeadline() async throws {
        // Given a task waiting ten seconds on the alarm
        let fixture = Fixture()
        let waiting = try await fixture.waiting(10)

        // When the clock moves nine seconds, the wait goes on; at ten it ends
        fixture.clock.advance(by: .seconds(9))
        #expect(fixture.timer.waiting == 1)
        fixture.clock.advance(by: .seconds(1))
        await waiting.value
        #expect(fixture.timer.waiting == 0)
    }

    @Test("a ring ends the wait at once; a ring while nobody waits ends the next wait at once, once")
    func ringEndsTheWait() async throws {
        let fixture = Fixture()

        // A ring ends an hour's wait without the clock moving, and takes its deadline off the timer
        let waiting = try await fixture.waiting(3600)
        fixture.alarm.ring()
        await waiting.value
        #expect(fixture.timer.waiting == 0)

        // Rung while nobody waits: the next wait ends at once, the one after it does not
        fixture.alarm.ring()
        await fixture.sleep(3600)
        let again = try await fixture.waiting(5)
        fixture.clock.advance(by: .seconds(5))
        await again.value
    }

    @Test("cancelling the waiting task ends its wait and takes its deadline off the timer")
    func cancellationEndsTheWait() async throws {
        let fixture = Fixture()
        let waiting = try await fixture.waiting(3600)
        waiting.cancel()
        await waiting.value
        #expect(fixture.timer.waiting == 0)
    }
}
