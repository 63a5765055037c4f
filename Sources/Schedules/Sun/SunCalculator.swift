import Foundation

/// Sunrise and sunset by NOAA's solar calculator: the moments the sun's centre is 0.833° below
/// the horizon (its radius and the atmosphere's refraction), at sea level.
///
/// A day's events belong to the solar noon nearest the local noon of that date, so each date has
/// one sunrise and one sunset even when one falls just past midnight, and neither is taken from
/// the wrong day. Each event is refined twice at its own instant, as NOAA's calculator does.
package enum SunCalculator {
    /// The sun's centre below the horizon at sunrise and sunset, in degrees.
    static let horizon = 0.833

    /// The sunrise and sunset of `date` at `place`, whose clocks are in `timeZone`.
    package static func day(_ date: LocalDate, at place: Coordinates, in timeZone: TimeZone) -> SolarDay {
        let noon = try! WallClock(timeZone: timeZone).instant(of: LocalDateTime(date, TimeOfDay(hour: 12, minute: 0)))
        let transit = SolarTransit(near: noon, longitude: place.longitude)
        let position = SolarPosition(at: transit.instant)
        let cosine = hourAngleCosine(latitude: place.latitude, declination: position.declination)
        if cosine > 1 { return .polarNight }
        if cosine < -1 { return .polarDay }
        return .risesAndSets(
            sunrise: event(direction: -1, transit: transit, latitude: place.latitude),
            sunset: event(direction: 1, transit: transit, latitude: place.latitude))
    }

    /// Sunrise (`direction` -1) or sunset (+1): the hour angle from the solar noon, computed again
    /// with the sun's position at the event itself.
    private static func event(direction: Double, transit: SolarTransit, latitude: Double) -> Date {
        var instant = transit.instant
        for _ in 0..<3 {
            let position = SolarPosition(at: instant)
            let cosine = hourAngleCosine(latitude: latitude, declination: position.declination)
            // Four minutes of time a degree of hour angle.
            let hourAngle = degrees(acos(min(1, max(-1, cosine))))
            instant = transit.noon(equationOfTime: position.equationOfTime) + direction * hourAngle * 240
        }
        return instant
    }

    /// The cosine of the sun's hour angle at the horizon: above 1 it never rises, below -1 it
    /// never sets.
    private static func hourAngleCosine(latitude: Double, declination: Double) -> Double {
        let phi = radians(latitude)
        let delta = radians(declination)
        return (cos(radians(90 + horizon)) - sin(phi) * sin(delta)) / (cos(phi) * cos(delta))
    }
}

/// The solar noon (the sun on the meridian) of one day at one longitude.
struct SolarTransit: Sendable {
    /// Midnight UTC of the day the solar noon is counted from.
    let midnight: Date
    let longitude: Double
    let instant: Date

    /// The solar noon nearest `reference`.
    init(near reference: Date, longitude: Double) {
        let seconds = reference.timeIntervalSince1970
        var midnight = Date(timeIntervalSince1970: (seconds / 86_400).rounded(.down) * 86_400)
        let first = Self.noon(midnight: midnight, longitude: longitude, equationOfTime: 0)
        let days = (reference.timeIntervalSince(first) / 86_400).rounded()
        midnight += days * 86_400
        var instant = Self.noon(midnight: midnight, longitude: longitude, equationOfTime: 0)
        for _ in 0..<2 {
            instant = Self.noon(
                midnight: midnight, longitude: longitude, equationOfTime: SolarPosition(at: instant).equationOfTime)
        }
        self.midnight = midnight
        self.longitude = longitude
        self.instant = instant
    }

    /// The solar noon of this day with the equation of time `equationOfTime` (minutes).
    func noon(equationOfTime: Double) -> Date {
        Self.noon(midnight: midnight, longitude: longitude, equationOfTime: equationOfTime)
    }

    private static func noon(midnight: Date, longitude: Double, equationOfTime: Double) -> Date {
        midnight + (720 - 4 * longitude - equationOfTime) * 60
    }
}
