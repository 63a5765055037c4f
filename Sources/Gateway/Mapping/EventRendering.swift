import HomeModel

/// A model event as the `$events` message of CONTRACT.md: `{"event":"didAddRoom","home":…,"room":…}`,
/// with objects named as clients know them (never by internal id, never an account).
public struct EventMessage: Sendable, Equatable {
    public let topic: String
    public let payload: JSON

    /// The message for `event`, given the homes after it (for names) and before it (for what was
    /// removed); nil for events that have no `$events` message (reload, the accessory browser's).
    public init?(_ event: HomeEvent, homes: [Home], topics: Topics) {
        func home(_ id: HomeID) -> Home? { homes.first { $0.id == id } }
        var members: [(key: String, value: JSON)] = [("event", .string(event.name))]
        func add(_ key: String, _ value: String?) {
            if let value { members.append((key, .string(value))) }
        }
        let topic: String
        switch event {
        case .homeManagerDidUpdateHomes, .didFindNewAccessory, .didRemoveNewAccessory:
            return nil
        case .didAddHome(_, let name), .didRemoveHome(_, let name):
            add("home", name)
            topic = topics.managerEvents
        case .didUpdateNameForHome(_, let oldName, let name):
            add("home", name)
            add("oldName", oldName)
            topic = topics.managerEvents
        case .didUpdatePrimaryHome(let id):
            members.append(("home", id.flatMap(home).map { .string($0.name) } ?? .null))
            topic = topics.managerEvents
        default:
            guard let id = event.home, let snapshot = home(id) else { return nil }
            add("home", snapshot.name)
            Self.describe(event, in: snapshot, add: add)
            topic = topics.events(home: snapshot.name)
        }
        switch event {
        case .didUpdateValueForCharacteristic(_, _, _, _, let value): members.append(("value", Rendering.value(value)))
        case .accessoryDidUpdateReachability(_, _, let isReachable): members.append(("reachable", .bool(isReachable)))
        case .didExecuteActionSet(_, _, let failed): members.append(("failedActions", .integer(failed)))
        default: break
        }
        self.topic = topic
        self.payload = .object(members)
    }

    private static func describe(_ event: HomeEvent, in home: Home, add: (String, String?) -> Void) {
        func room(_ id: RoomID) -> String? { home.room(id)?.name }
        func accessory(_ id: AccessoryID) -> String? { home.accessory(id)?.name }
        switch event {
        case .didAddRoom(_, _, let name), .didRemoveRoom(_, _, let name):
            add("room", name)
        case .didUpdateNameForRoom(_, _, let oldName, let name):
            add("room", name)
            add("oldName", oldName)
        case .didAddZone(_, _, let name), .didRemoveZone(_, _, let name):
            add("zone", name)
        case .didUpdateNameForZone(_, _, let oldName, let name):
            add("zone", name)
            add("oldName", oldName)
        case .didAddRoomToZone(_, let roomID, let zoneID), .didRemoveRoomFromZone(_, let roomID, let zoneID):
            add("room", room(roomID))
            add("zone", home.zone(zoneID)?.name)
        case .didAddAccessory(_, _, let name, let roomID), .didRemoveAccessory(_, _, let name, let roomID):
            add("accessory", name)
            add("room", room(roomID) ?? home.defaultRoom.name)
        case .didUpdateRoomForAccessory(_, let id, let oldRoom, let newRoom):
            add("accessory", accessory(id))
            add("room", room(newRoom))
            add("oldRoom", room(oldRoom))
        case .didUpdateNameForAccessory(_, _, let oldName, let name):
            add("accessory", name)
            add("oldName", oldName)
        case .didAddUser(_, _, let name), .didRemoveUser(_, _, let name):
            add("user", name)
        case .didAddActionSet(_, _, let name), .didRemoveActionSet(_, _, let name):
            add("actionSet", name)
        case .didUpdateNameForActionSet(_, _, let oldName, let name):
            add("actionSet", name)
            add("oldName", oldName)
        case .didExecuteActionSet(_, let id, _):
            add("actionSet", home.actionSet(id)?.name)
        case .accessoryDidUpdateReachability(_, let id, _):
            add("accessory", accessory(id))
        case .didUpdateValueForCharacteristic(_, let id, let serviceID, let characteristic, _):
            let snapshot = home.accessory(id)
            add("room", snapshot.map { Rendering.roomName($0.room, in: home) })
            add("accessory", snapshot?.name)
            add("service", snapshot?.service(serviceID)?.name)
            add("characteristic", characteristic.rawValue)
        default:
            break
        }
    }
}
