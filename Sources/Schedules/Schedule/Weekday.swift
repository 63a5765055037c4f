/// A day of the week, numbered as Foundation's `Calendar` numbers them (Sunday is 1).
package enum Weekday: Int, Sendable, Hashable, CaseIterable, Comparable {
    case sunday = 1
    case monday, tuesday, wednesday, thursday, friday, saturday

    /// Monday to Friday.
    package static let workdays: Set<Weekday> = [.monday, .tuesday, .wednesday, .thursday, .friday]

    package static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}
