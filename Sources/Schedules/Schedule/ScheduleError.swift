/// Why a schedule, a time or a place cannot be made: the code for callers (and the wire), the
/// message for a person.
package struct ScheduleError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// A calendar date that does not exist (30 February, month 13).
        case invalidDate
        /// An hour outside 0-23 or a minute outside 0-59.
        case invalidTime
        /// A recurrence of fewer than five minutes, or of no time at all.
        case invalidRecurrence
        /// A weekday recurrence with no day chosen.
        case noWeekdays
        /// A latitude outside ±90° or a longitude outside ±180°.
        case invalidCoordinates
        /// A sunrise or sunset offset of more than twelve hours either way.
        case invalidOffset
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.rawValue): \(message)" }
}
