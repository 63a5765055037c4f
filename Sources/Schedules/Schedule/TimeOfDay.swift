/// A wall-clock time in whole minutes, as a household sets it ("22:30"): schedules fire on minutes.
package struct TimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let hour: Int
    package let minute: Int

    package init(hour: Int, minute: Int) throws(ScheduleError) {
        guard (0...23).contains(hour), (0...59).contains(minute) else {
            throw ScheduleError(.invalidTime, "\(hour):\(minute) is no time of day (00:00 to 23:59)")
        }
        self.hour = hour
        self.minute = minute
    }

    /// Reads "HH:MM" as a time window's point does ("22:30"); nil for anything else.
    package init?(_ text: String) {
        guard case .time(let time)? = try? TimePoint(text) else { return nil }
        self = time
    }

    /// 00:00, a day's start.
    static let midnight = try! TimeOfDay(hour: 0, minute: 0)

    /// Minutes since midnight, for ordering.
    var minutes: Int { hour * 60 + minute }

    package var description: String { "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)" }

    package static func < (lhs: TimeOfDay, rhs: TimeOfDay) -> Bool { lhs.minutes < rhs.minutes }
}
