/// A wall-clock minute of a calendar day, with no time zone: the slot a firing stands for. Two
/// firings of one schedule never share a slot, which is what keeps a change of time zone from
/// firing the same occurrence twice.
package struct LocalDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let date: LocalDate
    package let time: TimeOfDay

    package init(_ date: LocalDate, _ time: TimeOfDay) {
        self.date = date
        self.time = time
    }

    /// The slot from its parts, each checked.
    package init(year: Int, month: Int, day: Int, hour: Int, minute: Int) throws(ScheduleError) {
        self.init(try LocalDate(year: year, month: month, day: day), try TimeOfDay(hour: hour, minute: minute))
    }

    package var description: String { "\(date) \(time)" }

    package static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        (lhs.date, lhs.time) < (rhs.date, rhs.time)
    }
}
