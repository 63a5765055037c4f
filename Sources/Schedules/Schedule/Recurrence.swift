/// How a timer trigger repeats after its first firing.
///
/// Minutes and hours are elapsed time: every 5 minutes is every 300 seconds, through a daylight-
/// saving change too, so the hour the clocks repeat gets its twelve firings again and the hour
/// they skip gets none. Days, weeks and weekdays keep the wall-clock time instead (07:30 stays
/// 07:30 across the change), by ``WallClock``'s rules.
package enum Recurrence: Sendable, Hashable {
    case everyMinutes(Int)
    case everyHours(Int)
    case everyDays(Int)
    case everyWeeks(Int)
    /// On each chosen weekday, at the first firing's time.
    case onWeekdays(Set<Weekday>)

    /// The fewest minutes between two firings: a shorter interval is polling, not a schedule.
    static let shortestMinutes = 5

    /// Refuses what cannot be scheduled: a count below one, minutes below five, no weekday.
    package func validate() throws(ScheduleError) {
        switch self {
        case .everyMinutes(let minutes) where minutes < Self.shortestMinutes:
            throw ScheduleError(
                .invalidRecurrence, "every \(minutes) minutes: the shortest recurrence is \(Self.shortestMinutes)")
        case .everyHours(let count), .everyDays(let count), .everyWeeks(let count):
            guard count >= 1 else { throw ScheduleError(.invalidRecurrence, "a recurrence of \(count) is no interval") }
        case .onWeekdays(let days) where days.isEmpty:
            throw ScheduleError(.noWeekdays, "a weekday recurrence needs at least one day")
        default:
            return
        }
    }
}
