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

    /// Reads the written form "YYYY-MM-DDTHH:MM" (a timer's start, stored and on the wire); nil for
    /// anything else, a date or time the calendar does not have among it.
    package init?(_ text: String) {
        let halves = text.split(separator: "T", omittingEmptySubsequences: false)
        guard halves.count == 2, let time = TimeOfDay(String(halves[1])) else { return nil }
        let parts = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            let date = try? LocalDate(year: year, month: month, day: day)
        else { return nil }
        self.init(date, time)
    }

    package var description: String { "\(date) \(time)" }

    package static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        (lhs.date, lhs.time) < (rhs.date, rhs.time)
    }
}
