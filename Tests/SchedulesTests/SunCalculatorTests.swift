import Foundation
import Testing

@testable import Schedules

/// The NOAA solar calculator against figures from another implementation (astral 3.2, made by
/// scripts/sun-reference.py into Fixtures/sun-*.csv) for every day of 2025, and at 78° N.
@Suite("Sun calculator")
struct SunCalculatorTests {
    /// One place's reference figures: where it is, and each local date's sunrise and sunset.
    struct Reference {
        let place: Coordinates
        let timeZone: TimeZone
        let days: [(date: LocalDate, sunrise: Date, sunset: Date)]

        static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures")

        init(_ name: String) throws {
            let text = try String(
                contentsOf: Self.folder.appendingPathComponent("sun-\(name).csv"), encoding: .utf8)
            var settings: [String: String] = [:]
            var days: [(LocalDate, Date, Date)] = []
            for line in text.split(separator: "\n") where line != "date,sunrise,sunset" {
                if line.hasPrefix("# ") {
                    let pair = line.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
                    if pair.count == 2 { settings[pair[0]] = pair[1] }
                    continue
                }
                let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                let parts = fields[0].split(separator: "-").compactMap { Int($0) }
                days.append(
                    (
                        try LocalDate(year: parts[0], month: parts[1], day: parts[2]),
                        try Date(fields[1], strategy: .iso8601), try Date(fields[2], strategy: .iso8601)
                    ))
            }
            place = try Coordinates(
                latitude: try #require(settings["latitude"].flatMap(Double.init)),
                longitude: try #require(settings["longitude"].flatMap(Double.init)))
            timeZone = try #require(settings["timeZone"].flatMap(TimeZone.init(identifier:)))
            self.days = days
        }
    }

    @Test(
        "sunrise and sunset within a minute of the reference every day of 2025",
        arguments: ["oslo", "quito", "sydney", "anchorage"])
    func agreesWithReference(place name: String) throws {
        // Given a place's reference figures for a year
        let reference = try Reference(name)
        #expect(reference.days.count == 365)

        // When each date's sun is computed
        var worst = 0.0
        for day in reference.days {
            let solar = SunCalculator.day(day.date, at: reference.place, in: reference.timeZone)
            guard case .risesAndSets(let sunrise, let sunset) = solar else {
                Issue.record("\(name) \(day.date): \(solar), expected a sunrise and a sunset")
                continue
            }

            // Then each event is within 60 s of the reference, on its own local date
            let difference = max(
                abs(sunrise.timeIntervalSince(day.sunrise)), abs(sunset.timeIntervalSince(day.sunset)))
            #expect(difference < 60, "\(name) \(day.date): \(sunrise), \(sunset)")
            #expect(LocalDate(sunrise, in: reference.timeZone) == day.date)
            worst = max(worst, difference)
        }
        print("\(name): largest difference from the reference \(worst) s")
    }

    @Test("at Longyearbyen (78° N) June is polar day and December polar night")
    func polar() throws {
        let longyearbyen = try Coordinates(latitude: 78.2232, longitude: 15.6267)
        let zone = zone("Arctic/Longyearbyen")

        let june = (1...30).map { SunCalculator.day(date(2025, 6, $0), at: longyearbyen, in: zone) }
        let december = (1...31).map { SunCalculator.day(date(2025, 12, $0), at: longyearbyen, in: zone) }
        let march = SunCalculator.day(date(2025, 3, 20), at: longyearbyen, in: zone)

        #expect(june.allSatisfy { $0 == .polarDay })
        #expect(december.allSatisfy { $0 == .polarNight })
        #expect(march.instant(of: .sunrise) != nil && march.instant(of: .sunset) != nil)
    }

    @Test("coordinates off the Earth are refused")
    func invalidCoordinates() {
        #expect(throws: ScheduleError.self) { try Coordinates(latitude: 90.5, longitude: 0) }
        #expect(throws: ScheduleError.self) { try Coordinates(latitude: 0, longitude: -181) }
    }
}
