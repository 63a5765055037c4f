import Foundation

@testable import Schedules

/// The instant an ISO 8601 text names ("2025-03-30T03:00:00+02:00"): tests write their "now" so.
func instant(_ text: String) -> Date {
    try! Date(text, strategy: .iso8601)
}

func zone(_ identifier: String) -> TimeZone {
    TimeZone(identifier: identifier)!
}

func slot(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> LocalDateTime {
    try! LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute)
}

func date(_ year: Int, _ month: Int, _ day: Int) -> LocalDate {
    try! LocalDate(year: year, month: month, day: day)
}

func time(_ hour: Int, _ minute: Int) -> TimeOfDay {
    try! TimeOfDay(hour: hour, minute: minute)
}

extension FiringSchedule {
    /// The next `count` firings after `now`, each one following the one before, as the service
    /// would ask after each firing.
    func firings(after now: Date, count: Int, in timeZone: TimeZone) -> [Firing] {
        var firings: [Firing] = []
        var from = now
        while firings.count < count, let next = nextFiring(after: from, following: firings.last, in: timeZone) {
            firings.append(next)
            from = next.instant
        }
        return firings
    }
}
