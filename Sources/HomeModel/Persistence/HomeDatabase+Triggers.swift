import GRDB

extension HomeDatabase {
    /// Writes the automation rows of `home` that differ from `old`, the same home before the change:
    /// a changed automation's rows are written again, a removed one's deleted, a new one's inserted,
    /// and one that only moved (an earlier one removed) has its position updated. An edit costs the
    /// automations it changed, not the home's (10,000 rewritten took most of each `addTrigger`).
    static func saveTriggers(of home: Home, from old: Home, _ db: Database) throws {
        var before: [TriggerID: (position: Int, trigger: Trigger)] = [:]
        for (position, trigger) in old.triggers.enumerated() { before[trigger.id] = (position, trigger) }
        var kept: Set<TriggerID> = []
        for (position, trigger) in home.triggers.enumerated() {
            kept.insert(trigger.id)
            guard let (oldPosition, oldTrigger) = before[trigger.id] else {
                try insert(trigger, of: home.id, position: position, db)
                continue
            }
            if oldTrigger == trigger {
                if oldPosition != position {
                    try TriggerRecord.filter(key: trigger.id.rawValue)
                        .updateAll(db, Column("position").set(to: position))
                }
                continue
            }
            try TriggerRecord.deleteOne(db, key: trigger.id.rawValue)
            try insert(trigger, of: home.id, position: position, db)
        }
        for trigger in old.triggers where !kept.contains(trigger.id) {
            try TriggerRecord.deleteOne(db, key: trigger.id.rawValue)
        }
    }

    /// Inserts `trigger`'s rows: the automation and its action sets.
    static func insert(_ trigger: Trigger, of homeID: HomeID, position: Int, _ db: Database) throws {
        var record = TriggerRecord(
            id: trigger.id, homeID: homeID, name: trigger.name, position: position,
            isEnabled: trigger.isEnabled, executeOnce: trigger.options.executeOnce,
            turnBackAfter: trigger.options.turnBackAfter.map { Int($0.components.seconds) },
            catchUpGrace: trigger.options.catchUpGrace.map { Int($0.components.seconds) })
        switch trigger.event {
        case .characteristic(let key, let value):
            record.accessoryID = key.accessory
            record.serviceID = key.service
            record.characteristicType = key.characteristic
            record.value = value
        case .threshold(let key, let range):
            record.threshold = ThresholdJSON(key, range)
        case .schedule(let schedule):
            record.schedule = ScheduleJSON(schedule)
        }
        if !trigger.conditions.isEmpty { record.conditions = trigger.conditions.map(ConditionJSON.init) }
        try record.insert(db)
        for (actionSetIndex, actionSet) in trigger.actionSets.enumerated() {
            try TriggerActionSetRecord(triggerID: trigger.id, position: actionSetIndex, actionSetID: actionSet).insert(
                db)
        }
    }
}
