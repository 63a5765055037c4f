import Execution
import TestSupport
import Testing

/// The timer's alarm, the schedule and turn-back services' wait, on a clock the test moves.
@Suite("DeadlineTimer.Alarm: a wait a change of plan cuts short", .timeLimit(.minutes(1)))
struct AlarmTests {
    @Test("a wait ends at its deadline, not before, and leaves nothing on the timer")
    func endsAtItsDeadline() async throws {
        // Given an alarm on a timer of a manual clock, and a task waiting ten seconds on it
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: clock)
        let alarm = DeadlineTimer.Alarm(on: timer)
        let waiting = Task { await alarm.sleep(until: clock.now.advanced(by: .seconds(10))) }
        try await eventually("the alarm waits") { clock.sleepers == 1 }

        // When the clock moves nine seconds, the wait goes on; at ten it ends
        clock.advance(by: .seconds(9))
        try await eventually("the timer sleeps again") { clock.sleepers == 1 }
        #expect(timer.waiting == 1)
        clock.advance(by: .seconds(1))
        await waiting.value
        #expect(timer.waiting == 0)
    }

    @Test("a ring ends the wait at once; a ring while nobody waits ends the next wait at once, once")
    func ringEndsTheWait() async throws {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: clock)
        let alarm = DeadlineTimer.Alarm(on: timer)

        // A ring ends an hour's wait without the clock moving, and takes its deadline off the timer
        let waiting = Task { await alarm.sleep(until: clock.now.advanced(by: .seconds(3600))) }
        try await eventually("the alarm waits") { timer.waiting == 1 }
        alarm.ring()
        await waiting.value
        #expect(timer.waiting == 0)

        // Rung while nobody waits: the next wait ends at once, the one after it does not
        alarm.ring()
        await alarm.sleep(until: clock.now.advanced(by: .seconds(3600)))
        let again = Task { await alarm.sleep(until: clock.now.advanced(by: .seconds(5))) }
        try await eventually("the alarm waits again") { timer.waiting == 1 }
        clock.advance(by: .seconds(5))
        await again.value
    }

    @Test("cancelling the waiting task ends its wait and takes its deadline off the timer")
    func cancellationEndsTheWait() async throws {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: clock)
        let alarm = DeadlineTimer.Alarm(on: timer)
        let waiting = Task { await alarm.sleep(until: clock.now.advanced(by: .seconds(3600))) }
        try await eventually("the alarm waits") { timer.waiting == 1 }
        waiting.cancel()
        await waiting.value
        #expect(timer.waiting == 0)
    }
}
