import Foundation

/// A home's wall clock: its minutes as instants and back, in its time zone, by the clock rules a
/// household expects. A minute the clocks skip (spring forward) is the first minute after the
/// skip; a minute they repeat (fall back) is its first occurrence. Foundation's `TimeZone` knows
/// the offsets and transitions; this type only chooses among them.
struct WallClock: Sendable {
    let timeZone: TimeZone
    private let calendar: Calendar

    init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The instant `slot` names on this clock: its first occurrence when the clocks repeat it, the
    /// end of the skip when they jump over it.
    func instant(of slot: LocalDateTime) -> Date {
        let components = DateComponents(
            year: slot.date.year, month: slot.date.month, day: slot.date.day, hour: slot.time.hour,
            minute: slot.time.minute)
        let guess = calendar.date(from: components)!
        let readAsUTC = LocalDate.calendar.date(from: components)!
        // Every offset the zone has around the slot: the slot is the wall time less one of them.
        let offsets = Set([-86_400.0, 0, 86_400].map { timeZone.secondsFromGMT(for: guess + $0) })
        let candidates = offsets.map { readAsUTC - TimeInterval($0) }
        if let first = candidates.filter({ self.slot(of: $0) == slot }).min() {
            return first
        }
        return timeZone.nextDaylightSavingTimeTransition(after: candidates.min()!) ?? guess
    }

    /// The wall-clock minute `instant` falls in (its seconds dropped).
    func slot(of instant: Date) -> LocalDateTime {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: instant)
        return try! LocalDateTime(
            year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!)
    }

    /// The calendar day `instant` falls on.
    func date(of instant: Date) -> LocalDate { LocalDate(instant, in: timeZone) }
}
