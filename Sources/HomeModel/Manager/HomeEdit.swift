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
    /// Adds `account` to the home as a guest shown as `name`.
    case addUser(home: String, account: String, name: String)
    /// Removes the user shown as `user`; the administrator cannot be removed.
    case removeUser(home: String, user: String)

    /// The home the edit is about (the new home's name for ``addHome(name:userName:)``).
    package var home: String {
        switch self {
        case .addHome(let home, _), .removeHome(let home), .renameHome(let home, _), .setPrimaryHome(let home),
            .addRoom(let home, _), .removeRoom(let home, _), .renameRoom(let home, _, _), .addZone(let home, _),
            .removeZone(let home, _), .renameZone(let home, _, _), .addRoomToZone(let home, _, _),
            .removeRoomFromZone(let home, _, _), .addAccessory(let home, _, _, _), .removeAccessory(let home, _),
            .renameAccessory(let home, _, _), .assignAccessory(let home, _, _), .addActionSet(let home, _, _),
            .removeActionSet(let home, _), .renameActionSet(let home, _, _), .addUser(let home, _, _),
            .removeUser(let home, _):
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
    /// Applies `edit` as `account` (checks first, so a refused edit changes nothing), appending its
    /// events. `found` is the accessory of an ``HomeEdit/addAccessory(home:id:room:name:)`` with, for
    /// a bridge, its bridged accessories, as the browser has them.
    mutating func apply(
        _ edit: HomeEdit, account: String, creators: HomeCreators, found: [Accessory],
        events: inout [HomeEvent]
    ) throws(HomeError) -> HomeEditOutcome {
        switch edit {
        case .addHome(let name, let userName):
            let home = try addHome(
                named: name, account: account, userName: userName, creators: creators, events: &events)
            return .added(home.name)
        case .removeHome(let home):
            return .removed(try removeHome(home, account: account, events: &events))
        case .renameHome(let home, let name):
            try renameHome(home, to: name, account: account, events: &events)
        case .setPrimaryHome(let home):
            try setPrimaryHome(home, account: account, events: &events)
        case .addRoom(let home, let name):
            return .added(try addRoom(named: name, home: home, account: account, events: &events).name)
        case .removeRoom(let home, let room):
            try removeRoom(room, home: home, account: account, events: &events)
        case .renameRoom(let home, let room, let name):
            try renameRoom(room, to: name, home: home, account: account, events: &events)
        case .addZone(let home, let name):
            return .added(try addZone(named: name, home: home, account: account, events: &events).name)
        case .removeZone(let home, let zone):
            try removeZone(zone, home: home, account: account, events: &events)
        case .renameZone(let home, let zone, let name):
            try renameZone(zone, to: name, home: home, account: account, events: &events)
        case .addRoomToZone(let home, let room, let zone):
            try addRoom(room, toZone: zone, home: home, account: account, events: &events)
        case .removeRoomFromZone(let home, let room, let zone):
            try removeRoom(room, fromZone: zone, home: home, account: account, events: &events)
        case .addAccessory(let home, _, let room, let name):
            let added = try addAccessory(found, home: home, room: room, name: name, account: account, events: &events)
            return .added(added.name)
        case .removeAccessory(let home, let accessory):
            return .removed(try removeAccessory(accessory, home: home, account: account, events: &events))
        case .renameAccessory(let home, let accessory, let name):
            try renameAccessory(accessory, to: name, home: home, account: account, events: &events)
        case .assignAccessory(let home, let accessory, let room):
            try assignAccessory(accessory, toRoom: room, home: home, account: account, events: &events)
        case .addActionSet(let home, let name, let actions):
            let actionSet = try addActionSet(
                named: name, actions: actions, home: home, account: account, events: &events)
            return .added(actionSet.name)
        case .removeActionSet(let home, let actionSet):
            try removeActionSet(actionSet, home: home, account: account, events: &events)
        case .renameActionSet(let home, let actionSet, let name):
            try renameActionSet(actionSet, to: name, home: home, account: account, events: &events)
        case .addUser(let home, let member, let name):
            return .added(try addUser(account: member, name: name, home: home, account: account, events: &events).name)
        case .removeUser(let home, let user):
            try removeUser(named: user, home: home, account: account, events: &events)
        }
        return .changed
    }
}
