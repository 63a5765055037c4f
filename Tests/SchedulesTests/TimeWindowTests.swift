import Foundation
import Testing

@testable import Schedules

/// "Only between" windows on the home's clock: across midnight, at sunrise and sunset, on the days
/// the clocks change, through polar day and night.
@Suite("Time windows")
struct TimeWindowTests {
    static let oslo = zone("Europe/Oslo")
    static let osloPlace = try! Coordinates(latitude: 59.9139, longitude: 10.7522)
    static let tromso = try! Coordinates(latitude: 69.6492, longitude: 18.9553)

    func window(_ from: String, _ to: String) throws -> TimeWindow {
        try TimeWindow(from: TimePoint(from), to: TimePoint(to))
    }

    @Test("points are read and written as a household writes them; nonsense is refused")
    func points() throws {
        for text in ["22:30", "00:00", "sunrise", "sunset", "sunset-30", "sunrise+15", "sunset+720"] {
            #expect(try TimePoint(text).description == text)
        }
        #expect(try TimePoint("sunset+0") == .sun(.sunset, offset: 0))
        for text in ["24:00", "7:30", "sunset+", "sunset30", "sunset+721", "noon", "sunset+1h", ""] {
            #expect(throws: ScheduleError.self, "\(text)") { try TimePoint(text) }
        }
        #expect(throws: ScheduleError.self) { try window("sunset", "sunset") }
    }

    @Test("a window across midnight holds from its start to the next day's end")
    func acrossMidnight() throws {
        let night = try window("22:00", "06:00")
        let inside = [
            "2026-11-29T22:00:00+01:00", "2026-11-29T23:59:00+01:00", "2026-11-30T00:00:00+01:00",
            "2026-11-30T05:59:59+01:00",
        ]
        let outside = ["2026-11-29T21:59:59+01:00", "2026-11-30T06:00:00+01:00", "2026-11-30T12:00:00+01:00"]
        for text in inside { #expect(night.contains(instant(text), in: Self.oslo, at: nil), "\(text)") }
        for text in outside { #expect(!night.contains(instant(text), in: Self.oslo, at: nil), "\(text)") }
        // The same window the other way round is the day
        let day = try window("06:00", "22:00")
        for text in inside { #expect(!day.contains(instant(text), in: Self.oslo, at: nil), "\(text)") }
        for text in outside.dropFirst() { #expect(day.contains(instant(text), in: Self.oslo, at: nil), "\(text)") }
    }

    @Test("sunset to 06:00 on the day the clocks go forward: the end is 06:00 summer time, the start that day's sunset")
    func solarOnDaylightSavingDay() throws {
        let window = try window("sunset", "06:00")
        let holds = { (text: String) in window.contains(instant(text), in: Self.oslo, at: Self.osloPlace) }
        // The night of 28 to 29 March 2026: clocks go from 02:00 CET to 03:00 CEST
        #expect(holds("2026-03-29T01:30:00+01:00"))
        #expect(holds("2026-03-29T05:59:00+02:00"))
        // 06:30 CEST is 05:30 CET: a window reckoned at the winter offset would still hold
        #expect(!holds("2026-03-29T06:00:00+02:00"))
        #expect(!holds("2026-03-29T06:30:00+02:00"))
        guard
            case .risesAndSets(_, let sunset) = SunCalculator.day(date(2026, 3, 29), at: Self.osloPlace, in: Self.oslo)
        else {
            Issue.record("Oslo has a sunset on 29 March")
            return
        }
        #expect(!window.contains(sunset - 60, in: Self.oslo, at: Self.osloPlace))
        #expect(window.contains(sunset, in: Self.oslo, at: Self.osloPlace))
        // Sunset that day is about 19:54 CEST, an hour later on the clock than the evening before
        #expect(!holds("2026-03-29T19:30:00+02:00"))
        #expect(holds("2026-03-28T18:58:00+01:00"))

        // An end in the skipped hour is the first minute after it, 03:00 summer time
        let late = try self.window("22:00", "02:30")
        #expect(late.contains(instant("2026-03-29T01:59:00+01:00"), in: Self.oslo, at: nil))
        #expect(!late.contains(instant("2026-03-29T03:00:00+02:00"), in: Self.oslo, at: nil))
    }

    @Test("a polar night is after sunset all day, a polar day after sunrise; without a place a sun window fails")
    func polar() throws {
        let dark = try window("sunset", "sunrise")
        let light = try window("sunrise", "sunset")
        for text in ["2026-12-15T00:30:00+01:00", "2026-12-15T12:00:00+01:00", "2026-12-15T23:30:00+01:00"] {
            #expect(dark.contains(instant(text), in: Self.oslo, at: Self.tromso), "\(text)")
            #expect(!light.contains(instant(text), in: Self.oslo, at: Self.tromso), "\(text)")
        }
        for text in ["2026-06-21T00:30:00+02:00", "2026-06-21T12:00:00+02:00", "2026-06-21T23:30:00+02:00"] {
            #expect(!dark.contains(instant(text), in: Self.oslo, at: Self.tromso), "\(text)")
            #expect(light.contains(instant(text), in: Self.oslo, at: Self.tromso), "\(text)")
        }
        #expect(!dark.contains(instant("2026-12-15T23:30:00+01:00"), in: Self.oslo, at: nil))
    }
}
