import HomeModel

/// Where each threshold automation's characteristic stands against its range, so that only a
/// crossing into it fires: a value inside after one outside. A value seen first (at start, where
/// the stored value may be hours old, or for a characteristic never reported) only says where it
/// stands; further values inside fire nothing until one outside comes between.
struct ThresholdCrossings {
    private struct Armed {
        let event: TriggerEvent
        /// Whether the last value seen was inside the range; nil before any was.
        var inside: Bool?
    }

    private var armed: [TriggerID: Armed] = [:]

    /// Follows the layout: an automation whose event is unchanged keeps where it stands; a new or
    /// changed one (or one turned on) starts from the value the home holds, or from nothing at
    /// start (`atStart`), when the values are the database's, not the devices'.
    mutating func follow(_ homes: [Home], atStart: Bool) {
        var next: [TriggerID: Armed] = [:]
        for home in homes {
            for trigger in home.triggers {
                guard let (key, range) = trigger.activeThreshold else { continue }
                if let kept = armed[trigger.id], kept.event == trigger.event {
                    next[trigger.id] = kept
                    continue
                }
                let value =
                    atStart
                    ? nil : home.accessory(key.accessory)?.characteristic(key.service, key.characteristic)?.value
                next[trigger.id] = Armed(event: trigger.event, inside: value.map(range.contains))
            }
        }
        armed = next
    }

    /// Records `key` taking `value` in `home`: the automations of the home that crossed into their
    /// range with it.
    mutating func report(_ key: ValueKey, value: CharacteristicValue, in home: Home) -> Set<TriggerID> {
        var crossed: Set<TriggerID> = []
        for trigger in home.triggers {
            guard let (watched, range) = trigger.activeThreshold, watched == key else { continue }
            let inside = range.contains(value)
            let before = armed[trigger.id]?.event == trigger.event ? armed[trigger.id]?.inside : nil
            armed[trigger.id] = Armed(event: trigger.event, inside: inside)
            if before == false, inside { crossed.insert(trigger.id) }
        }
        return crossed
    }

    /// Whether a change of `key` in `home` concerns a threshold automation.
    static func watches(_ key: ValueKey, in home: Home) -> Bool {
        home.triggers.contains { $0.activeThreshold?.key == key }
    }
}
