import Execution
import Foundation

/// The time history is recorded and aged by: wall-clock dates for the rows, and a clock for the
/// waits (the batch window, the retention sweep), so a test can run a week in milliseconds.
package struct HistoryClock: Sendable {
    /// What the waits sleep on.
    package let clock: AnyClock
    private let date: @Sendable () -> Date

    package init(clock: AnyClock, date: @escaping @Sendable () -> Date) {
        self.clock = clock
        self.date = date
    }

    package var now: Date { date() }

    /// The system's date and the real clock: a hub whose time is set late by NTP records by the
    /// corrected time from then on.
    package static let system = HistoryClock(clock: .continuous, date: { Date() })

    /// Dates that move with `clock` from `epoch`: a test advances the clock and the dates follow.
    package static func following(_ clock: AnyClock, from epoch: Date) -> HistoryClock {
        let start = clock.now
        return HistoryClock(clock: clock) {
            let elapsed = start.duration(to: clock.now)
            return epoch.addingTimeInterval(
                Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }
}
