import Foundation
import Testing

@testable import Schedules

/// What came due while the hub was down: the latest runs if it is less than the grace late.
@Suite("Missed while down")
struct CatchUpTests {
    static let berlin = zone("Europe/Berlin")

    @Test("a daily firing 10 minutes late runs; 20 minutes late is missed; a 30-minute grace runs it")
    func grace() throws {
        // Given 07:00 every day, and a hub down from 06:00
        let schedule = try TimeOfDaySchedule(time: time(7, 0))
        let lastRun = instant("2025-06-10T06:00:00+02:00")

        // When it starts again at 07:10, at 07:20, and at 07:20 with a grace of 30 minutes
        let early = CatchUp(
            schedule, lastRun: lastRun, now: instant("2025-06-10T07:10:00+02:00"), timeZone: Self.berlin)
        let late = CatchUp(schedule, lastRun: lastRun, now: instant("2025-06-10T07:20:00+02:00"), timeZone: Self.berlin)
        let lenient = CatchUp(
            schedule, lastRun: lastRun, now: instant("2025-06-10T07:20:00+02:00"), timeZone: Self.berlin,
            grace: .seconds(30 * 60))

        // Then the firing runs, is missed, and runs
        #expect(early.due.map(\.verdict) == [.runs])
        #expect(early.due.first?.lateness == .seconds(600))
        #expect(early.runs?.instant == instant("2025-06-10T07:00:00+02:00"))
        #expect(late.due.map(\.verdict) == [.tooLate])
        #expect(late.runs == nil)
        #expect(lenient.due.map(\.verdict) == [.runs])
    }

    @Test("down for three days: the older firings are missed, the latest within the grace runs once")
    func severalDays() throws {
        let schedule = try TimeOfDaySchedule(time: time(7, 0))

        let catchUp = CatchUp(
            schedule, lastRun: instant("2025-06-07T06:00:00+02:00"), now: instant("2025-06-10T07:05:00+02:00"),
            timeZone: Self.berlin)

        #expect(catchUp.due.map(\.verdict) == [.tooLate, .tooLate, .tooLate, .runs])
        #expect(catchUp.due.map(\.firing.slot.date) == (7...10).map { date(2025, 6, $0) })
        #expect(catchUp.omitted == 0)
    }

    @Test("two firings within the grace: only the later runs")
    func twoWithinGrace() throws {
        let schedule = try TimerSchedule(start: slot(2025, 6, 10, 0, 0), recurrence: .everyMinutes(5))

        let catchUp = CatchUp(
            schedule, lastRun: instant("2025-06-10T10:01:00+02:00"), now: instant("2025-06-10T10:13:00+02:00"),
            timeZone: Self.berlin)

        #expect(catchUp.due.map(\.firing.slot) == [slot(2025, 6, 10, 10, 5), slot(2025, 6, 10, 10, 10)])
        #expect(catchUp.due.map(\.verdict) == [.supersededByLater, .runs])
    }

    @Test("a day of every-5-minutes firings lists the latest 100 and counts the rest")
    func limit() throws {
        let schedule = try TimerSchedule(start: slot(2025, 6, 1, 0, 0), recurrence: .everyMinutes(5))

        let catchUp = CatchUp(
            schedule, lastRun: instant("2025-06-09T10:00:30+02:00"), now: instant("2025-06-10T10:00:30+02:00"),
            timeZone: Self.berlin)

        #expect(catchUp.due.count == CatchUp.standardLimit)
        #expect(catchUp.omitted == 288 - CatchUp.standardLimit)
        #expect(catchUp.runs?.slot == slot(2025, 6, 10, 10, 0))
    }

    @Test("nothing came due: nothing listed")
    func nothingDue() throws {
        let schedule = try TimeOfDaySchedule(time: time(7, 0))

        let catchUp = CatchUp(
            schedule, lastRun: instant("2025-06-10T07:00:00+02:00"), now: instant("2025-06-10T09:00:00+02:00"),
            timeZone: Self.berlin)

        #expect(catchUp.due.isEmpty)
        #expect(catchUp.runs == nil)
    }
}
