import Foundation
import Schedules

/// What sets off an automation: a characteristic's change (HomeKit's `HMCharacteristicEvent`) or a
/// schedule (a time of day, sunrise or sunset, a timer), which the automation service runs on its
/// clock.
package enum TriggerEvent: Sendable, Hashable {
    /// The characteristic whose change fires the trigger, and the value that fires it (a press:
    /// `ProgrammableSwitchEvent` 0, 1 or 2); `nil` fires on every change.
    case characteristic(ValueKey, value: CharacteristicValue?)
    case schedule(TriggerSchedule)

    /// The characteristic of a characteristic event; `nil` for a schedule.
    package var characteristic: ValueKey? {
        guard case .characteristic(let key, _) = self else { return nil }
        return key
    }

    /// The schedule of a schedule event; `nil` for a characteristic's.
    package var schedule: TriggerSchedule? {
        guard case .schedule(let schedule) = self else { return nil }
        return schedule
    }
}

/// When a scheduled automation fires, as the household set it: wall-clock times in the home's time
/// zone (``HomeLocation``), so a change of time zone keeps them at the same clock time.
package enum TriggerSchedule: Sendable, Hashable {
    /// A time of day on the chosen weekdays (HomeKit's significant time event with a time).
    case timeOfDay(TimeOfDay, weekdays: Set<Weekday>)
    /// Sunrise or sunset, `offset` minutes after it (negative: before), on the chosen weekdays; needs
    /// the home's location.
    case sun(SolarEvent, offset: Int, weekdays: Set<Weekday>)
    /// A timer (HomeKit's `HMTimerTrigger`): a first firing at a wall-clock minute, then its
    /// recurrence, if any.
    case timer(start: LocalDateTime, recurrence: Recurrence?)

    /// Refuses what cannot be scheduled: no weekday, an offset beyond twelve hours, a recurrence of
    /// fewer than five minutes.
    package func validate() throws(ScheduleError) {
        switch self {
        case .timeOfDay(let time, let weekdays):
            _ = try TimeOfDaySchedule(time: time, weekdays: weekdays)
        case .sun(_, let offset, let weekdays):
            guard !weekdays.isEmpty else { throw ScheduleError(.noWeekdays, "a sun event needs at least one weekday") }
            guard abs(offset) <= SunSchedule.largestOffset else {
                throw ScheduleError(
                    .invalidOffset, "\(offset) minutes: an offset is at most \(SunSchedule.largestOffset) either way")
            }
        case .timer(let start, let recurrence):
            _ = try TimerSchedule(start: start, recurrence: recurrence)
        }
    }

    /// Whether it needs the home's place on the Earth (a sun event).
    package var needsPlace: Bool {
        if case .sun = self { return true }
        return false
    }
}

/// Where a home is: its place on the Earth (for sunrise and sunset) and the time zone its clocks
/// keep (for every schedule). Set by an administrator.
package struct HomeLocation: Sendable, Hashable {
    package let coordinates: Coordinates
    /// An IANA time zone name ("Europe/Oslo").
    package let timeZoneIdentifier: String

    /// Checks the coordinates and the time zone: `invalidCoordinates` outside ±90° and ±180°,
    /// `unknownTimeZone` for a name the system's time zone database does not have.
    package init(latitude: Double, longitude: Double, timeZone: String) throws(HomeError) {
        do {
            coordinates = try Coordinates(latitude: latitude, longitude: longitude)
        } catch {
            throw HomeError(
                .invalidCoordinates,
                "Latitude \(latitude), longitude \(longitude): a latitude is within ±90° and a longitude within ±180°.")
        }
        guard TimeZone(identifier: timeZone) != nil,
            timeZone == "UTC" || TimeZone.knownTimeZoneIdentifiers.contains(timeZone)
        else {
            throw HomeError(
                .unknownTimeZone, "'\(timeZone)' is no time zone this hub knows; use an IANA name such as Europe/Oslo.")
        }
        timeZoneIdentifier = timeZone
    }

    /// Degrees north.
    package var latitude: Double { coordinates.latitude }
    /// Degrees east.
    package var longitude: Double { coordinates.longitude }

    /// The home's time zone.
    package var timeZone: TimeZone { TimeZone(identifier: timeZoneIdentifier) ?? .current }
}

extension ScheduleError {
    /// The same problem as the home model's error, for the wire.
    package var homeError: HomeError { HomeError(.invalidSchedule, message) }
}
