import Foundation

/// The sun's declination and the equation of time at an instant, by NOAA's general solar position
/// equations (the NOAA solar calculator's spreadsheet, after Meeus' Astronomical Algorithms):
/// good to about a minute of sunrise or sunset between latitudes ±72° for years 1800-2100.
struct SolarPosition: Sendable {
    /// Degrees north of the celestial equator.
    let declination: Double
    /// Apparent minus mean solar time, in minutes.
    let equationOfTime: Double

    init(at instant: Date) {
        let julianDay = instant.timeIntervalSince1970 / 86_400 + 2_440_587.5
        let t = (julianDay - 2_451_545) / 36_525
        let meanLongitude = (280.46646 + t * (36_000.76983 + t * 0.000_303_2)).truncatingRemainder(dividingBy: 360)
        let meanAnomaly = 357.52911 + t * (35_999.05029 - 0.000_153_7 * t)
        let eccentricity = 0.016_708_634 - t * (0.000_042_037 + 0.000_000_126_7 * t)
        let center =
            sin(radians(meanAnomaly)) * (1.914602 - t * (0.004817 + 0.000014 * t))
            + sin(radians(2 * meanAnomaly)) * (0.019993 - 0.000101 * t)
            + sin(radians(3 * meanAnomaly)) * 0.000289
        let omega = 125.04 - 1_934.136 * t
        let apparentLongitude = meanLongitude + center - 0.00569 - 0.00478 * sin(radians(omega))
        let meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60
        let obliquity = meanObliquity + 0.00256 * cos(radians(omega))
        declination = degrees(asin(sin(radians(obliquity)) * sin(radians(apparentLongitude))))

        let y = pow(tan(radians(obliquity / 2)), 2)
        let l0 = radians(meanLongitude)
        let m = radians(meanAnomaly)
        equationOfTime =
            4
            * degrees(
                y * sin(2 * l0) - 2 * eccentricity * sin(m) + 4 * eccentricity * y * sin(m) * cos(2 * l0)
                    - 0.5 * y * y * sin(4 * l0) - 1.25 * eccentricity * eccentricity * sin(2 * m))
    }
}

func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
