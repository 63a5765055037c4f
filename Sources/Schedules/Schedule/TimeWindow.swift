import Foundation

/// A moment of a day that a time window starts or ends at: a wall-clock time, or sunrise or sunset
/// with an offset in minutes. Written as a household reads it: "22:30", "sunset", "sunset-30",
/// "sunrise+15".
package enum TimePoint: Sendable, Hashable, CustomStringConvertible {
    case time(TimeOfDay)
    case sun(SolarEvent, offset: Int)

    /// Reads the written form; refuses an unknown word, a time that does not exist and an offset
    /// beyond ``SunSchedule/largestOffset``.
    package init(_ text: String) throws(ScheduleError) {
        for event in SolarEvent.allCases where text.hasPrefix(event.rawValue) {
            let rest = text.dropFirst(event.rawValue.count)
            guard rest.isEmpty || ((rest.first == "+" || rest.first == "-") && rest.count > 1),
                let offset = rest.isEmpty ? 0 : Int(rest), rest.dropFirst().allSatisfy(\.isNumber)
            else {
                throw ScheduleError(
                    .invalidOffset,
                    "'\(text)': an offset is whole minutes after the event, as in sunset+30 or sunset-30")
            }
            guard abs(offset) <= SunSchedule.largestOffset else {
                throw ScheduleError(
                    .invalidOffset, "'\(text)': an offset is at most \(SunSchedule.largestOffset) minutes either way")
            }
            self = .sun(event, offset: offset)
            return
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isNumber) }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else {
            throw ScheduleError(.invalidTime, "'\(text)' is no time of day (22:30) nor sunrise or sunset (sunset-30)")
        }
        self = .time(try TimeOfDay(hour: hour, minute: minute))
    }

    package var description: String {
        switch self {
        case .time(let time): time.description
        case .sun(let event, 0): event.rawValue
        case .sun(let event, let offset): "\(event.rawValue)\(offset > 0 ? "+" : "")\(offset)"
        }
    }

    /// The instant this point names on `date`. On a polar day the sun counts as rising at the
    /// day's start and setting at its end; on a polar night as setting at its start and rising at
    /// its end: so "sunset to sunrise" holds all through a polar night, and never on a polar day.
    func instant(on date: LocalDate, clock: WallClock, place: Coordinates?) -> Date? {
        switch self {
        case .time(let time):
            return clock.instant(of: LocalDateTime(date, time))
        case .sun(let event, let offset):
            guard let place else { return nil }
            let start = clock.instant(of: LocalDateTime(date, .midnight))
            let end = clock.instant(of: LocalDateTime(date.adding(days: 1), .midnight))
            let base: Date =
                switch (SunCalculator.day(date, at: place, in: clock.timeZone), event) {
                case (.risesAndSets(let sunrise, _), .sunrise): sunrise
                case (.risesAndSets(_, let sunset), .sunset): sunset
                case (.polarDay, .sunrise), (.polarNight, .sunset): start
                case (.polarDay, .sunset), (.polarNight, .sunrise): end
                }
            return base + TimeInterval(offset * 60)
        }
    }
}

/// "Only between": the part of each day from one point to the next, across midnight when the end
/// comes first on the clock ("sunset to 06:00", "22:00 to 07:00"). A condition of an automation,
/// checked on the home's clock when its event fires.
package struct TimeWindow: Sendable, Hashable {
    package let from: TimePoint
    package let to: TimePoint

    /// Refuses a window of no length: the same point twice.
    package init(from: TimePoint, to: TimePoint) throws(ScheduleError) {
        guard from != to else {
            throw ScheduleError(.invalidTime, "a window from \(from) to \(to) has no length")
        }
        self.from = from
        self.to = to
    }

    /// Whether it needs the home's place on the Earth (a sunrise or sunset).
    package var needsPlace: Bool {
        if case .sun = from { return true }
        if case .sun = to { return true }
        return false
    }

    /// Whether `instant` lies in the window on the clock of `timeZone`: at or after a start and
    /// before the first end that follows it. Each of the last days' starts is tried (a window across
    /// midnight began the day before; a large offset may move a start into the next day). False
    /// for a sun point without a place.
    package func contains(_ instant: Date, in timeZone: TimeZone, at place: Coordinates?) -> Bool {
        let clock = WallClock(timeZone: timeZone)
        let today = clock.date(of: instant)
        for day in (-2...0).map(today.adding(days:)) {
            guard let start = from.instant(on: day, clock: clock, place: place), start <= instant else { continue }
            let ends = (0...2).compactMap { to.instant(on: day.adding(days: $0), clock: clock, place: place) }
            // An end at the start itself closes it (a polar day's sunset and the next sunrise).
            guard let end = ends.first(where: { $0 >= start }) else { continue }
            if instant < end { return true }
        }
        return false
    }
}
