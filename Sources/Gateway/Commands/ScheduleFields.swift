import Foundation
import HomeModel
import JSON
import Schedules

/// Schedules and locations as requests write them and `$layout` shows them (docs/mqtt.md,
/// "Automations"): times "22:30", fire dates "2026-12-01T07:30" in the home's time zone, weekdays
/// "mon" to "sun". One place for both directions, so what `$layout` shows can be sent back.
enum ScheduleFields {
    /// The weekdays' wire names, Sunday first as Foundation numbers them.
    static let weekdayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    static func name(_ weekday: Weekday) -> String { weekdayNames[weekday.rawValue - 1] }

    /// `addTrigger`'s schedule, when the body has one of its event keys ("time", "sun", "fireDate");
    /// nil for a characteristic or range event. More than one event is refused.
    static func schedule(_ body: RequestBody) throws(HomeError) -> TriggerSchedule? {
        var keys = ["time", "sun", "fireDate", "range", "accessory"].filter {
            body.json[$0] != nil && body.json[$0] != .null
        }
        // A range's characteristic is named as a characteristic event's: one event.
        if keys.contains("range") { keys.removeAll { $0 == "accessory" } }
        guard keys.count <= 1 else {
            throw HomeError(
                .invalidParameter,
                "An automation has one event: \(keys.map { "\"\($0)\"" }.joined(separator: ", ")) were given together.")
        }
        switch keys.first {
        case "time":
            return .timeOfDay(try time(body.string("time"), key: "time"), weekdays: try weekdays(body, "weekdays"))
        case "sun":
            guard let event = SolarEvent(rawValue: try body.string("sun")) else {
                throw HomeError(.invalidParameter, "\"sun\" is \"sunrise\" or \"sunset\".")
            }
            var offset = 0
            if let value = try body.optionalValue("offset") {
                guard case .integer(let minutes) = value else {
                    throw HomeError(.invalidParameter, "\"offset\" is a whole number of minutes (negative: before).")
                }
                offset = minutes
            }
            return .sun(event, offset: offset, weekdays: try weekdays(body, "weekdays"))
        case "fireDate":
            let text = try body.string("fireDate")
            guard let start = LocalDateTime(text) else {
                throw HomeError(
                    .invalidSchedule,
                    "\"fireDate\" '\(text)' is no date and minute of the calendar; write it as 2026-12-01T07:30 (the home's time zone)."
                )
            }
            return .timer(start: start, recurrence: try recurrence(body))
        default:
            return nil
        }
    }

    /// "HH:MM", refused with the key's name.
    static func time(_ text: String, key: String) throws(HomeError) -> TimeOfDay {
        guard let time = TimeOfDay(text) else {
            throw HomeError(
                .invalidSchedule, "\"\(key)\" '\(text)' is no time of day; write it as 22:30 (00:00 to 23:59).")
        }
        return time
    }

    /// A list of weekday names; every day when left out.
    static func weekdays(_ body: RequestBody, _ key: String) throws(HomeError) -> Set<Weekday> {
        guard body.json[key] != nil, body.json[key] != .null else { return Set(Weekday.allCases) }
        let names = try body.strings(key)
        var days: Set<Weekday> = []
        for name in names {
            guard let index = weekdayNames.firstIndex(of: name.lowercased()) else {
                throw HomeError(
                    .invalidParameter,
                    "\"\(key)\": '\(name)' is no weekday; the weekdays are \(weekdayNames.joined(separator: ", ")).")
            }
            days.insert(Weekday(rawValue: index + 1)!)
        }
        guard !days.isEmpty else {
            throw HomeError(.invalidSchedule, "\"\(key)\" names no day: leave it out for every day.")
        }
        return days
    }

    /// A timer's "recurrence": `{"every": 15, "unit": "minutes"}` (minutes, hours, days, weeks) or
    /// `{"weekdays": ["mon", "fri"]}`; none when left out.
    static func recurrence(_ body: RequestBody) throws(HomeError) -> Recurrence? {
        guard let value = try body.optionalValue("recurrence") else { return nil }
        guard case .object = value else {
            throw HomeError(
                .invalidParameter,
                "\"recurrence\" is {\"every\": 15, \"unit\": \"minutes\"} (minutes, hours, days, weeks) or {\"weekdays\": [\"mon\"]}."
            )
        }
        let recurrence = RequestBody(value)
        if value["weekdays"] != nil {
            return .onWeekdays(try weekdays(recurrence, "weekdays"))
        }
        guard case .integer(let count) = try recurrence.value("every") else {
            throw HomeError(.invalidParameter, "\"every\" is a whole number.")
        }
        switch try recurrence.string("unit") {
        case "minutes": return .everyMinutes(count)
        case "hours": return .everyHours(count)
        case "days": return .everyDays(count)
        case "weeks": return .everyWeeks(count)
        case let unit:
            throw HomeError(.invalidParameter, "\"unit\" '\(unit)' is none of minutes, hours, days, weeks.")
        }
    }

    /// `setLocation`'s location: latitude and longitude in degrees, an IANA time zone.
    static func location(_ body: RequestBody) throws(HomeError) -> HomeLocation {
        func degrees(_ key: String) throws(HomeError) -> Double {
            guard let degrees = try body.value(key).numberValue else {
                throw HomeError(.invalidParameter, "\"\(key)\" is a number of degrees.")
            }
            return degrees
        }
        return try HomeLocation(
            latitude: degrees("latitude"), longitude: degrees("longitude"), timeZone: body.string("timeZone"))
    }

    // MARK: $layout

    /// A schedule's members in `$layout`, in the request's own form.
    static func layout(_ schedule: TriggerSchedule) -> [(key: String, value: JSON)] {
        func days(_ weekdays: Set<Weekday>) -> JSON { .array(weekdays.sorted().map { .string(name($0)) }) }
        switch schedule {
        case .timeOfDay(let time, let weekdays):
            return [("time", .string(time.description)), ("weekdays", days(weekdays))]
        case .sun(let event, let offset, let weekdays):
            return [("sun", .string(event.rawValue)), ("offset", .integer(offset)), ("weekdays", days(weekdays))]
        case .timer(let start, let recurrence):
            let repeats: JSON =
                switch recurrence {
                case nil: .null
                case .everyMinutes(let count): .object([("every", .integer(count)), ("unit", .string("minutes"))])
                case .everyHours(let count): .object([("every", .integer(count)), ("unit", .string("hours"))])
                case .everyDays(let count): .object([("every", .integer(count)), ("unit", .string("days"))])
                case .everyWeeks(let count): .object([("every", .integer(count)), ("unit", .string("weeks"))])
                case .onWeekdays(let weekdays): .object([("weekdays", days(weekdays))])
                }
            return [("fireDate", .string("\(start.date)T\(start.time)")), ("recurrence", repeats)]
        }
    }

    /// A next firing in `$layout`: ISO 8601 with the offset of the home's time zone (the hub's own
    /// while the home has no location), to the second; null when none is planned.
    static func layout(_ next: Date?, in home: Home) -> JSON {
        guard let next else { return .null }
        let style = Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: home.location?.timeZone ?? .current)
        return .string(style.format(next))
    }

    /// The home's location in `$layout`, or null.
    static func layout(_ location: HomeLocation?) -> JSON {
        guard let location else { return .null }
        return .object([
            ("latitude", .number(location.latitude)), ("longitude", .number(location.longitude)),
            ("timeZone", .string(location.timeZoneIdentifier)),
        ])
    }
}
