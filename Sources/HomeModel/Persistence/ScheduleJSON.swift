import Foundation
import Schedules

/// A schedule trigger's event as the database stores it (migration "v6: schedules"): one JSON
/// column, wall-clock values as text ("22:30", "2026-12-01T07:30"), weekdays as Foundation's numbers
/// (Sunday 1).
struct ScheduleJSON: Codable, Sendable, Hashable {
    var kind: String
    var time: String?
    var weekdays: [Int]?
    var sun: String?
    var offset: Int?
    var start: String?
    var recurrence: RecurrenceJSON?

    struct RecurrenceJSON: Codable, Sendable, Hashable {
        var unit: String
        var every: Int?
        var weekdays: [Int]?
    }

    init(_ schedule: TriggerSchedule) {
        switch schedule {
        case .timeOfDay(let time, let weekdays):
            kind = "timeOfDay"
            self.time = time.description
            self.weekdays = weekdays.map(\.rawValue).sorted()
        case .sun(let event, let offset, let weekdays):
            kind = "sun"
            sun = event.rawValue
            self.offset = offset
            self.weekdays = weekdays.map(\.rawValue).sorted()
        case .timer(let start, let recurrence):
            kind = "timer"
            self.start = "\(start.date)T\(start.time)"
            self.recurrence = recurrence.map(RecurrenceJSON.init)
        }
    }

    /// The schedule, or nil for a row this gateway cannot read (written by a later one).
    var schedule: TriggerSchedule? {
        func days(_ numbers: [Int]?) -> Set<Weekday>? {
            guard let numbers else { return nil }
            let days = numbers.compactMap(Weekday.init(rawValue:))
            return days.count == numbers.count ? Set(days) : nil
        }
        switch kind {
        case "timeOfDay":
            guard let time = time.flatMap(TimeOfDay.init), let weekdays = days(weekdays) else { return nil }
            return .timeOfDay(time, weekdays: weekdays)
        case "sun":
            guard let event = sun.flatMap(SolarEvent.init(rawValue:)), let offset, let weekdays = days(weekdays)
            else { return nil }
            return .sun(event, offset: offset, weekdays: weekdays)
        case "timer":
            guard let start = start.flatMap(LocalDateTime.init) else { return nil }
            guard let recurrence else { return .timer(start: start, recurrence: nil) }
            guard let decoded = recurrence.recurrence else { return nil }
            return .timer(start: start, recurrence: decoded)
        default:
            return nil
        }
    }
}

extension ScheduleJSON.RecurrenceJSON {
    init(_ recurrence: Recurrence) {
        switch recurrence {
        case .everyMinutes(let count): self.init(unit: "minutes", every: count)
        case .everyHours(let count): self.init(unit: "hours", every: count)
        case .everyDays(let count): self.init(unit: "days", every: count)
        case .everyWeeks(let count): self.init(unit: "weeks", every: count)
        case .onWeekdays(let days): self.init(unit: "weekdays", weekdays: days.map(\.rawValue).sorted())
        }
    }

    var recurrence: Recurrence? {
        switch (unit, every) {
        case ("minutes", let count?): return .everyMinutes(count)
        case ("hours", let count?): return .everyHours(count)
        case ("days", let count?): return .everyDays(count)
        case ("weeks", let count?): return .everyWeeks(count)
        case ("weekdays", _):
            let days = (weekdays ?? []).compactMap(Weekday.init(rawValue:))
            return days.isEmpty ? nil : .onWeekdays(Set(days))
        default: return nil
        }
    }
}
