/// The rules of action sets and automations: what they write checked against the characteristics'
/// metadata.
extension HomeGraph {
    // MARK: Action sets

    /// Resolves a characteristic named by a request, for an action or a write.
    static func resolve(_ reference: CharacteristicReference, in home: Home) throws(HomeError)
        -> (accessory: Accessory, service: Service, characteristic: Characteristic)
    {
        let accessory = try home.accessory(named: reference.accessory)
        let service = try accessory.service(named: reference.service)
        guard let characteristic = service.characteristic(reference.characteristic) else {
            throw HomeError(
                .notFound,
                "The service '\(service.name)' of '\(accessory.name)' has no characteristic \(reference.characteristic)."
            )
        }
        return (accessory, service, characteristic)
    }

    /// Checks that a value may be written to a characteristic and returns it in the characteristic's format.
    static func writable(_ value: CharacteristicValue, to characteristic: Characteristic, of accessory: Accessory)
        throws(HomeError) -> CharacteristicValue
    {
        guard characteristic.metadata.permissions.contains(.write) else {
            throw HomeError(
                .readOnlyCharacteristic, "\(characteristic.type) of '\(accessory.name)' is read-only.")
        }
        do {
            return try characteristic.metadata.validate(value)
        } catch {
            throw HomeError(error.code, "\(characteristic.type) of '\(accessory.name)': \(error.message)")
        }
    }

    mutating func addActionSet(
        named name: String, actions requests: [ActionRequest], home h: Int, events: inout [HomeEvent]
    ) throws(HomeError) -> ActionSet {
        try Self.checkName(name, in: homes[h])
        var actions: [Action] = []
        for request in requests {
            let (accessory, service, characteristic) = try Self.resolve(request.target, in: homes[h])
            let value = try Self.writable(request.value, to: characteristic, of: accessory)
            if actions.contains(where: {
                $0.accessory == accessory.id && $0.service == service.id && $0.characteristic == characteristic.type
            }) {
                throw HomeError(
                    .invalidParameter,
                    "The action set writes \(characteristic.type) of '\(accessory.name)' more than once.")
            }
            actions.append(
                Action(accessory: accessory.id, service: service.id, characteristic: characteristic.type, value: value))
        }
        let actionSet = ActionSet(id: .random(), name: name, actions: actions)
        homes[h].actionSets.append(actionSet)
        events.append(.didAddActionSet(home: homes[h].id, actionSet: actionSet.id, name: name))
        return actionSet
    }

    mutating func removeActionSet(_ name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let s = try Self.actionSetIndex(name, in: homes[h])
        let actionSet = homes[h].actionSets.remove(at: s)
        events.append(.didRemoveActionSet(home: homes[h].id, actionSet: actionSet.id, name: actionSet.name))
        for t in homes[h].triggers.indices where homes[h].triggers[t].actionSets.contains(actionSet.id) {
            homes[h].triggers[t].actionSets.removeAll { $0 == actionSet.id }
            events.append(.didUpdateTrigger(home: homes[h].id, trigger: homes[h].triggers[t].id, change: .actionSets))
        }
    }

    mutating func renameActionSet(
        _ name: String, to newName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        let s = try Self.actionSetIndex(name, in: homes[h])
        let actionSet = homes[h].actionSets[s]
        try Self.checkName(newName, in: homes[h], except: actionSet.id.rawValue)
        guard actionSet.name != newName else { return }
        homes[h].actionSets[s].name = newName
        events.append(
            .didUpdateNameForActionSet(
                home: homes[h].id, actionSet: actionSet.id, oldName: actionSet.name, name: newName))
    }

    // MARK: Automations

    mutating func addTrigger(
        named name: String, characteristic reference: CharacteristicReference, value: CharacteristicValue?,
        actionSets names: [String], options: TriggerOptions = TriggerOptions(), home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) -> Trigger {
        try Self.checkName(name, in: homes[h])
        try options.validate()
        let (accessory, service, characteristic) = try Self.eventCharacteristic(reference, in: homes[h])
        var checkedValue: CharacteristicValue?
        if let value {
            do {
                checkedValue = try characteristic.metadata.validate(value)
            } catch {
                throw HomeError(error.code, "\(characteristic.type) of '\(accessory.name)': \(error.message)")
            }
        }
        let trigger = Trigger(
            id: .random(), name: name, isEnabled: true,
            event: .characteristic(
                ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type),
                value: checkedValue),
            actionSets: try Self.actionSetIDs(names, in: homes[h]), options: options)
        homes[h].triggers.append(trigger)
        events.append(.didAddTrigger(home: homes[h].id, trigger: trigger.id, name: name))
        return trigger
    }

    /// Adds an automation that fires when a numeric characteristic crosses into `range`.
    mutating func addRangeTrigger(
        named name: String, characteristic reference: CharacteristicReference, range: ThresholdRange,
        actionSets names: [String], options: TriggerOptions = TriggerOptions(), home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) -> Trigger {
        try Self.checkName(name, in: homes[h])
        try options.validate()
        let (accessory, service, characteristic) = try Self.eventCharacteristic(reference, in: homes[h])
        guard characteristic.metadata.isNumeric else {
            throw HomeError(
                .invalidRange,
                "\(characteristic.type) of '\(accessory.name)' is \(characteristic.metadata.format), not a number: it has no range to enter."
            )
        }
        guard characteristic.metadata.permissions.contains(.read) else {
            throw HomeError(
                .writeOnlyCharacteristic,
                "\(characteristic.type) of '\(accessory.name)' cannot be read, so its value is never known to be outside the range."
            )
        }
        let trigger = Trigger(
            id: .random(), name: name, isEnabled: true,
            event: .threshold(
                ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type), range),
            actionSets: try Self.actionSetIDs(names, in: homes[h]), options: options)
        homes[h].triggers.append(trigger)
        events.append(.didAddTrigger(home: homes[h].id, trigger: trigger.id, name: name))
        return trigger
    }

    /// The characteristic an event names: it must report its changes (`notify`), or nothing would
    /// ever set the automation off.
    private static func eventCharacteristic(_ reference: CharacteristicReference, in home: Home) throws(HomeError)
        -> (accessory: Accessory, service: Service, characteristic: Characteristic)
    {
        let (accessory, service, characteristic) = try resolve(reference, in: home)
        guard characteristic.metadata.permissions.contains(.notify) else {
            throw HomeError(
                .invalidParameter,
                "\(characteristic.type) of '\(accessory.name)' does not report its changes, so it cannot start an automation."
            )
        }
        return (accessory, service, characteristic)
    }

    /// Adds an automation that fires on `schedule`. A sun event needs the home's location first: an
    /// automation that could never fire is refused rather than kept silent.
    mutating func addScheduleTrigger(
        named name: String, schedule: TriggerSchedule, actionSets names: [String],
        options: TriggerOptions = TriggerOptions(), home h: Int, events: inout [HomeEvent]
    ) throws(HomeError) -> Trigger {
        try Self.checkName(name, in: homes[h])
        try options.validate()
        do { try schedule.validate() } catch { throw error.homeError }
        if schedule.needsPlace, homes[h].location == nil {
            throw HomeError(
                .locationRequired,
                "'\(homes[h].name)' has no location, so its sunrise and sunset are unknown: set the home's location first."
            )
        }
        let trigger = Trigger(
            id: .random(), name: name, isEnabled: true, event: .schedule(schedule),
            actionSets: try Self.actionSetIDs(names, in: homes[h]), options: options)
        homes[h].triggers.append(trigger)
        events.append(.didAddTrigger(home: homes[h].id, trigger: trigger.id, name: name))
        return trigger
    }

    /// Gives the automation `name` the event, action sets and options of `definition`, checked by
    /// adding them as a new automation to a copy of the graph without it: what a new automation may
    /// not be, it may not become.
    mutating func updateTrigger(_ name: String, as definition: HomeEdit, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let t = try Self.triggerIndex(name, in: homes[h])
        var scratch = self
        let current = scratch.homes[h].triggers.remove(at: t)
        var ignored: [HomeEvent] = []
        let made: Trigger
        switch definition {
        case .addTrigger(_, _, let characteristic, let value, let actionSets, let options):
            made = try scratch.addTrigger(
                named: current.name, characteristic: characteristic, value: value, actionSets: actionSets,
                options: options, home: h, events: &ignored)
        case .addRangeTrigger(_, _, let characteristic, let range, let actionSets, let options):
            made = try scratch.addRangeTrigger(
                named: current.name, characteristic: characteristic, range: range, actionSets: actionSets,
                options: options, home: h, events: &ignored)
        case .addScheduleTrigger(_, _, let schedule, let actionSets, let options):
            made = try scratch.addScheduleTrigger(
                named: current.name, schedule: schedule, actionSets: actionSets, options: options, home: h,
                events: &ignored)
        default:
            throw HomeError(.invalidParameter, "An automation is defined by an event and its action sets.")
        }
        guard made.event != current.event || made.actionSets != current.actionSets || made.options != current.options
        else { return }
        homes[h].triggers[t].event = made.event
        homes[h].triggers[t].actionSets = made.actionSets
        homes[h].triggers[t].options = made.options
        events.append(.didUpdateTrigger(home: homes[h].id, trigger: current.id, change: .definition))
    }

    /// Sets (or, with nil, clears) where the home is: its schedules' time zone and its sun events.
    mutating func setLocation(_ location: HomeLocation?, home h: Int, events: inout [HomeEvent]) {
        guard homes[h].location != location else { return }
        homes[h].location = location
        events.append(.didUpdateLocationForHome(home: homes[h].id))
    }

    /// The action sets an automation runs, by name: at least one, none twice.
    private static func actionSetIDs(_ names: [String], in home: Home) throws(HomeError) -> [ActionSetID] {
        guard !names.isEmpty else {
            throw HomeError(.missingParameter, "An automation runs at least one action set.")
        }
        var actionSets: [ActionSetID] = []
        for actionSetName in names {
            let actionSet = home.actionSets[try Self.actionSetIndex(actionSetName, in: home)]
            guard !actionSets.contains(actionSet.id) else {
                throw HomeError(.invalidParameter, "The automation runs '\(actionSet.name)' more than once.")
            }
            actionSets.append(actionSet.id)
        }
        return actionSets
    }

    mutating func removeTrigger(_ name: String, home h: Int, events: inout [HomeEvent]) throws(HomeError) {
        let trigger = homes[h].triggers.remove(at: try Self.triggerIndex(name, in: homes[h]))
        events.append(.didRemoveTrigger(home: homes[h].id, trigger: trigger.id, name: trigger.name))
    }

    mutating func renameTrigger(_ name: String, to newName: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let t = try Self.triggerIndex(name, in: homes[h])
        let trigger = homes[h].triggers[t]
        try Self.checkName(newName, in: homes[h], except: trigger.id.rawValue)
        guard trigger.name != newName else { return }
        homes[h].triggers[t].name = newName
        events.append(
            .didUpdateNameForTrigger(home: homes[h].id, trigger: trigger.id, oldName: trigger.name, name: newName))
    }

    mutating func enableTrigger(_ name: String, enabled: Bool, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let t = try Self.triggerIndex(name, in: homes[h])
        guard homes[h].triggers[t].isEnabled != enabled else { return }
        homes[h].triggers[t].isEnabled = enabled
        events.append(.didUpdateTrigger(home: homes[h].id, trigger: homes[h].triggers[t].id, change: .enabled))
    }
}
