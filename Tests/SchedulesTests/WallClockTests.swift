import Foundation
import Testing

@testable import Schedules

/// Wall-clock minutes as instants on the days the clocks change.
@Suite("Wall clock")
struct WallClockTests {
    @Test("a minute the clocks skip is the first minute after the skip")
    func skippedMinute() {
        let berlin = WallClock(timeZone: zone("Europe/Berlin"))
        let newYork = WallClock(timeZone: zone("America/New_York"))

        #expect(berlin.instant(of: slot(2025, 3, 30, 2, 0)) == instant("2025-03-30T03:00:00+02:00"))
        #expect(berlin.instant(of: slot(2025, 3, 30, 2, 59)) == instant("2025-03-30T03:00:00+02:00"))
        #expect(berlin.instant(of: slot(2025, 3, 30, 3, 0)) == instant("2025-03-30T03:00:00+02:00"))
        #expect(berlin.instant(of: slot(2025, 3, 30, 1, 59)) == instant("2025-03-30T01:59:00+01:00"))
        #expect(newYork.instant(of: slot(2025, 3, 9, 2, 30)) == instant("2025-03-09T03:00:00-04:00"))
    }

    @Test("a minute the clocks repeat is its first occurrence")
    func repeatedMinute() {
        let berlin = WallClock(timeZone: zone("Europe/Berlin"))
        let newYork = WallClock(timeZone: zone("America/New_York"))

        #expect(berlin.instant(of: slot(2025, 10, 26, 2, 30)) == instant("2025-10-26T02:30:00+02:00"))
        #expect(berlin.instant(of: slot(2025, 10, 26, 3, 0)) == instant("2025-10-26T03:00:00+01:00"))
        #expect(newYork.instant(of: slot(2025, 11, 2, 1, 0)) == instant("2025-11-02T01:00:00-04:00"))
        #expect(newYork.instant(of: slot(2025, 11, 2, 1, 59)) == instant("2025-11-02T01:59:00-04:00"))
        #expect(newYork.instant(of: slot(2025, 11, 2, 2, 0)) == instant("2025-11-02T02:00:00-05:00"))
    }

    @Test("an instant reads back as its minute, seconds dropped")
    func slotOfInstant() {
        let berlin = WallClock(timeZone: zone("Europe/Berlin"))

        #expect(berlin.slot(of: instant("2025-10-26T00:30:59Z")) == slot(2025, 10, 26, 2, 30))
        #expect(berlin.slot(of: instant("2025-10-26T01:30:00Z")) == slot(2025, 10, 26, 2, 30))
    }

    @Test("dates, times and weekdays refuse what the calendar does not have")
    func invalidParts() {
        #expect(throws: ScheduleError(.invalidDate, "2025-2-29 is no date of the calendar")) {
            try LocalDate(year: 2025, month: 2, day: 29)
        }
        #expect((try? LocalDate(year: 2024, month: 2, day: 29)) != nil)
        #expect(throws: ScheduleError.self) { try LocalDate(year: 2025, month: 13, day: 1) }
        #expect(throws: ScheduleError.self) { try TimeOfDay(hour: 24, minute: 0) }
        #expect(throws: ScheduleError.self) { try TimeOfDay(hour: 7, minute: 60) }
        #expect(date(2025, 3, 30).weekday == .sunday)
        #expect(date(2025, 1, 31).adding(days: 1) == date(2025, 2, 1))
        #expect(date(2024, 12, 31).days(to: date(2025, 3, 1)) == 60)
    }
}
