import Foundation

/// Sunrise or sunset with an offset ("30 minutes before sunset") at the home's place, as a
/// schedule. A polar day or night has no such event and fires nothing; the next day that has one
/// does.
package struct SunSchedule: FiringSchedule, Hashable {
    package let event: SolarEvent
    /// Minutes after the event (negative: before it).
    package let offset: Int
    package let place: Coordinates

    /// The widest offset either way: beyond it an event would fire on another day than its own.
    package static let largestOffset = 720

    /// How many days ahead to look for an event: the polar night at 78° N lasts about 110 days.
    static let searchedDays = 400

    package init(_ event: SolarEvent, offset: Int = 0, at place: Coordinates) throws(ScheduleError) {
        guard abs(offset) <= Self.largestOffset else {
            throw ScheduleError(
                .invalidOffset, "\(offset) minutes: an offset is at most \(Self.largestOffset) either way")
        }
        self.event = event
        self.offset = offset
        self.place = place
    }

    /// The first firing after `now`; its slot's date is the day whose event it is, so each day
    /// fires at most once whatever the offset.
    package func nextFiring(after now: Date, following last: Firing?, in timeZone: TimeZone) -> Firing? {
        let clock = WallClock(timeZone: timeZone)
        let threshold = last.threshold(now)
        // An event of the day before, with a positive offset, may still be ahead.
        var date = clock.date(of: threshold).adding(days: -1)
        for _ in 0..<Self.searchedDays {
            if let event = SunCalculator.day(date, at: place, in: timeZone).instant(of: event) {
                let instant = event + TimeInterval(offset * 60)
                let slot = LocalDateTime(date, clock.slot(of: instant).time)
                if instant > threshold, last.precedes(slot, at: now) {
                    return Firing(instant: instant, slot: slot)
                }
            }
            date = date.adding(days: 1)
        }
        return nil
    }
}
