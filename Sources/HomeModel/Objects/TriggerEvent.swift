import Foundation
import Schedules

/// What sets off an automation: a characteristic's change (HomeKit's `HMCharacteristicEvent`), a
/// numeric characteristic entering a range (`HMCharacteristicThresholdRangeEvent`) or a schedule (a
/// time of day, sunrise or sunset, a timer), which the automation service runs on its clock.
package enum TriggerEvent: Sendable, Hashable {
    /// The characteristic whose change fires the trigger, and the value that fires it (a press:
    /// `ProgrammableSwitchEvent` 0, 1 or 2); `nil` fires on every change.
    case characteristic(ValueKey, value: CharacteristicValue?)
    /// A numeric characteristic whose value crosses into `range` (from outside it) fires the trigger;
    /// a value already inside when it is first seen, and further values inside, do not.
    case threshold(ValueKey, ThresholdRange)
    case schedule(TriggerSchedule)

    /// The characteristic of a characteristic or threshold event; `nil` for a schedule.
    package var characteristic: ValueKey? {
        switch self {
        case .characteristic(let key, _), .threshold(let key, _): key
        case .schedule: nil
        }
    }

    /// The schedule of a schedule event; `nil` for a characteristic's.
    package var schedule: TriggerSchedule? {
        guard case .schedule(let schedule) = self else { return nil }
        return schedule
    }
}

/// What set an automation off, for `$events` and the log.
package enum FiringCause: Sendable, Hashable {
    /// The characteristic reported the value its event waits for (any value, for an event with none).
    case value(ValueKey, CharacteristicValue)
    /// A numeric characteristic's value crossed into the event's range.
    case range(ValueKey, CharacteristicValue, ThresholdRange)
    /// Its schedule came due: the slot it fired for, and the instant that slot fell on.
    case schedule(Firing)
    /// A firing that came due while the hub was down, run at start within the grace.
    case catchUp(Firing)
}

/// The values a threshold event waits for: from `minimum` to `maximum`, both included; a bound
/// left out is open (`minimum` alone: "at or above").
package struct ThresholdRange: Sendable, Hashable {
    package let minimum: Double?
    package let maximum: Double?

    /// Refuses a range with no bound, a bound that is no finite number, or a minimum above the
    /// maximum (`invalidRange`).
    package init(minimum: Double?, maximum: Double?) throws(HomeError) {
        guard minimum != nil || maximum != nil else {
            throw HomeError(.invalidRange, "A range has a \"min\", a \"max\" or both.")
        }
        guard minimum?.isFinite ?? true, maximum?.isFinite ?? true else {
            throw HomeError(.invalidRange, "A range's bounds are finite numbers.")
        }
        if let minimum, let maximum, minimum > maximum {
            throw HomeError(.invalidRange, "The range's min \(minimum) is above its max \(maximum).")
        }
        self.minimum = minimum
        self.maximum = maximum
    }

    /// Whether `value` lies in the range; a value that is no number lies outside it.
    package func contains(_ value: CharacteristicValue) -> Bool {
        guard value.boolValue == nil, let number = value.doubleValue else { return false }
        return number >= (minimum ?? -.infinity) && number <= (maximum ?? .infinity)
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
