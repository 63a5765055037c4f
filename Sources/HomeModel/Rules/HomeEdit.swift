/// A change to the homes' layout, as an account asks for it: what ``HomeManager/edit(_:account:)``
/// checks and commits. Every object is named as people name it (``HomeName/matches(_:_:)``); every
/// edit but ``addHome(name:)`` needs the account to be an administrator of `home`.
package enum HomeEdit: Sendable, Equatable {
    /// Adds a home; the account becomes its administrator, shown as `userName` (else the account).
    /// The first home becomes the primary home. Only the accounts ``HomeManager/homeCreators``
    /// allows may add one; the others get `insufficientPrivileges`, whatever the name.
    case addHome(name: String, userName: String? = nil)
    /// Removes a home. Its accessories return to the browser.
    case removeHome(home: String)
    case renameHome(home: String, name: String)
    case setPrimaryHome(home: String)
    case addRoom(home: String, name: String)
    /// Removes a room; its accessories move to the default room and it leaves every zone. The
    /// default room cannot be removed.
    case removeRoom(home: String, room: String)
    case renameRoom(home: String, room: String, name: String)
    case addZone(home: String, name: String)
    case removeZone(home: String, zone: String)
    case renameZone(home: String, zone: String, name: String)
    case addRoomToZone(home: String, room: String, zone: String)
    case removeRoomFromZone(home: String, room: String, zone: String)
    /// Takes an accessory from the browser into the home; a bridge brings its bridged accessories.
    /// It lands in `room` (the default room when nil); `name` overrides the name its driver gave.
    case addAccessory(home: String, id: AccessoryID, room: String? = nil, name: String? = nil)
    /// Removes an accessory and drops the actions that wrote to it. A bridged accessory cannot be
    /// removed alone; removing its bridge removes it too. What is removed returns to the browser.
    case removeAccessory(home: String, accessory: String)
    case renameAccessory(home: String, accessory: String, name: String)
    /// Moves an accessory to a room (``HomeName/defaultRoom`` for the default room). A bridge moves
    /// alone: its bridged accessories stay where they are.
    case assignAccessory(home: String, accessory: String, room: String)
    /// Adds an action set. Every action must name a writable characteristic and a value its metadata
    /// accepts.
    case addActionSet(home: String, name: String, actions: [ActionRequest])
    case removeActionSet(home: String, actionSet: String)
    case renameActionSet(home: String, actionSet: String, name: String)
    /// Adds an automation: when `characteristic` (one that notifies) takes `value`, or changes at all
    /// when `value` is nil, the hub runs `actionSets` in order. A press is a `ProgrammableSwitchEvent`
    /// with its value (0 single, 1 double, 2 long). `options` say what it does after a firing;
    /// `conditions` what must hold when its event fires (every form of automation takes them).
    case addTrigger(
        home: String, name: String, characteristic: CharacteristicReference, value: CharacteristicValue?,
        actionSets: [String], options: TriggerOptions = TriggerOptions(), conditions: [ConditionRequest] = [])
    /// Adds an automation that runs `actionSets` in order when the numeric `characteristic` (one
    /// that notifies and can be read) crosses into `range` from outside it.
    case addRangeTrigger(
        home: String, name: String, characteristic: CharacteristicReference, range: ThresholdRange,
        actionSets: [String], options: TriggerOptions = TriggerOptions(), conditions: [ConditionRequest] = [])
    /// Adds an automation that runs `actionSets` in order when `schedule` comes due, in the home's
    /// time zone; a sun event needs the home's location.
    case addScheduleTrigger(
        home: String, name: String, schedule: TriggerSchedule, actionSets: [String],
        options: TriggerOptions = TriggerOptions(), conditions: [ConditionRequest] = [])
    /// Sets where the home is (nil clears it): the time zone its schedules keep, the place its
    /// sunrise and sunset are computed for.
    case setLocation(home: String, location: HomeLocation?)
    case removeTrigger(home: String, trigger: String)
    /// Defines the automation `trigger` anew: its event, action sets, options and conditions become
    /// those of `definition` (an ``addTrigger(home:name:characteristic:value:actionSets:options:conditions:)``,
    /// ``addRangeTrigger(home:name:characteristic:range:actionSets:options:conditions:)`` or
    /// ``addScheduleTrigger(home:name:schedule:actionSets:options:conditions:)``, whose name is not used), checked
    /// as for a new automation; it keeps its name, its identity and whether it is on.
    indirect case updateTrigger(home: String, trigger: String, definition: HomeEdit)
    case renameTrigger(home: String, trigger: String, name: String)
    /// Turns an automation on or off; one that is off is kept but never fires.
    case enableTrigger(home: String, trigger: String, enabled: Bool)
    /// Adds `account` to the home as a guest shown as `name`.
    case addUser(home: String, account: String, name: String)
    /// Removes the user shown as `user`; the administrator cannot be removed.
    case removeUser(home: String, user: String)
    /// Removes the user with this id: what the web page's form sends (it shows no accounts), since a
    /// display name stored by an older version may hold characters no form carries back unchanged
    /// (a newline, NUL).
    case removeMember(home: String, id: UserID)

    /// The home the edit is about (the new home's name for ``addHome(name:userName:)``).
    package var home: String {
        switch self {
        case .addHome(let home, _), .removeHome(let home), .renameHome(let home, _), .setPrimaryHome(let home),
            .addRoom(let home, _), .removeRoom(let home, _), .renameRoom(let home, _, _), .addZone(let home, _),
            .removeZone(let home, _), .renameZone(let home, _, _), .addRoomToZone(let home, _, _),
            .removeRoomFromZone(let home, _, _), .addAccessory(let home, _, _, _), .removeAccessory(let home, _),
            .renameAccessory(let home, _, _), .assignAccessory(let home, _, _), .addActionSet(let home, _, _),
            .removeActionSet(let home, _), .renameActionSet(let home, _, _), .addTrigger(let home, _, _, _, _, _, _),
            .addScheduleTrigger(let home, _, _, _, _, _), .addRangeTrigger(let home, _, _, _, _, _, _),
            .setLocation(let home, _), .removeTrigger(let home, _),
            .updateTrigger(let home, _, _),
            .renameTrigger(let home, _, _), .enableTrigger(let home, _, _),
            .addUser(let home, _, _),
            .removeUser(let home, _), .removeMember(let home, _):
            home
        }
    }
}

/// What an edit left behind, for the manager's bookkeeping beyond the graph.
enum HomeEditOutcome {
    /// It added an object by this name.
    case added(String)
    /// It took these accessories out of a home: they go back to the browser.
    case removed([Accessory])
    case changed
}

extension HomeGraph {
    /// Applies `edit` as `account`, appending its events: the account's role is checked here, for
    /// every edit, before anything else (a refused edit changes nothing). `found` is the accessory of an ``HomeEdit/addAccessory(home:id:room:name:)`` with, for
    /// a bridge, its bridged accessories, as the browser has them; `gone` the accessories of the edit
    /// that no driver reports any more (a bridged one its bridge no longer lists may be removed alone).
    mutating func apply(
        _ edit: HomeEdit, account: String, creators: HomeCreators, found: [Accessory], gone: Set<AccessoryID> = [],
        events: inout [HomeEvent]
    ) throws(HomeError) -> HomeEditOutcome {
        if case .addHome(let name, let userName) = edit {
            let home = try addHome(
                named: name, account: account, userName: userName, creators: creators, events: &events)
            return .added(home.name)
        }
        let h = try homeIndex(edit.home, account: account, .administrator)
        switch edit {
        case .addHome: break
        case .removeHome: return .removed(removeHome(home: h, events: &events))
        case .renameHome(_, let name): try renameHome(home: h, to: name, events: &events)
        case .setPrimaryHome: setPrimaryHome(home: h, events: &events)
        case .addRoom(_, let name): return .added(try addRoom(named: name, home: h, events: &events).name)
        case .removeRoom(_, let room): try removeRoom(room, home: h, events: &events)
        case .renameRoom(_, let room, let name): try renameRoom(room, to: name, home: h, events: &events)
        case .addZone(_, let name): return .added(try addZone(named: name, home: h, events: &events).name)
        case .removeZone(_, let zone): try removeZone(zone, home: h, events: &events)
        case .renameZone(_, let zone, let name):
            try rename(\.zones, try Self.zoneIndex(zone, in: homes[h]), to: name, home: h, events: &events) {
                .didUpdateNameForZone(home: $0, zone: $1, oldName: $2, name: name)
            }
        case .addRoomToZone(_, let room, let zone): try addRoom(room, toZone: zone, home: h, events: &events)
        case .removeRoomFromZone(_, let room, let zone): try removeRoom(room, fromZone: zone, home: h, events: &events)
        case .addAccessory(_, _, let room, let name):
            return .added(try addAccessory(found, home: h, room: room, name: name, events: &events).name)
        case .removeAccessory(_, let accessory):
            return .removed(try removeAccessory(accessory, home: h, gone: gone, events: &events))
        case .renameAccessory(_, let accessory, let name):
            try rename(
                \.accessories, try Self.accessoryIndex(accessory, in: homes[h]), to: name, home: h, events: &events
            ) {
                .didUpdateNameForAccessory(home: $0, accessory: $1, oldName: $2, name: name)
            }
        case .assignAccessory(_, let accessory, let room):
            try assignAccessory(accessory, toRoom: room, home: h, events: &events)
        case .addActionSet(_, let name, let actions):
            return .added(try addActionSet(named: name, actions: actions, home: h, events: &events).name)
        case .removeActionSet(_, let actionSet): try removeActionSet(actionSet, home: h, events: &events)
        case .renameActionSet(_, let actionSet, let name):
            try rename(
                \.actionSets, try Self.actionSetIndex(actionSet, in: homes[h]), to: name, home: h, events: &events
            ) {
                .didUpdateNameForActionSet(home: $0, actionSet: $1, oldName: $2, name: name)
            }
        case .addTrigger(_, let name, _, _, _, _, _), .addRangeTrigger(_, let name, _, _, _, _, _),
            .addScheduleTrigger(_, let name, _, _, _, _):
            return .added(try addTrigger(named: name, as: edit, home: h, events: &events).name)
        case .setLocation(_, let location): setLocation(location, home: h, events: &events)
        case .removeTrigger(_, let trigger): try removeTrigger(trigger, home: h, events: &events)
        case .updateTrigger(_, let trigger, let definition):
            try updateTrigger(trigger, as: definition, home: h, events: &events)
        case .renameTrigger(_, let trigger, let name):
            try rename(\.triggers, try Self.triggerIndex(trigger, in: homes[h]), to: name, home: h, events: &events) {
                .didUpdateNameForTrigger(home: $0, trigger: $1, oldName: $2, name: name)
            }
        case .enableTrigger(_, let trigger, let enabled):
            try enableTrigger(trigger, enabled: enabled, home: h, events: &events)
        case .addUser(_, let member, let name):
            return .added(try addUser(account: member, name: name, home: h, events: &events).name)
        case .removeUser(_, let user): try removeUser(named: user, home: h, events: &events)
        case .removeMember(_, let id): try removeUser(id: id, home: h, events: &events)
        }
        return .changed
    }
}
