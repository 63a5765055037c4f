import Foundation
import HomeModel
import Schedules

extension FiringCause {
    /// A schedule's firing due at `date`: for tests that fire an automation by hand, to whom what
    /// set it off does not matter.
    package static func scheduled(at date: Date) -> FiringCause {
        // A fixed, valid minute of the calendar: it cannot throw.
        .schedule(Firing(instant: date, slot: try! LocalDateTime(year: 2026, month: 1, day: 1, hour: 0, minute: 0)))
    }
}
