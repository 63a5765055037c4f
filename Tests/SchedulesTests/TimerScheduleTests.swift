import Foundation
import Testing

@testable import Schedules

/// Timer triggers and times of day on an injected "now", across both daylight-saving changes.
@Suite("Timer schedules")
struct TimerScheduleTests {
    @Test("a daily time in the hour Berlin skips fires at 03:00 that day, at its own time the next")
    func berlinSpringForward() throws {
        // Given 02:30 every day from 28 March
        let schedule = try TimerSchedule(start: slot(2025, 3, 28, 2, 30), recurrence: .everyDays(1))

        // When the firings from the day before the change are asked for
        let firings = schedule.firings(after: instant("2025-03-29T12:00:00+01:00"), count: 2, in: zone("Europe/Berlin"))

        // Then the skipped 02:30 fires at the first minute after the skip, and the day after is normal
        #expect(firings.map(\.instant) == [instant("2025-03-30T03:00:00+02:00"), instant("2025-03-31T02:30:00+02:00")])
        #expect(firings.map(\.slot) == [slot(2025, 3, 30, 2, 30), slot(2025, 3, 31, 2, 30)])
    }

    @Test("a daily time in the hour Berlin repeats fires once, at its first occurrence")
    func berlinFallBack() throws {
        let schedule = try TimerSchedule(start: slot(2025, 10, 1, 2, 30), recurrence: .everyDays(1))

        let firings = schedule.firings(after: instant("2025-10-25T12:00:00+02:00"), count: 2, in: zone("Europe/Berlin"))

        #expect(firings.map(\.instant) == [instant("2025-10-26T02:30:00+02:00"), instant("2025-10-27T02:30:00+01:00")])
        // Asked again within the repeated hour (after a restart, with no last firing): still not twice
        let again = schedule.nextFiring(
            after: instant("2025-10-26T02:10:00+01:00"), following: nil, in: zone("Europe/Berlin"))
        #expect(again?.instant == instant("2025-10-27T02:30:00+01:00"))
    }

    @Test("New York: 02:15 fires at 03:00 on spring forward; 01:30 fires once on fall back")
    func newYorkChanges() throws {
        let newYork = zone("America/New_York")
        let spring = try TimerSchedule(start: slot(2025, 3, 1, 2, 15), recurrence: .everyDays(1))
        let fall = try TimerSchedule(start: slot(2025, 10, 1, 1, 30), recurrence: .everyDays(1))

        let springFirings = spring.firings(after: instant("2025-03-08T12:00:00-05:00"), count: 2, in: newYork)
        let fallFirings = fall.firings(after: instant("2025-11-01T12:00:00-04:00"), count: 3, in: newYork)

        #expect(
            springFirings.map(\.instant) == [
                instant("2025-03-09T03:00:00-04:00"), instant("2025-03-10T02:15:00-04:00"),
            ])
        #expect(
            fallFirings.map(\.instant) == [
                instant("2025-11-02T01:30:00-04:00"), instant("2025-11-03T01:30:00-05:00"),
                instant("2025-11-04T01:30:00-05:00"),
            ])
    }

    @Test("weekdays at 07:30 keep 07:30 across the weekend the clocks go forward")
    func weekdaysAcrossChange() throws {
        // Given 07:30 on workdays from Monday 24 March, in Berlin and in New York
        let berlin = try TimerSchedule(start: slot(2025, 3, 24, 7, 30), recurrence: .onWeekdays(Weekday.workdays))
        let newYork = try TimeOfDaySchedule(time: time(7, 30), weekdays: Weekday.workdays)

        // When the firings from Friday on are asked for
        let inBerlin = berlin.firings(after: instant("2025-03-28T08:00:00+01:00"), count: 2, in: zone("Europe/Berlin"))
        let inNewYork = newYork.firings(
            after: instant("2025-03-07T08:00:00-05:00"), count: 2, in: zone("America/New_York"))

        // Then Monday's firing is at 07:30 of the new offset, an hour less after Friday's than a week's days
        #expect(
            inBerlin.map(\.instant) == [instant("2025-03-31T07:30:00+02:00"), instant("2025-04-01T07:30:00+02:00")])
        #expect(
            inNewYork.map(\.instant) == [instant("2025-03-10T07:30:00-04:00"), instant("2025-03-11T07:30:00-04:00")])
        #expect(inBerlin.allSatisfy { Weekday.workdays.contains($0.slot.date.weekday) })
    }

    @Test("every 5 minutes through the repeated hour is every 300 seconds: 24 firings in its two hours")
    func everyFiveMinutesAcrossFallBack() throws {
        // Given every 5 minutes from 01:50 on the night Berlin's clocks go back
        let schedule = try TimerSchedule(start: slot(2025, 10, 26, 1, 50), recurrence: .everyMinutes(5))

        // When 40 firings are asked for from before the first
        let firings = schedule.firings(
            after: instant("2025-10-26T01:00:00+02:00"), count: 40, in: zone("Europe/Berlin"))

        // Then they are 300 s apart with no gap and no repeat, the wall clock's 02:xx twice
        #expect(firings.first?.instant == instant("2025-10-26T01:50:00+02:00"))
        #expect(zip(firings, firings.dropFirst()).allSatisfy { $1.instant.timeIntervalSince($0.instant) == 300 })
        let inRepeatedHours = firings.filter {
            $0.instant >= instant("2025-10-26T02:00:00+02:00") && $0.instant < instant("2025-10-26T03:00:00+01:00")
        }
        #expect(inRepeatedHours.count == 24)
        #expect(firings.filter { $0.slot == slot(2025, 10, 26, 2, 0) }.count == 2)
    }

    @Test("every 2 hours is elapsed time across spring forward")
    func everyTwoHoursAcrossSpringForward() throws {
        let schedule = try TimerSchedule(start: slot(2025, 3, 30, 0, 0), recurrence: .everyHours(2))

        let firings = schedule.firings(after: instant("2025-03-29T23:00:00+01:00"), count: 3, in: zone("Europe/Berlin"))

        #expect(firings.map(\.slot) == [slot(2025, 3, 30, 0, 0), slot(2025, 3, 30, 3, 0), slot(2025, 3, 30, 5, 0)])
    }

    @Test("every 3 days and every 2 weeks step over month ends")
    func monthEnd() throws {
        let utc = zone("UTC")
        let days = try TimerSchedule(start: slot(2025, 1, 30, 8, 0), recurrence: .everyDays(3))
        let weeks = try TimerSchedule(start: slot(2025, 1, 20, 8, 0), recurrence: .everyWeeks(2))

        #expect(
            days.firings(after: instant("2025-01-31T00:00:00Z"), count: 2, in: utc).map(\.slot.date) == [
                date(2025, 2, 2), date(2025, 2, 5),
            ])
        #expect(
            weeks.firings(after: instant("2025-01-21T00:00:00Z"), count: 2, in: utc).map(\.slot.date) == [
                date(2025, 2, 3), date(2025, 2, 17),
            ])
        // Before the first firing, the first firing itself comes next
        #expect(days.nextFiring(after: instant("2025-01-01T00:00:00Z"), following: nil, in: utc)?.slot == days.start)
    }

    @Test("a timer with no recurrence fires once, at the end of the skip when its minute is skipped")
    func once() throws {
        let berlin = zone("Europe/Berlin")
        let schedule = try TimerSchedule(start: slot(2025, 3, 30, 2, 15))

        let first = try #require(
            schedule.nextFiring(after: instant("2025-03-01T00:00:00Z"), following: nil, in: berlin))

        #expect(first.instant == instant("2025-03-30T03:00:00+02:00"))
        #expect(schedule.nextFiring(after: first.instant, following: first, in: berlin) == nil)
        #expect(schedule.nextFiring(after: instant("2025-04-01T00:00:00Z"), following: nil, in: berlin) == nil)
    }

    @Test("a home that changes time zone fires at the new zone's clock time, no slot twice")
    func timeZoneChange() throws {
        // Given 07:00 every day, fired at 07:00 in Berlin on 10 June
        let schedule = try TimerSchedule(start: slot(2025, 6, 1, 7, 0), recurrence: .everyDays(1))
        let fired = try #require(
            schedule.nextFiring(after: instant("2025-06-10T06:00:00+02:00"), following: nil, in: zone("Europe/Berlin")))
        #expect(fired.instant == instant("2025-06-10T07:00:00+02:00"))

        // When the home moves to New York a minute later (01:01 there, still 10 June)
        let west = schedule.nextFiring(
            after: instant("2025-06-10T07:01:00+02:00"), following: fired, in: zone("America/New_York"))

        // Then 10 June's 07:00 in New York is not fired again: the next is 11 June's
        #expect(west?.instant == instant("2025-06-11T07:00:00-04:00"))
        #expect(
            schedule.nextFiring(
                after: instant("2025-06-10T07:01:00+02:00"), following: nil, in: zone("America/New_York"))?
                .instant == instant("2025-06-10T07:00:00-04:00"))

        // And a home moving east after New York's 07:00 fires at the next 07:00 in Berlin
        let firedWest = Firing(instant: instant("2025-06-10T07:00:00-04:00"), slot: slot(2025, 6, 10, 7, 0))
        let east = schedule.nextFiring(
            after: instant("2025-06-10T07:01:00-04:00"), following: firedWest, in: zone("Europe/Berlin"))
        #expect(east?.instant == instant("2025-06-11T07:00:00+02:00"))
    }

    @Test("a system clock set back fires nothing twice; one that was days wrong starts again from now")
    func systemClockChange() throws {
        let berlin = zone("Europe/Berlin")
        let schedule = try TimeOfDaySchedule(time: time(7, 0))
        let fired = Firing(instant: instant("2025-06-10T07:00:00+02:00"), slot: slot(2025, 6, 10, 7, 0))

        let setBack = schedule.nextFiring(after: instant("2025-06-10T06:30:00+02:00"), following: fired, in: berlin)
        let wrongForAYear = Firing(instant: instant("2026-06-10T07:00:00+02:00"), slot: slot(2026, 6, 10, 7, 0))
        let corrected = schedule.nextFiring(
            after: instant("2025-06-10T06:30:00+02:00"), following: wrongForAYear, in: berlin)

        #expect(setBack?.instant == instant("2025-06-11T07:00:00+02:00"))
        #expect(corrected?.instant == instant("2025-06-10T07:00:00+02:00"))
    }

    @Test("recurrences that cannot be scheduled are refused with their code")
    func invalidRecurrences() {
        let start = slot(2025, 1, 1, 8, 0)
        for (recurrence, code) in [
            (Recurrence.everyMinutes(4), ScheduleError.Code.invalidRecurrence), (.everyHours(0), .invalidRecurrence),
            (.everyDays(-1), .invalidRecurrence), (.everyWeeks(0), .invalidRecurrence), (.onWeekdays([]), .noWeekdays),
        ] {
            let error = #expect(throws: ScheduleError.self) { try TimerSchedule(start: start, recurrence: recurrence) }
            #expect(error?.code == code)
        }
        #expect((try? TimerSchedule(start: start, recurrence: .everyMinutes(5))) != nil)
        #expect(throws: ScheduleError.self) { try TimeOfDaySchedule(time: time(7, 0), weekdays: []) }
    }
}
