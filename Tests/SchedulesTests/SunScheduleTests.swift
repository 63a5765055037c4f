import Foundation
import Testing

@testable import Schedules

/// Sunrise and sunset with an offset as schedules: one firing a day, none on a polar day or night.
@Suite("Sun schedules")
struct SunScheduleTests {
    static let oslo = try! Coordinates(latitude: 59.9139, longitude: 10.7522)
    static let longyearbyen = try! Coordinates(latitude: 78.2232, longitude: 15.6267)

    @Test("30 minutes before sunset fires 30 minutes before that day's sunset, then the next day's")
    func offsetBeforeSunset() throws {
        // Given 30 minutes before sunset in Oslo (sunset on 21 June 2025 at 20:43:56 UTC by the reference)
        let schedule = try SunSchedule(.sunset, offset: -30, at: Self.oslo)

        // When the next two firings from midday are asked for
        let firings = schedule.firings(after: instant("2025-06-21T12:00:00+02:00"), count: 2, in: zone("Europe/Oslo"))

        // Then the first is 30 minutes before that sunset and the second is the next day's
        let first = try #require(firings.first)
        #expect(abs(first.instant.timeIntervalSince(instant("2025-06-21T20:13:56Z"))) < 60)
        #expect(firings.map(\.slot.date) == [date(2025, 6, 21), date(2025, 6, 22)])
    }

    @Test("two hours after a late sunset fires after midnight, as that day's, once")
    func offsetPastMidnight() throws {
        let schedule = try SunSchedule(.sunset, offset: 120, at: Self.oslo)

        let firings = schedule.firings(after: instant("2025-06-21T23:00:00+02:00"), count: 3, in: zone("Europe/Oslo"))

        #expect(firings.map(\.slot.date) == [date(2025, 6, 21), date(2025, 6, 22), date(2025, 6, 23)])
        #expect(firings.allSatisfy { LocalDate($0.instant, in: zone("Europe/Oslo")) > $0.slot.date })
        #expect(
            zip(firings, firings.dropFirst()).allSatisfy {
                abs($1.instant.timeIntervalSince($0.instant) - 86_400) < 300
            })
    }

    @Test("at 78° N the polar night and the polar day fire nothing: the first day with the event does")
    func polarDaysSkipped() throws {
        let zone = zone("Arctic/Longyearbyen")
        let sunrise = try SunSchedule(.sunrise, at: Self.longyearbyen)
        let sunset = try SunSchedule(.sunset, offset: 15, at: Self.longyearbyen)

        let afterNight = try #require(
            sunrise.nextFiring(after: instant("2025-12-01T12:00:00+01:00"), following: nil, in: zone))
        let afterDay = try #require(
            sunset.nextFiring(after: instant("2025-05-01T12:00:00+02:00"), following: nil, in: zone))

        // The sun comes back in mid-February and sets again in late August
        #expect(afterNight.slot.date > date(2026, 2, 1) && afterNight.slot.date < date(2026, 3, 1))
        #expect(
            SunCalculator.day(afterNight.slot.date.adding(days: -1), at: Self.longyearbyen, in: zone) == .polarNight)
        #expect(afterDay.slot.date > date(2025, 8, 1) && afterDay.slot.date < date(2025, 9, 1))
        #expect(SunCalculator.day(afterDay.slot.date.adding(days: -1), at: Self.longyearbyen, in: zone) == .polarDay)
    }

    @Test("offsets beyond twelve hours are refused")
    func invalidOffset() {
        #expect(throws: ScheduleError.self) { try SunSchedule(.sunrise, offset: 721, at: Self.oslo) }
        #expect((try? SunSchedule(.sunrise, offset: -720, at: Self.oslo)) != nil)
    }
}
