import Foundation
import History
import HomeModel
import JSON
import Schedules

/// The home's automations (automations.mustache): every member sees each one in words with its next
/// and last firing; an administrator also turns them off and on, removes them, and adds the common
/// shapes (at a time, at sunrise or sunset, on a report, on a range) through ``AutomationForm``.
extension Pages {
    struct Automations {
        let items: [(name: String, enabled: Bool, text: String, next: String, last: String, forms: [Request])]
        /// The forms that add one; nil for a guest, or while the home has no scene to run.
        let adding: Adding?
        /// Why there are no forms for an administrator: the home has no scene.
        let needsScene: Bool
    }

    /// The choices the add forms offer.
    struct Adding {
        let scenes: [Option]
        let weekdays: [(value: String, text: String)]
        /// Characteristics that report states or presses, and those that are numbers.
        let reports, numbers: [Option]
        /// The home has no location: sunrise and sunset are unknown until an administrator sets it.
        let noLocation: Bool
    }

    static func automations(_ context: HomeContext) -> Automations {
        let home = context.home
        let admin = context.role.mayChangeLayout
        let items = home.triggers.map { trigger in
            let fields: [Field] = [("home", home.name), ("trigger", trigger.name)]
            let forms =
                admin
                ? [
                    Request(
                        operation: "enableTrigger",
                        fields: fields + [("enabled", trigger.isEnabled ? "false" : "true")],
                        button: trigger.isEnabled ? "Turn off" : "Turn on"),
                    Request(
                        operation: "removeTrigger", fields: fields, button: "Remove",
                        confirm: "Remove the automation \(trigger.name)?"),
                ] : []
            return (
                name: trigger.name, enabled: trigger.isEnabled, text: automationText(trigger, in: home),
                next: nextFiringText(trigger, in: home),
                last: lastFiringText(
                    trigger, in: home, ran: context.lastRuns.last(trigger), due: context.lastFirings[trigger.id],
                    historyKept: context.historyKept), forms: forms
            )
        }
        let scenes = home.actionSets.map { Option(value: $0.name, text: $0.name) }
        let adding =
            admin && !scenes.isEmpty
            ? Adding(
                scenes: scenes,
                weekdays: [Weekday.monday, .tuesday, .wednesday, .thursday, .friday, .saturday, .sunday].map {
                    (weekdayName($0), weekdayText($0))
                }, reports: characteristicOptions(home, numbers: false),
                numbers: characteristicOptions(home, numbers: true), noLocation: home.location == nil) : nil
        return Automations(items: items, adding: adding, needsScene: admin && scenes.isEmpty)
    }

    /// The characteristics an automation can follow: those that report their changes and can be read;
    /// states, presses and switches (`numbers` false) or plain numbers (`numbers` true). Each option's
    /// value names it as `addTrigger` does, as a JSON list of its accessory's, service's and own names
    /// (and `bool` for a bool).
    static func characteristicOptions(_ home: Home, numbers: Bool) -> [Option] {
        var options: [Option] = []
        for accessory in home.accessories {
            for service in accessory.services where service.type.rawValue != "AccessoryInformation" {
                for characteristic in service.characteristics {
                    let metadata = characteristic.metadata
                    guard metadata.permissions.contains(.notify),
                        metadata.permissions.contains(.read) || characteristic.type.isEvent,
                        !metadata.permissions.contains(.hidden), characteristic.type != .name
                    else { continue }
                    let isState =
                        metadata.format == .bool || metadata.validValues != nil || characteristic.type.isEvent
                    let isNumber = !isState && [.int, .uint8, .uint32, .float].contains(metadata.format)
                    guard numbers ? isNumber : isState else { continue }
                    // A bool's on and off are read as such (``AutomationForm``): the format says which.
                    let path =
                        [accessory.name, service.name, characteristic.type.rawValue]
                        + (metadata.format == .bool ? ["bool"] : [])
                    let value = JSON.array(path.map(JSON.string)).serialized
                    let unit = unitSuffix(metadata.unit, type: characteristic.type)
                    options.append(
                        Option(
                            value: value,
                            text:
                                "\(sourceName(accessory, service)): \(words(characteristic.type.rawValue).lowercased())\(numbers && !unit.isEmpty ? " (\(unit.trimmingCharacters(in: .whitespaces)))" : "")"
                        ))
                }
            }
        }
        return options
    }

    /// An accessory as an automation names it, with the service when it has several a person uses
    /// ("Remote (Left)"; a battery is not one).
    static func sourceName(_ accessory: Accessory?, _ service: Service?) -> String {
        guard let accessory else { return "a removed accessory" }
        let services = accessory.services.count {
            $0.type.rawValue != "AccessoryInformation" && !secondaryServices.contains($0.type)
        }
        guard let service, services > 1 else { return accessory.name }
        return "\(accessory.name) (\(serviceHeading(service)))"
    }

    /// When a schedule fires next, from the home's plan; a characteristic's automation fires when its
    /// event happens.
    static func nextFiringText(_ trigger: Trigger, in home: Home) -> String {
        guard trigger.isActive else {
            return trigger.isEnabled ? "Next: never, until it is given a scene" : "Next: never while it is off"
        }
        guard let schedule = trigger.event.schedule else { return "Next: when that happens" }
        if let next = home.nextFirings[trigger.id] { return "Next: \(dateText(next, in: home))" }
        if schedule.needsPlace && home.location == nil { return "Next: never until the home's location is set" }
        return "Next: none planned"
    }

    /// When the automation last ran, from the history's timeline when the gateway keeps it; else,
    /// for a schedule, when it last came due (``ScheduleState``, kept for catching up after a
    /// restart: that firing ran unless its conditions did not hold or the hub was down too long).
    /// An automation set off by a device has no such record without history, and the page says so.
    static func lastFiringText(_ trigger: Trigger, in home: Home, ran: Date?, due: Date?, historyKept: Bool)
        -> String
    {
        if let ran { return "Last ran: \(dateText(ran, in: home))" }
        if trigger.event.schedule != nil, let due { return "Last due: \(dateText(due, in: home))" }
        if historyKept { return "Last: none in the history kept" }
        guard trigger.event.schedule != nil else {
            return "Last: not recorded for an automation set off by a device (the gateway keeps no history)"
        }
        return "Last: not yet"
    }

    /// A moment on the home's clock: "Mon 30 Nov 08:37".
    static func dateText(_ date: Date, in home: Home) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = home.location?.timeZone ?? .current
        formatter.dateFormat = "EEE d MMM HH:mm"
        return formatter.string(from: date)
    }

    /// A schedule in words: "At 22:30 on weekdays", "30 minutes before sunset every day".
    static func scheduleText(_ schedule: TriggerSchedule) -> String {
        switch schedule {
        case .timeOfDay(let time, let weekdays):
            return "At \(time) \(daysText(weekdays))"
        case .sun(let event, let offset, let weekdays):
            let minutes = abs(offset) == 1 ? "1 minute" : "\(abs(offset)) minutes"
            let when =
                offset == 0
                ? "At \(event.rawValue)" : "\(minutes) \(offset < 0 ? "before" : "after") \(event.rawValue)"
            return "\(when) \(daysText(weekdays))"
        case .timer(let start, let recurrence):
            let first = "\(start.date) at \(start.time)"
            switch recurrence {
            case nil: return "Once, on \(first)"
            case .everyMinutes(let count)?: return "Every \(count) minutes from \(first)"
            case .everyHours(let count)?:
                return count == 1 ? "Every hour from \(first)" : "Every \(count) hours from \(first)"
            case .everyDays(let count)?:
                return count == 1 ? "Every day from \(first)" : "Every \(count) days from \(first)"
            case .everyWeeks(let count)?:
                return count == 1 ? "Every week from \(first)" : "Every \(count) weeks from \(first)"
            case .onWeekdays(let weekdays)?: return "From \(first), \(daysText(weekdays))"
            }
        }
    }

    /// What an automation does beside its event and scenes: its conditions and options, as a clause
    /// each (" only between sunset and 06:00").
    static func optionsText(_ trigger: Trigger, in home: Home) -> String {
        var parts: [String] = []
        for condition in trigger.conditions {
            switch condition {
            case .time(let window):
                parts.append("only between \(window.from) and \(window.to)")
            case .characteristic(let key, let comparison, let value):
                let accessory = home.accessory(key.accessory)
                parts.append(
                    "only if \(accessory?.name ?? "a removed accessory")'s \(words(key.characteristic.rawValue).lowercased()) is \(comparison.rawValue) \(valueText(value, type: key.characteristic).text)"
                )
            }
        }
        if let back = trigger.options.turnBackAfter?.components.seconds {
            parts.append(
                back % 60 == 0 ? "turned back after \(back / 60) min" : "turned back after \(back) s")
        }
        if trigger.options.executeOnce { parts.append("once, then it turns itself off") }
        return parts.isEmpty ? "" : "; " + parts.joined(separator: "; ")
    }

    private static func weekdayName(_ day: Weekday) -> String {
        ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][day.rawValue - 1]
    }

    private static func weekdayText(_ day: Weekday) -> String {
        ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][day.rawValue - 1]
    }

    /// "every day", "on weekdays", "at weekends", "on Mon, Thu".
    static func daysText(_ days: Set<Weekday>) -> String {
        switch days {
        case Set(Weekday.allCases): "every day"
        case Weekday.workdays: "on weekdays"
        case [.saturday, .sunday]: "at weekends"
        default:
            "on "
                + days.sorted { ($0.rawValue + 5) % 7 < ($1.rawValue + 5) % 7 }.map(weekdayText).joined(separator: ", ")
        }
    }
}
