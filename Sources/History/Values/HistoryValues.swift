import Foundation
import HomeModel

/// One recorded value: a number, or 0/1 for a bool, or an enumerated state's integer.
package struct HistoryPoint: Sendable, Hashable {
    package let time: Date
    package let value: Double

    package init(time: Date, value: Double) {
        self.time = time
        self.value = value
    }
}

/// The values of one characteristic in one hour, summed up: what is kept once raw points age out,
/// and what a query over a long span answers with.
package struct HourlyAggregate: Sendable, Hashable {
    /// The start of the hour (UTC).
    package let hour: Date
    package let minimum: Double
    package let mean: Double
    package let maximum: Double
    /// How many points the hour held.
    package let count: Int

    package init(hour: Date, minimum: Double, mean: Double, maximum: Double, count: Int) {
        self.hour = hour
        self.minimum = minimum
        self.mean = mean
        self.maximum = maximum
        self.count = count
    }
}

/// How finely a history query is answered: each recorded value, or one aggregate per hour. A
/// query that names none leaves it to the store (raw when the span is recent and small enough).
package enum HistoryResolution: String, Sendable, Hashable, CaseIterable {
    case raw
    case hour
}

/// The answer to a history query: raw points when the span is recent and small enough, else one
/// aggregate per hour.
package enum HistoryAnswer: Sendable, Hashable {
    case points([HistoryPoint])
    case hourly([HourlyAggregate])
}

/// What a timeline entry tells of. An open set, as the model's types are.
package struct TimelineKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    /// A button was pressed.
    package static let press = Self(rawValue: "press")
    package static let motion = Self(rawValue: "motion")
    static let occupancy = Self(rawValue: "occupancy")
    /// A contact sensor (a door or window) opened or closed.
    package static let contact = Self(rawValue: "contact")
    /// A garage door's state.
    package static let door = Self(rawValue: "door")
    package static let lock = Self(rawValue: "lock")
    static let leak = Self(rawValue: "leak")
    package static let smoke = Self(rawValue: "smoke")
    package static let actionSet = Self(rawValue: "actionSet")
    package static let automation = Self(rawValue: "automation")
}

/// One entry of a home's timeline, in words a page can show ("Back Door" "opened").
package struct TimelineEvent: Sendable, Hashable {
    package let home: HomeID
    package let time: Date
    package let kind: TimelineKind
    /// The accessory it happened to; `nil` for an action set or an automation.
    package let accessory: AccessoryID?
    /// What it happened to, by name when it happened: an accessory, an action set, an automation.
    package let subject: String
    /// What happened: `opened`, `single press`, `ran`.
    package let detail: String
    /// The automation that fired, for an automation's firing: what its last firing is found by
    /// after a rename (the `subject` keeps the name it had then). Nil in entries written before it
    /// was kept.
    package let automation: TriggerID?

    package init(
        home: HomeID, time: Date, kind: TimelineKind, accessory: AccessoryID?, subject: String, detail: String,
        automation: TriggerID? = nil
    ) {
        self.home = home
        self.time = time
        self.kind = kind
        self.accessory = accessory
        self.subject = subject
        self.detail = detail
        self.automation = automation
    }
}

/// One characteristic whose values are recorded, with the home it is in (so a removed home's
/// history can go with it).
package struct SeriesKey: Sendable, Hashable {
    package let home: HomeID
    package let value: ValueKey

    package init(home: HomeID, value: ValueKey) {
        self.home = home
        self.value = value
    }
}

/// What the recorder hands the store, in the order the changes came.
package enum HistoryEntry: Sendable, Hashable {
    case point(SeriesKey, HistoryPoint)
    case event(TimelineEvent)
    /// The accessory left its home: its points, aggregates and timeline entries go.
    case forgetAccessory(AccessoryID)
    /// The home was removed: everything recorded in it goes.
    case forgetHome(HomeID)
}

/// When a home's automations last fired, from the timeline (``HistoryStore/lastFirings(home:)``).
package struct AutomationFirings: Sendable, Hashable {
    /// By automation, from the entries that name it.
    var byID: [TriggerID: Date] = [:]
    /// By the automation's name when it fired, from entries written before they named it.
    var byName: [String: Date] = [:]

    package init() {}

    /// When `trigger` last fired: by its identifier, else (an older entry) by its current name.
    package func last(_ trigger: Trigger) -> Date? {
        let older = byName[trigger.name]
        guard let latest = byID[trigger.id] else { return older }
        return older.map { max($0, latest) } ?? latest
    }
}
