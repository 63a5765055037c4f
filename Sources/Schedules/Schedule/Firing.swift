import Foundation

/// One firing of a schedule: when it fires, and the wall-clock slot it stands for (what a new
/// time zone must not fire again).
package struct Firing: Sendable, Hashable, CustomStringConvertible {
    package let instant: Date
    /// For a clock time, the date and time the household set; for a sun event, the day whose
    /// sunrise or sunset it is and the minute it fell in; for an interval, the minute it fell in.
    package let slot: LocalDateTime

    package init(instant: Date, slot: LocalDateTime) {
        self.instant = instant
        self.slot = slot
    }

    package var description: String { "\(slot) (\(instant))" }
}

/// When something fires: timer triggers, times of day, sunrise and sunset. A pure function of
/// "now", so the service can ask it on an injected clock and sleep once until the answer.
package protocol FiringSchedule: Sendable {
    /// The first firing strictly after `now` and after `last` (the previous firing, when there was
    /// one), with the home's clock in `timeZone`; nil when it never fires again.
    func nextFiring(after now: Date, following last: Firing?, in timeZone: TimeZone) -> Firing?
}

extension Firing? {
    /// How far ahead of "now" a last firing may lie and still count: more than any change of time
    /// zone moves a slot (26 hours), less than a clock that was wrong for days and was set right.
    static let trustedAhead: TimeInterval = 2 * 86_400

    /// The last firing, unless it lies more than ``trustedAhead`` after `now`: then the clock that
    /// made it was wrong, and holding every firing back until that time would stop the schedule.
    func trusted(at now: Date) -> Firing? {
        guard let firing = self, firing.instant <= now + Self.trustedAhead else { return nil }
        return firing
    }

    /// What the next firing must come after: `now`, or the last firing when it is later (a clock
    /// set back a little fires nothing twice).
    func threshold(_ now: Date) -> Date {
        guard let firing = trusted(at: now) else { return now }
        return Swift.max(now, firing.instant)
    }

    /// Whether `slot` comes after the last firing's slot, so it has not fired yet.
    func precedes(_ slot: LocalDateTime, at now: Date) -> Bool {
        guard let firing = trusted(at: now) else { return true }
        return firing.slot < slot
    }
}
