import Schedules

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
        return try checked(value, of: characteristic, accessory: accessory)
    }

    mutating func addActionSet(
        named name: String, actions requests: [ActionRequest], home h: Int, events: inout [HomeEvent]
    ) throws(HomeError) -> ActionSet {
        try Self.checkName(name, in: homes[h])
        var actions: [Action] = []
        for request in requests {
            let (accessory, service, characteristic) = try Self.resolve(request.target, in: homes[h])
            let value = try Self.writable(request.value, to: characteristic, of: accessory)
            let key = ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type)
            if actions.contains(where: { $0.key == key }) {
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
        let actionSet = homes[h].actionSets.remove(at: try Self.actionSetIndex(name, in: homes[h]))
        events.append(.didRemoveActionSet(home: homes[h].id, actionSet: actionSet.id, name: actionSet.name))
        for t in homes[h].triggers.indices where homes[h].triggers[t].actionSets.contains(actionSet.id) {
            homes[h].triggers[t].actionSets.removeAll { $0 == actionSet.id }
            events.append(.didUpdateTrigger(home: homes[h].id, trigger: homes[h].triggers[t].id, change: .actionSets))
        }
    }

    // MARK: Automations

    /// Adds the automation `definition` describes (an `addTrigger`, `addRangeTrigger` or
    /// `addScheduleTrigger` edit), named `name`: its event, options, conditions and action sets are
    /// checked before anything changes.
    mutating func addTrigger(named name: String, as definition: HomeEdit, home h: Int, events: inout [HomeEvent])
        throws(HomeError) -> Trigger
    {
        try Self.checkName(name, in: homes[h])
        let event: TriggerEvent
        let actionSets: [String]
        let options: TriggerOptions
        let conditions: [ConditionRequest]
        switch definition {
        case .addTrigger(_, _, let reference, let value, let names, let given, let requests):
            let (accessory, service, characteristic) = try Self.eventCharacteristic(reference, in: homes[h])
            event = .characteristic(
                ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type),
                value: try value.map { value throws(HomeError) in
                    try Self.checked(value, of: characteristic, accessory: accessory)
                })
            (actionSets, options, conditions) = (names, given, requests)
        case .addRangeTrigger(_, _, let reference, let range, let names, let given, let requests):
            event = try Self.threshold(reference, range: range, in: homes[h])
            (actionSets, options, conditions) = (names, given, requests)
        case .addScheduleTrigger(_, _, let schedule, let names, let given, let requests):
            do { try schedule.validate() } catch { throw error.homeError }
            if schedule.needsPlace { try Self.requireLocation(homes[h]) }
            event = .schedule(schedule)
            (actionSets, options, conditions) = (names, given, requests)
        default:
            throw HomeError(.invalidParameter, "An automation is defined by an event and its action sets.")
        }
        try options.validate()
        let trigger = Trigger(
            id: .random(), name: name, isEnabled: true, event: event,
            actionSets: try Self.actionSetIDs(actionSets, in: homes[h]), options: options,
            conditions: try conditions.map { request throws(HomeError) in try Self.condition(request, in: homes[h]) })
        homes[h].triggers.append(trigger)
        events.append(.didAddTrigger(home: homes[h].id, trigger: trigger.id, name: name))
        return trigger
    }

    /// A value an event or a condition compares with, checked against the characteristic's metadata.
    private static func checked(_ value: CharacteristicValue, of characteristic: Characteristic, accessory: Accessory)
        throws(HomeError) -> CharacteristicValue
    {
        do {
            return try characteristic.metadata.validate(value)
        } catch {
            throw HomeError(error.code, "\(characteristic.type) of '\(accessory.name)': \(error.message)")
        }
    }

    /// A threshold event: a numeric characteristic that reports its changes and can be read.
    private static func threshold(_ reference: CharacteristicReference, range: ThresholdRange, in home: Home)
        throws(HomeError) -> TriggerEvent
    {
        let (accessory, service, characteristic) = try eventCharacteristic(reference, in: home)
        guard characteristic.metadata.isNumeric else {
            throw HomeError(
                .invalidRange,
                "\(characteristic.type) of '\(accessory.name)' is \(characteristic.metadata.format), not a number: it has no range to enter."
            )
        }
        try requireReadable(characteristic, of: accessory)
        return .threshold(
            ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type), range)
    }

    /// A condition by ids: its characteristic readable, an order only on a number, the value in the
    /// characteristic's format; a sun window only in a home with a location.
    private static func condition(_ request: ConditionRequest, in home: Home) throws(HomeError) -> TriggerCondition {
        switch request {
        case .characteristic(let reference, let comparison, let value):
            let (accessory, service, characteristic) = try resolve(reference, in: home)
            try requireReadable(characteristic, of: accessory)
            if comparison.isOrder, !characteristic.metadata.isNumeric {
                throw HomeError(
                    .invalidCondition,
                    "\(characteristic.type) of '\(accessory.name)' is \(characteristic.metadata.format), not a number: it can be compared with = or != only."
                )
            }
            return .characteristic(
                ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type), comparison,
                try checked(value, of: characteristic, accessory: accessory))
        case .time(let window):
            if window.needsPlace { try requireLocation(home) }
            return .time(window)
        }
    }

    private static func requireReadable(_ characteristic: Characteristic, of accessory: Accessory) throws(HomeError) {
        guard characteristic.metadata.permissions.contains(.read) else {
            throw HomeError(
                .writeOnlyCharacteristic,
                "\(characteristic.type) of '\(accessory.name)' cannot be read, so the hub never knows its value."
            )
        }
    }

    /// A sun event or window needs the home's place: an automation that could never fire (or
    /// whose window could never be judged) is refused rather than kept silent.
    private static func requireLocation(_ home: Home) throws(HomeError) {
        guard home.location == nil else { return }
        throw HomeError(
            .locationRequired,
            "'\(home.name)' has no location, so its sunrise and sunset are unknown: set the home's location first.")
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

    /// Gives the automation `name` the event, action sets, options and conditions of `definition`,
    /// checked by adding them as a new automation to a copy of the graph without it: what a new
    /// automation may not be, it may not become.
    mutating func updateTrigger(_ name: String, as definition: HomeEdit, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let t = try Self.triggerIndex(name, in: homes[h])
        var scratch = self
        let current = scratch.homes[h].triggers.remove(at: t)
        var ignored: [HomeEvent] = []
        let made = try scratch.addTrigger(named: current.name, as: definition, home: h, events: &ignored)
        guard
            made.event != current.event || made.actionSets != current.actionSets || made.options != current.options
                || made.conditions != current.conditions
        else { return }
        homes[h].triggers[t].event = made.event
        homes[h].triggers[t].actionSets = made.actionSets
        homes[h].triggers[t].options = made.options
        homes[h].triggers[t].conditions = made.conditions
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

    mutating func enableTrigger(_ name: String, enabled: Bool, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let t = try Self.triggerIndex(name, in: homes[h])
        guard homes[h].triggers[t].isEnabled != enabled else { return }
        homes[h].triggers[t].isEnabled = enabled
        events.append(.didUpdateTrigger(home: homes[h].id, trigger: homes[h].triggers[t].id, change: .enabled))
    }
}
