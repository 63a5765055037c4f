/// The rules of rooms and zones: names in the home's namespace, the default room kept.
extension HomeGraph {
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
        try rename(\.rooms, r, to: newName, home: h, events: &events) {
            .didUpdateNameForRoom(home: $0, room: $1, oldName: $2, name: newName)
        }
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
        let zone = homes[h].zones.remove(at: try Self.zoneIndex(name, in: homes[h]))
        events.append(.didRemoveZone(home: homes[h].id, zone: zone.id, name: zone.name))
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
}
