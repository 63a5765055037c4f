import Foundation

/// What the sun does on one day at one place: it rises and sets, or it stays up (polar day) or
/// down (polar night) all day, which is a state to report, not a time.
package enum SolarDay: Sendable, Hashable {
    case risesAndSets(sunrise: Date, sunset: Date)
    /// The sun's upper edge never goes below the horizon.
    case polarDay
    /// The sun's upper edge never comes above the horizon.
    case polarNight

    /// The instant of `event`, or nil on a polar day or night.
    package func instant(of event: SolarEvent) -> Date? {
        guard case .risesAndSets(let sunrise, let sunset) = self else { return nil }
        return event == .sunrise ? sunrise : sunset
    }
}

/// The two sun events a schedule can follow.
package enum SolarEvent: String, Sendable, Hashable, CaseIterable {
    case sunrise
    case sunset
}
