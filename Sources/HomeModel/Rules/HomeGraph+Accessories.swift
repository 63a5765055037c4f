/// The rules of accessories: adding from the browser (a bridge with its bridged accessories),
/// removing with what named them, names and rooms.
extension HomeGraph {
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
        for trigger in homes[h].triggers
        where trigger.event.characteristic.map({ removedIDs.contains($0.accessory) }) ?? false {
            events.append(.didRemoveTrigger(home: homes[h].id, trigger: trigger.id, name: trigger.name))
        }
        homes[h].triggers.removeAll { $0.event.characteristic.map { removedIDs.contains($0.accessory) } ?? false }
        return removed
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
}
