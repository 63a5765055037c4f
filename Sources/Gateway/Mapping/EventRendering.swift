import HomeModel
import JSON

/// A model event as the `$events` message of docs/mqtt.md: `{"event":"didAddRoom","home":…,"room":…}`,
/// with objects named as clients know them (never by internal id, never an account).
struct EventMessage: Sendable, Equatable {
    let topic: String
    /// Compact JSON, written member by member with JSON's own writers: one goes out for every value
    /// change, and a tree of its members cost as much again to build and to serialize.
    let payload: [UInt8]

    /// The message for `event`, given the homes after it (for names) and before it (for what was
    /// removed); nil for events that have no `$events` message (reload, the accessory browser's).
    init?(_ event: HomeEvent, homes: [Home], topics: Topics) {
        func home(_ id: HomeID) -> Home? { homes.first { $0.id == id } }
        var members = Members()
        members.add("event", event.name)
        switch event {
        case .homeManagerDidUpdateHomes, .didFindNewAccessory, .didRemoveNewAccessory, .didUpdateNextFirings:
            return nil
        case .didAddHome(_, let name), .didRemoveHome(_, let name):
            members.add("home", name)
            self.topic = topics.managerEvents
        case .didUpdateNameForHome(_, let oldName, let name):
            members.add("home", name)
            members.add("oldName", oldName)
            self.topic = topics.managerEvents
        case .didUpdatePrimaryHome(let id):
            members.add("home", id.flatMap(home).map { .string($0.name) } ?? .null)
            self.topic = topics.managerEvents
        default:
            guard let id = event.home, let snapshot = home(id) else { return nil }
            members.add("home", snapshot.name)
            Self.describe(event, in: snapshot, into: &members)
            self.topic = topics.events(home: snapshot.name)
        }
        self.payload = members.closed()
    }

    /// A JSON object written as its members are added.
    private struct Members {
        private var bytes: [UInt8]

        init() {
            bytes = []
            bytes.reserveCapacity(256)
            bytes.append(UInt8(ascii: "{"))
        }

        /// Keys are plain ASCII names: written as they are, with no escapes to look for.
        private mutating func key(_ key: StaticString) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            bytes.append(UInt8(ascii: "\""))
            bytes.append(UInt8(ascii: ":"))
        }

        /// A member whose object is gone (nil) is left out.
        mutating func add(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            JSON.writeString(value, to: &bytes)
        }

        mutating func add(_ name: StaticString, _ value: JSON) {
            key(name)
            value.write(to: &bytes)
        }

        consuming func closed() -> [UInt8] {
            bytes.append(UInt8(ascii: "}"))
            return bytes
        }
    }

    private static func describe(_ event: HomeEvent, in home: Home, into members: inout Members) {
        func room(_ id: RoomID) -> String? { home.room(id)?.name }
        func accessory(_ id: AccessoryID) -> String? { home.accessory(id)?.name }
        switch event {
        case .didAddRoom(_, _, let name), .didRemoveRoom(_, _, let name):
            members.add("room", name)
        case .didUpdateNameForRoom(_, _, let oldName, let name):
            members.add("room", name)
            members.add("oldName", oldName)
        case .didAddZone(_, _, let name), .didRemoveZone(_, _, let name):
            members.add("zone", name)
        case .didUpdateNameForZone(_, _, let oldName, let name):
            members.add("zone", name)
            members.add("oldName", oldName)
        case .didAddRoomToZone(_, let roomID, let zoneID), .didRemoveRoomFromZone(_, let roomID, let zoneID):
            members.add("room", room(roomID))
            members.add("zone", home.zone(zoneID)?.name)
        case .didAddAccessory(_, _, let name, let roomID), .didRemoveAccessory(_, _, let name, let roomID):
            members.add("accessory", name)
            members.add("room", room(roomID) ?? home.defaultRoom.name)
        case .didUpdateRoomForAccessory(_, let id, let oldRoom, let newRoom):
            members.add("accessory", accessory(id))
            members.add("room", room(newRoom))
            members.add("oldRoom", room(oldRoom))
        case .didUpdateNameForAccessory(_, _, let oldName, let name):
            members.add("accessory", name)
            members.add("oldName", oldName)
        case .didAddUser(_, _, let name), .didRemoveUser(_, _, let name):
            members.add("user", name)
        case .didAddActionSet(_, _, let name), .didRemoveActionSet(_, _, let name),
            .didUpdateActionsForActionSet(_, _, let name):
            members.add("actionSet", name)
        case .didUpdateNameForActionSet(_, _, let oldName, let name):
            members.add("actionSet", name)
            members.add("oldName", oldName)
        case .didExecuteActionSet(_, let id, let failed):
            members.add("actionSet", home.actionSet(id)?.name)
            members.add("failedActions", .integer(failed))
        case .didAddTrigger(_, _, let name), .didRemoveTrigger(_, _, let name):
            members.add("trigger", name)
        case .didUpdateNameForTrigger(_, _, let oldName, let name):
            members.add("trigger", name)
            members.add("oldName", oldName)
        case .didUpdateTrigger(_, let id, let change):
            members.add("trigger", home.trigger(id)?.name)
            members.add("change", change.rawValue)
            if let trigger = home.trigger(id) {
                members.add("enabled", .bool(trigger.isEnabled))
                members.add(
                    "actionSets", .array(trigger.actionSets.compactMap { home.actionSet($0).map { .string($0.name) } }))
                members.add("active", .bool(trigger.isActive))
            }
        case .didFireTrigger(_, let id, let firing):
            members.add("trigger", home.trigger(id)?.name)
            members.add("failedActions", .integer(firing.failedActions))
            members.add("cause", FiringRendering.cause(firing.cause, in: home))
            members.add("actionSets", FiringRendering.actionSets(firing.actionSets, in: home))
        case .accessoryDidUpdateReachability(_, let id, let isReachable):
            members.add("accessory", accessory(id))
            members.add("reachable", .bool(isReachable))
        case .didUpdateValueForCharacteristic(_, let id, let serviceID, let characteristic, let value):
            let snapshot = home.accessory(id)
            members.add("room", snapshot.map { Rendering.roomName($0.room, in: home) })
            members.add("accessory", snapshot?.name)
            members.add("service", snapshot?.service(serviceID)?.name)
            members.add("characteristic", characteristic.rawValue)
            members.add("value", Rendering.value(value))
        default:
            break
        }
    }
}
