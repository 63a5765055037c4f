import Foundation

/// A time-of-day event ("at 22:30 on weekdays"): every chosen weekday at one wall-clock time in
/// the home's time zone, by ``WallClock``'s rules.
package struct TimeOfDaySchedule: FiringSchedule, Hashable {
    package let time: TimeOfDay
    package let weekdays: Set<Weekday>

    /// Every day unless `weekdays` chooses some.
    package init(time: TimeOfDay, weekdays: Set<Weekday> = Set(Weekday.allCases)) throws(ScheduleError) {
        guard !weekdays.isEmpty else { throw ScheduleError(.noWeekdays, "a time of day needs at least one weekday") }
        self.time = time
        self.weekdays = weekdays
    }

    package func nextFiring(after now: Date, following last: Firing?, in timeZone: TimeZone) -> Firing? {
        CalendarSeries(days: .weekdays(weekdays, from: nil), time: time)
            .nextFiring(after: now, following: last, clock: WallClock(timeZone: timeZone))
    }
}
