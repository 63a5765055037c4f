import Foundation

/// A timer trigger's schedule (HomeKit's HMTimerTrigger): a first firing at a wall-clock minute
/// in the home's time zone, then its ``Recurrence``, if any. The first firing is a wall-clock
/// slot, not an instant, so a home that changes time zone keeps firing at the same clock time.
package struct TimerSchedule: FiringSchedule, Hashable {
    package let start: LocalDateTime
    package let recurrence: Recurrence?

    package init(start: LocalDateTime, recurrence: Recurrence? = nil) throws(ScheduleError) {
        try recurrence?.validate()
        self.start = start
        self.recurrence = recurrence
    }

    package func nextFiring(after now: Date, following last: Firing?, in timeZone: TimeZone) -> Firing? {
        let clock = WallClock(timeZone: timeZone)
        switch recurrence {
        case nil:
            let instant = clock.instant(of: start)
            guard instant > last.threshold(now), last.precedes(start, at: now) else { return nil }
            return Firing(instant: instant, slot: start)
        case .everyMinutes(let minutes):
            return elapsed(step: TimeInterval(minutes * 60), after: now, following: last, clock: clock)
        case .everyHours(let hours):
            return elapsed(step: TimeInterval(hours * 3_600), after: now, following: last, clock: clock)
        case .everyDays(let days):
            return CalendarSeries(days: .every(days, from: start.date), time: start.time)
                .nextFiring(after: now, following: last, clock: clock)
        case .everyWeeks(let weeks):
            return CalendarSeries(days: .every(weeks * 7, from: start.date), time: start.time)
                .nextFiring(after: now, following: last, clock: clock)
        case .onWeekdays(let weekdays):
            return CalendarSeries(days: .weekdays(weekdays, from: start.date), time: start.time)
                .nextFiring(after: now, following: last, clock: clock)
        }
    }

    /// Every `step` seconds from the first firing's instant: elapsed time, whatever the clocks do.
    private func elapsed(step: TimeInterval, after now: Date, following last: Firing?, clock: WallClock) -> Firing {
        let anchor = clock.instant(of: start)
        let threshold = last.threshold(now)
        let steps = threshold < anchor ? 0 : Int((threshold.timeIntervalSince(anchor) / step).rounded(.down)) + 1
        let instant = anchor + Double(steps) * step
        return Firing(instant: instant, slot: clock.slot(of: instant))
    }
}
