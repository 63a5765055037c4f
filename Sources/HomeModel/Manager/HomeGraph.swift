import Synchronization

/// The whole home database as one value, and every rule of the model as a mutation of it.
///
/// Each mutation checks the acting account's role first, then the naming, default-room, bridge and
/// zone rules, and either throws (leaving the value untouched, because the caller mutates a copy) or
/// changes the value and appends the HomeKit delegate messages the change causes. ``HomeManager``
/// persists the result and only then publishes it.
struct HomeGraph: Sendable, Hashable {
    var homes: [Home] = []
    var primaryHome: HomeID?
    /// Counts the changes of which accessory sits where (added, removed, a home removed), so that
    /// ``locate(_:)`` can trust its index until the next one. Not part of the graph's value.
    private var placement = 0
    private let index = LocationIndex()

    static func == (lhs: HomeGraph, rhs: HomeGraph) -> Bool {
        lhs.homes == rhs.homes && lhs.primaryHome == rhs.primaryHome
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(homes)
        hasher.combine(primaryHome)
    }

    /// What an operation needs the account to be.
    enum Privilege {
        /// Administrator or guest: identify, read, write, observe, execute action sets.
        case member
        /// Administrator only: the layout and the users.
        case administrator
    }

    // MARK: Lookup

    /// The index of the home named `name`, after checking that `account` holds `privilege` in it.
    func homeIndex(_ name: String, account: String, _ privilege: Privilege) throws(HomeError) -> Int {
        guard let index = homes.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "There is no home named '\(name)'.")
        }
        try Self.check(account, privilege, in: homes[index])
        return index
    }

    static func check(_ account: String, _ privilege: Privilege, in home: Home) throws(HomeError) {
        guard let user = home.users.first(where: { $0.account == account }) else {
            throw HomeError(.insufficientPrivileges, "'\(account)' is not a member of the home '\(home.name)'.")
        }
        if privilege == .administrator && !user.role.mayChangeLayout {
            throw HomeError(
                .insufficientPrivileges,
                "'\(account)' is a guest of the home '\(home.name)'; only its administrator may change it."
            )
        }
    }

    func role(of account: String, in home: Home) -> Role? {
        home.users.first { $0.account == account }?.role
    }

    /// Where an accessory is, in whichever home holds it.
    /// Where `accessory` is: every value a device reports and every request looks it up, so an index
    /// answers, rebuilt after each change of placement (a search per lookup made a start with 10,000
    /// accessories quadratic).
    func locate(_ accessory: AccessoryID) -> (home: Int, accessory: Int)? {
        index.locate(accessory, placement: placement, in: homes)
    }

    /// Notes that accessories were removed, or homes: the index is rebuilt.
    mutating func placementChanged() { placement &+= 1 }

    /// Notes accessories appended to home `h` from position `start`: the index takes them in place of
    /// a rebuild (building a home adds its accessories one by one).
    mutating func accessoriesAppended(home h: Int, from start: Int) {
        let previous = placement
        placement &+= 1
        index.append(homes[h].accessories[start...].map(\.id), home: h, from: start, after: previous, now: placement)
    }

    // MARK: Homes

    mutating func addHome(
        named name: String, account: String, userName: String?, creators: HomeCreators, events: inout [HomeEvent]
    ) throws(HomeError) -> Home {
        // Checked first, so that an account that may not create homes learns nothing about the
        // homes there are (not even whether a name is taken).
        guard creators.allow(account, homes: homes) else {
            throw HomeError(
                .insufficientPrivileges,
                "'\(account)' may not add homes; the hub's owner names who may (homes.creators).")
        }
        try AccountName.validate(account)
        try HomeName.validate(name)
        if let other = homes.first(where: { HomeName.matches($0.name, name) }) {
            throw HomeError(.homeWithSimilarNameExists, "A home named '\(other.name)' already exists.")
        }
        let home = Home(
            id: .random(),
            name: name,
            isPrimary: homes.isEmpty,
            defaultRoom: Room(id: .random(), name: HomeName.defaultRoom, isDefault: true),
            rooms: [],
            zones: [],
            accessories: [],
            actionSets: [],
            users: [User(id: .random(), name: userName ?? account, role: .administrator, account: account)]
        )
        homes.append(home)
        events.append(.didAddHome(home: home.id, name: name))
        if home.isPrimary {
            primaryHome = home.id
            events.append(.didUpdatePrimaryHome(home: home.id))
        }
        return home
    }

    /// Removes a home; returns its accessories, which go back to the browser.
    mutating func removeHome(home index: Int, events: inout [HomeEvent]) throws(HomeError)
        -> [Accessory]
    {
        let home = homes.remove(at: index)
        placementChanged()
        events.append(.didRemoveHome(home: home.id, name: home.name))
        if primaryHome == home.id {
            primaryHome = homes.first?.id
            if !homes.isEmpty { homes[0].isPrimary = true }
            events.append(.didUpdatePrimaryHome(home: primaryHome))
        }
        return home.accessories
    }

    mutating func renameHome(home index: Int, to newName: String, events: inout [HomeEvent])
        throws(HomeError)
    {
        try HomeName.validate(newName)
        if let other = homes.first(where: { $0.id != homes[index].id && HomeName.matches($0.name, newName) }) {
            throw HomeError(.homeWithSimilarNameExists, "A home named '\(other.name)' already exists.")
        }
        let oldName = homes[index].name
        guard oldName != newName else { return }
        homes[index].name = newName
        events.append(.didUpdateNameForHome(home: homes[index].id, oldName: oldName, name: newName))
    }

    mutating func setPrimaryHome(home index: Int, events: inout [HomeEvent]) throws(HomeError) {
        guard primaryHome != homes[index].id else { return }
        for i in homes.indices { homes[i].isPrimary = i == index }
        primaryHome = homes[index].id
        events.append(.didUpdatePrimaryHome(home: primaryHome))
    }

    // MARK: The home's namespace

    /// Refuses `name` if it breaks a character rule or if a room, zone, accessory or action set of the
    /// home other than `except` already has a similar name.
    static func checkName(_ name: String, in home: Home, except: String? = nil) throws(HomeError) {
        try HomeName.validate(name)
        // Every object of the home is compared in place: no list of names is built per check.
        func clash(_ kind: String, _ id: String, _ other: String) throws(HomeError) {
            guard id != except, HomeName.matches(other, name) else { return }
            throw HomeError(
                .objectWithSimilarNameExistsInHome,
                "The home '\(home.name)' already has \(kind.first == "a" ? "an" : "a") \(kind) named '\(other)'.")
        }
        // By index: `for accessory in home.accessories` would copy (retain and release) every
        // accessory's fields, which made building a 10,000-accessory home quadratic in retains.
        for i in home.rooms.indices { try clash("room", home.rooms[i].id.rawValue, home.rooms[i].name) }
        for i in home.zones.indices { try clash("zone", home.zones[i].id.rawValue, home.zones[i].name) }
        // Accessories (there may be thousands) by their key hash first.
        let hash = HomeName.keyHash(name)
        for i in home.accessories.indices where home.accessories[i].nameKeyHash == hash {
            try clash("accessory", home.accessories[i].id.rawValue, home.accessories[i].name)
        }
        for i in home.actionSets.indices {
            try clash("action set", home.actionSets[i].id.rawValue, home.actionSets[i].name)
        }
        for i in home.triggers.indices {
            try clash("automation", home.triggers[i].id.rawValue, home.triggers[i].name)
        }
    }

    static func roomIndex(_ name: String, in home: Home) throws(HomeError) -> Int? {
        if HomeName.matches(name, HomeName.defaultRoom) { return nil }
        guard let index = home.rooms.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no room named '\(name)'.")
        }
        return index
    }

    static func roomID(_ name: String, in home: Home) throws(HomeError) -> RoomID {
        try roomIndex(name, in: home).map { home.rooms[$0].id } ?? home.defaultRoom.id
    }

    static func zoneIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        guard let index = home.zones.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no zone named '\(name)'.")
        }
        return index
    }

    static func accessoryIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        guard let index = home.accessoryIndex(named: name) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no accessory named '\(name)'.")
        }
        return index
    }

    static func triggerIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        guard let index = home.triggers.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no automation named '\(name)'.")
        }
        return index
    }

    static func actionSetIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        guard let index = home.actionSets.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no action set named '\(name)'.")
        }
        return index
    }

    // MARK: Rooms

    mutating func addRoom(named name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError) -> Room
    {
        try Self.checkName(name, in: homes[h])
        let room = Room(id: .random(), name: name, isDefault: false)
        homes[h].rooms.append(room)
        events.append(.didAddRoom(home: homes[h].id, room: room.id, name: name))
        return room
    }

    /// Removes a room; its accessories move to the default room and it leaves every zone.
    mutating func removeRoom(_ name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        guard let r = try Self.roomIndex(name, in: homes[h]) else {
            throw HomeError(.roomForHomeCannotBeUpdated, "The default room of a home cannot be removed.")
        }
        let home = homes[h]
        let room = homes[h].rooms.remove(at: r)
        for a in home.accessories.indices where home.accessories[a].room == room.id {
            homes[h].accessories[a].room = home.defaultRoom.id
            events.append(
                .didUpdateRoomForAccessory(
                    home: home.id, accessory: home.accessories[a].id, oldRoom: room.id, room: home.defaultRoom.id))
        }
        for z in home.zones.indices where home.zones[z].rooms.contains(room.id) {
            homes[h].zones[z].rooms.removeAll { $0 == room.id }
            events.append(.didRemoveRoomFromZone(home: home.id, room: room.id, zone: home.zones[z].id))
        }
        events.append(.didRemoveRoom(home: home.id, room: room.id, name: room.name))
    }

    mutating func renameRoom(
        _ name: String, to newName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        guard let r = try Self.roomIndex(name, in: homes[h]) else {
            throw HomeError(.roomForHomeCannotBeUpdated, "The default room of a home cannot be renamed.")
        }
        let room = homes[h].rooms[r]
        try Self.checkName(newName, in: homes[h], except: room.id.rawValue)
        guard room.name != newName else { return }
        homes[h].rooms[r].name = newName
        events.append(.didUpdateNameForRoom(home: homes[h].id, room: room.id, oldName: room.name, name: newName))
    }

    // MARK: Zones

    mutating func addZone(named name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError) -> Zone
    {
        try Self.checkName(name, in: homes[h])
        let zone = Zone(id: .random(), name: name, rooms: [])
        homes[h].zones.append(zone)
        events.append(.didAddZone(home: homes[h].id, zone: zone.id, name: name))
        return zone
    }

    mutating func removeZone(_ name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        let z = try Self.zoneIndex(name, in: homes[h])
        let zone = homes[h].zones.remove(at: z)
        events.append(.didRemoveZone(home: homes[h].id, zone: zone.id, name: zone.name))
    }

    mutating func renameZone(
        _ name: String, to newName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        let z = try Self.zoneIndex(name, in: homes[h])
        let zone = homes[h].zones[z]
        try Self.checkName(newName, in: homes[h], except: zone.id.rawValue)
        guard zone.name != newName else { return }
        homes[h].zones[z].name = newName
        events.append(.didUpdateNameForZone(home: homes[h].id, zone: zone.id, oldName: zone.name, name: newName))
    }

    mutating func addRoom(
        _ roomName: String, toZone zoneName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        let z = try Self.zoneIndex(zoneName, in: homes[h])
        guard let r = try Self.roomIndex(roomName, in: homes[h]) else {
            throw HomeError(.roomForHomeCannotBeInZone, "The default room of a home cannot be put in a zone.")
        }
        let room = homes[h].rooms[r]
        guard !homes[h].zones[z].rooms.contains(room.id) else {
            throw HomeError(
                .alreadyExists, "The room '\(room.name)' is already in the zone '\(homes[h].zones[z].name)'.")
        }
        homes[h].zones[z].rooms.append(room.id)
        events.append(.didAddRoomToZone(home: homes[h].id, room: room.id, zone: homes[h].zones[z].id))
    }

    mutating func removeRoom(
        _ roomName: String, fromZone zoneName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        let z = try Self.zoneIndex(zoneName, in: homes[h])
        let roomID = try Self.roomID(roomName, in: homes[h])
        guard homes[h].zones[z].rooms.contains(roomID) else {
            throw HomeError(.notFound, "The room '\(roomName)' is not in the zone '\(homes[h].zones[z].name)'.")
        }
        homes[h].zones[z].rooms.removeAll { $0 == roomID }
        events.append(.didRemoveRoomFromZone(home: homes[h].id, room: roomID, zone: homes[h].zones[z].id))
    }

    // MARK: Accessories

    /// Adds an accessory from the browser: `found` is the accessory followed, for a bridge, by its
    /// bridged accessories. All land in `roomName` (the default room when `nil`).
    mutating func addAccessory(
        _ found: [Accessory], home h: Int, room roomName: String?, name: String?, events: inout [HomeEvent]
    ) throws(HomeError) -> Accessory {
        guard var accessories = Optional(found), let first = accessories.first else {
            throw HomeError(.notFound, "No accessory to add.")
        }
        if let owner = locate(first.id) {
            throw HomeError(
                .objectAlreadyAssociatedToHome,
                "The accessory '\(first.name)' already belongs to the home '\(homes[owner.home].name)'.")
        }
        // A bridge in a home that lists a new accessory: it may join the bridge's home only.
        var bridgeIndex: Int?
        if let bridge = first.bridge, let place = locate(bridge) {
            guard place.home == h, let index = homes[h].accessories.firstIndex(where: { $0.id == bridge }) else {
                throw HomeError(
                    .invalidParameter,
                    "'\(first.name)' sits behind a bridge of the home '\(homes[place.home].name)': add it there.")
            }
            bridgeIndex = index
        }
        let roomID =
            try roomName.map { name throws(HomeError) in try Self.roomID(name, in: homes[h]) }
            ?? homes[h].defaultRoom.id
        if let name { accessories[0].name = name }
        // Checked against the home and each other first, then appended in place (a copy of the home
        // would copy all its accessories). A name the administrator gave must be free; one the device
        // gave is numbered until it is (a second `Outlet` becomes `Outlet 2`), as HomeKit does.
        var added: [Accessory] = []
        for (index, var accessory) in accessories.enumerated() {
            if index == 0 && name != nil {
                try Self.checkName(accessory.name, in: homes[h])
            } else {
                let free = try Self.freeName(accessory.name, in: homes[h], besides: added)
                if free != accessory.name { accessory.deviceName = accessory.deviceName ?? accessory.name }
                accessory.name = free
            }
            accessory.room = roomID
            added.append(accessory)
        }
        if let bridgeIndex, !homes[h].accessories[bridgeIndex].bridgedAccessories.contains(first.id) {
            homes[h].accessories[bridgeIndex].bridgedAccessories.append(first.id)
        }
        let start = homes[h].accessories.count
        homes[h].accessories.append(contentsOf: added)
        accessoriesAppended(home: h, from: start)
        let home = homes[h]
        for accessory in accessories where !accessory.isBridge {
            events.append(.didAddAccessory(home: home.id, accessory: accessory.id, name: accessory.name, room: roomID))
        }
        return home.accessories[home.accessories.count - accessories.count]
    }

    /// `name` if the home and `added` have nothing named like it, else the first of `name 2`,
    /// `name 3`, … that is free (cut to fit the length limit). Throws for a name that breaks the
    /// character rules.
    static func freeName(_ name: String, in home: Home, besides added: [Accessory]) throws(HomeError) -> String {
        try HomeName.validate(name)
        return HomeName.firstFree(name) { candidate in
            (try? checkName(candidate, in: home)) == nil || added.contains { HomeName.matches($0.name, candidate) }
        }
    }

    /// Removes an accessory (a bridge with all its bridged accessories) and drops actions that wrote to
    /// it; returns what was removed, for the browser.
    ///
    /// A bridged accessory is removed alone only when no driver reports it any more (`gone`: its
    /// bridge no longer lists it); otherwise it goes with its bridge.
    mutating func removeAccessory(
        _ name: String, home h: Int, gone: Set<AccessoryID> = [], events: inout [HomeEvent]
    ) throws(HomeError) -> [Accessory] {
        let a = try Self.accessoryIndex(name, in: homes[h])
        let accessory = homes[h].accessories[a]
        if let bridgeID = accessory.bridge {
            let bridge = homes[h].accessories.firstIndex { $0.id == bridgeID }
            guard gone.contains(accessory.id) else {
                throw HomeError(
                    .cannotRemoveNonBridgeAccessory,
                    "'\(accessory.name)' sits behind the bridge '\(bridge.map { homes[h].accessories[$0].name } ?? bridgeID.rawValue)'; remove the bridge instead."
                )
            }
            if let bridge { homes[h].accessories[bridge].bridgedAccessories.removeAll { $0 == accessory.id } }
        }
        let removedIDs = Set([accessory.id] + accessory.bridgedAccessories)
        let removed = homes[h].accessories.filter { removedIDs.contains($0.id) }
        homes[h].accessories.removeAll { removedIDs.contains($0.id) }
        placementChanged()
        for accessory in removed where !accessory.isBridge {
            events.append(
                .didRemoveAccessory(
                    home: homes[h].id, accessory: accessory.id, name: accessory.name,
                    room: accessory.room ?? homes[h].defaultRoom.id))
        }
        // What named it goes with it, each said on the change stream.
        for s in homes[h].actionSets.indices {
            let count = homes[h].actionSets[s].actions.count
            homes[h].actionSets[s].actions.removeAll { removedIDs.contains($0.accessory) }
            guard homes[h].actionSets[s].actions.count != count else { continue }
            let actionSet = homes[h].actionSets[s]
            events.append(
                .didUpdateActionsForActionSet(home: homes[h].id, actionSet: actionSet.id, name: actionSet.name))
        }
        for trigger in homes[h].triggers where removedIDs.contains(trigger.characteristic.accessory) {
            events.append(.didRemoveTrigger(home: homes[h].id, trigger: trigger.id, name: trigger.name))
        }
        homes[h].triggers.removeAll { removedIDs.contains($0.characteristic.accessory) }
        return removed
    }

    mutating func renameAccessory(
        _ name: String, to newName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        let a = try Self.accessoryIndex(name, in: homes[h])
        let accessory = homes[h].accessories[a]
        try Self.checkName(newName, in: homes[h], except: accessory.id.rawValue)
        guard accessory.name != newName else { return }
        homes[h].accessories[a].name = newName
        events.append(
            .didUpdateNameForAccessory(
                home: homes[h].id, accessory: accessory.id, oldName: accessory.name, name: newName))
    }

    /// Moves one accessory to a room. A bridge moves alone: its bridged accessories stay where they are.
    mutating func assignAccessory(
        _ name: String, toRoom roomName: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) {
        let a = try Self.accessoryIndex(name, in: homes[h])
        let roomID = try Self.roomID(roomName, in: homes[h])
        let accessory = homes[h].accessories[a]
        let oldRoom = accessory.room ?? homes[h].defaultRoom.id
        guard oldRoom != roomID else { return }
        homes[h].accessories[a].room = roomID
        events.append(
            .didUpdateRoomForAccessory(home: homes[h].id, accessory: accessory.id, oldRoom: oldRoom, room: roomID))
    }

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
            events.append(.didUpdateTrigger(home: homes[h].id, trigger: homes[h].triggers[t].id))
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
        actionSets names: [String], home h: Int, events: inout [HomeEvent]
    ) throws(HomeError) -> Trigger {
        try Self.checkName(name, in: homes[h])
        let (accessory, service, characteristic) = try Self.resolve(reference, in: homes[h])
        guard characteristic.metadata.permissions.contains(.notify) else {
            throw HomeError(
                .invalidParameter,
                "\(characteristic.type) of '\(accessory.name)' does not report its changes, so it cannot start an automation."
            )
        }
        var checkedValue: CharacteristicValue?
        if let value {
            do {
                checkedValue = try characteristic.metadata.validate(value)
            } catch {
                throw HomeError(error.code, "\(characteristic.type) of '\(accessory.name)': \(error.message)")
            }
        }
        guard !names.isEmpty else {
            throw HomeError(.missingParameter, "An automation runs at least one action set.")
        }
        var actionSets: [ActionSetID] = []
        for actionSetName in names {
            let actionSet = homes[h].actionSets[try Self.actionSetIndex(actionSetName, in: homes[h])]
            guard !actionSets.contains(actionSet.id) else {
                throw HomeError(.invalidParameter, "The automation runs '\(actionSet.name)' more than once.")
            }
            actionSets.append(actionSet.id)
        }
        let trigger = Trigger(
            id: .random(), name: name, isEnabled: true,
            characteristic: ValueKey(accessory: accessory.id, service: service.id, characteristic: characteristic.type),
            value: checkedValue, actionSets: actionSets)
        homes[h].triggers.append(trigger)
        events.append(.didAddTrigger(home: homes[h].id, trigger: trigger.id, name: name))
        return trigger
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
        events.append(.didUpdateTrigger(home: homes[h].id, trigger: homes[h].triggers[t].id))
    }

    // MARK: Users

    mutating func addUser(
        account newAccount: String, name: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) -> User {
        guard !newAccount.isEmpty else { throw HomeError(.missingParameter, "The new user's account is required.") }
        try AccountName.validate(newAccount)
        guard !name.trimmingSpaces.isEmpty else {
            throw HomeError(.missingParameter, "The new user's name is required.")
        }
        try HomeName.validate(name)
        if homes[h].users.contains(where: { $0.account == newAccount }) {
            throw HomeError(.alreadyExists, "That account is already a member of the home '\(homes[h].name)'.")
        }
        if let other = homes[h].users.first(where: { HomeName.matches($0.name, name) }) {
            throw HomeError(.alreadyExists, "The home '\(homes[h].name)' already has a user named '\(other.name)'.")
        }
        let user = User(id: .random(), name: name, role: .guest, account: newAccount)
        homes[h].users.append(user)
        events.append(.didAddUser(home: homes[h].id, user: user.id, name: name))
        return user
    }

    mutating func removeUser(named name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        guard let u = homes[h].users.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "The home '\(homes[h].name)' has no user named '\(name)'.")
        }
        try removeUser(at: u, home: h, events: &events)
    }

    mutating func removeUser(id: UserID, home h: Int, events: inout [HomeEvent]) throws(HomeError) {
        guard let u = homes[h].users.firstIndex(where: { $0.id == id }) else {
            throw HomeError(.notFound, "The home '\(homes[h].name)' has no such user.")
        }
        try removeUser(at: u, home: h, events: &events)
    }

    private mutating func removeUser(at u: Int, home h: Int, events: inout [HomeEvent]) throws(HomeError) {
        guard homes[h].users[u].role != .administrator else {
            throw HomeError(.invalidParameter, "The administrator cannot leave the home; remove the home instead.")
        }
        let user = homes[h].users.remove(at: u)
        events.append(.didRemoveUser(home: homes[h].id, user: user.id, name: user.name))
    }

    // MARK: What drivers report

    /// Records a value the device confirmed or reported; no event when it did not change. An event
    /// type's report (a press) is always passed on and never kept.
    mutating func recordValue(
        _ value: CharacteristicValue, accessory: AccessoryID, service: ServiceID,
        characteristic: CharacteristicType, events: inout [HomeEvent]
    ) {
        guard let (h, a) = locate(accessory),
            let current = homes[h].accessories[a].characteristic(service, characteristic)
        else { return }
        let stored = (try? current.metadata.validate(value)) ?? value
        if characteristic.isEvent || homes[h].accessories[a].setValue(stored, service: service, type: characteristic) {
            events.append(
                .didUpdateValueForCharacteristic(
                    home: homes[h].id, accessory: accessory, service: service, characteristic: characteristic,
                    value: stored))
        }
    }

    mutating func recordReachability(_ isReachable: Bool, accessory: AccessoryID, events: inout [HomeEvent]) {
        guard let (h, a) = locate(accessory), homes[h].accessories[a].isReachable != isReachable else { return }
        homes[h].accessories[a].isReachable = isReachable
        events.append(
            .accessoryDidUpdateReachability(home: homes[h].id, accessory: accessory, isReachable: isReachable))
    }
}

/// Where each accessory of a graph is, as of one placement count. Shared by copies of a graph (it is a
/// cache, not part of the value); each lookup checks the count, so a copy placed differently rebuilds it.
final class LocationIndex: Sendable {
    private let state = Mutex<(placement: Int, count: Int, places: [AccessoryID: (home: Int, accessory: Int)])>(
        (-1, -1, [:]))

    /// Adds appended accessories when the index was current before they came; otherwise leaves it
    /// to be rebuilt.
    func append(_ ids: [AccessoryID], home h: Int, from start: Int, after previous: Int, now placement: Int) {
        state.withLock { state in
            guard state.placement == previous else { return }
            for (offset, id) in ids.enumerated() where state.places[id] == nil {
                state.places[id] = (h, start + offset)
            }
            state.placement = placement
            state.count += ids.count
        }
    }

    func locate(_ id: AccessoryID, placement: Int, in homes: [Home]) -> (home: Int, accessory: Int)? {
        state.withLock { state in
            let count = homes.reduce(0) { $0 + $1.accessories.count }
            if state.placement != placement || state.count != count {
                var places: [AccessoryID: (home: Int, accessory: Int)] = [:]
                places.reserveCapacity(count)
                for (h, home) in homes.enumerated() {
                    for (a, accessory) in home.accessories.enumerated() where places[accessory.id] == nil {
                        places[accessory.id] = (h, a)
                    }
                }
                state = (placement, count, places)
            }
            guard let place = state.places[id], place.home < homes.count,
                place.accessory < homes[place.home].accessories.count,
                homes[place.home].accessories[place.accessory].id == id
            else { return nil }
            return place
        }
    }
}

extension String {
    fileprivate var trimmingSpaces: String { String(drop { $0.isWhitespace }) }
}
