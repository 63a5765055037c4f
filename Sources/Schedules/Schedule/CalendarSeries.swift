import Foundation

/// Firings at one wall-clock time on chosen days: what timers repeating by days, weeks or
/// weekdays and times of day have in common. Each day fires at most once, by ``WallClock``'s rules.
struct CalendarSeries: Sendable, Hashable {
    enum Days: Sendable, Hashable {
        /// Every `step` days from the first date.
        case every(Int, from: LocalDate)
        /// The chosen weekdays, from a first date or always.
        case weekdays(Set<Weekday>, from: LocalDate?)
    }

    let days: Days
    let time: TimeOfDay

    /// The first date on or after `date` the series fires on.
    func firstDate(onOrAfter date: LocalDate) -> LocalDate {
        switch days {
        case .every(let step, let start):
            guard date > start else { return start }
            let steps = (start.days(to: date) + step - 1) / step
            return start.adding(days: steps * step)
        case .weekdays(let chosen, let start):
            var day = Swift.max(date, start ?? date)
            while !chosen.contains(day.weekday) { day = day.adding(days: 1) }
            return day
        }
    }

    /// The first firing after `now` and after `last`, on `clock`.
    func nextFiring(after now: Date, following last: Firing?, clock: WallClock) -> Firing? {
        let threshold = last.threshold(now)
        // The day before the threshold's own: a slot resolved past a skipped hour may still be ahead.
        var date = firstDate(onOrAfter: clock.date(of: threshold).adding(days: -1))
        // A firing lies within three days of the threshold's date (the slot rule skips at most the
        // day a change of time zone repeats); the bound only keeps a mistake from looping for ever.
        for _ in 0..<1_000 {
            let slot = LocalDateTime(date, time)
            let instant = clock.instant(of: slot)
            if instant > threshold, last.precedes(slot, at: now) {
                return Firing(instant: instant, slot: slot)
            }
            date = firstDate(onOrAfter: date.adding(days: 1))
        }
        return nil
    }
}
