import Foundation

/// A day of the calendar with no time zone: the "30 March" a household means, whatever the clocks
/// do on it. Arithmetic is on the proleptic Gregorian calendar.
package struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let year: Int
    package let month: Int
    package let day: Int

    /// Days since 1970-01-01, which makes comparing and stepping plain integer work.
    let ordinal: Int

    /// Refuses a date the calendar does not have (30 February), rather than rolling it over.
    package init(year: Int, month: Int, day: Int) throws(ScheduleError) {
        let components = DateComponents(year: year, month: month, day: day)
        guard (1...12).contains(month), (1...31).contains(day), let midnight = Self.calendar.date(from: components),
            Self.calendar.dateComponents([.year, .month, .day], from: midnight) == components
        else {
            throw ScheduleError(.invalidDate, "\(year)-\(month)-\(day) is no date of the calendar")
        }
        self.init(ordinal: Int((midnight.timeIntervalSince1970 / 86_400).rounded(.down)))
    }

    /// The date `date` falls on in `timeZone`.
    package init(_ date: Date, in timeZone: TimeZone) {
        var calendar = Self.calendar
        calendar.timeZone = timeZone
        let components = calendar.dateComponents([.year, .month, .day], from: date)
        try! self.init(year: components.year!, month: components.month!, day: components.day!)
    }

    init(ordinal: Int) {
        let components = Self.calendar.dateComponents(
            [.year, .month, .day], from: Date(timeIntervalSince1970: Double(ordinal) * 86_400))
        self.year = components.year!
        self.month = components.month!
        self.day = components.day!
        self.ordinal = ordinal
    }

    package func adding(days: Int) -> LocalDate { LocalDate(ordinal: ordinal + days) }

    /// How many days from this date to `other` (negative when `other` comes first).
    package func days(to other: LocalDate) -> Int { other.ordinal - ordinal }

    package var weekday: Weekday {
        // 1970-01-01 was a Thursday.
        Weekday(rawValue: (ordinal + 4).modulo(7) + 1)!
    }

    package var description: String {
        "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }

    package static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.ordinal < rhs.ordinal }

    /// The Gregorian calendar in UTC: civil-date arithmetic with no daylight-saving day in it.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}

extension Int {
    /// The remainder that is never negative, for stepping back across day and week boundaries.
    func modulo(_ divisor: Int) -> Int { ((self % divisor) + divisor) % divisor }
}
