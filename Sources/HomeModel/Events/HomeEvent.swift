/// What changed in the home database, one case per HomeKit delegate message.
///
/// The manager yields these in the order the changes were committed, after they are durable. Events
/// carry identifiers and the names a listener needs to clear what it published under an old name; the
/// rest is in the next snapshot.
package enum HomeEvent: Sendable, Hashable {
    /// Everything may have changed: reload all homes (`homeManagerDidUpdateHomes`). Sent when a
    /// listener subscribes after the first load, and when a build was undone (``HomeManager/building(_:)``).
    case homeManagerDidUpdateHomes
    case didAddHome(home: HomeID, name: String)
    case didRemoveHome(home: HomeID, name: String)
    case didUpdateNameForHome(home: HomeID, oldName: String, name: String)
    /// The home's location (time zone, place on the Earth) was set or cleared: its schedules move.
    case didUpdateLocationForHome(home: HomeID)
    /// The schedule service planned the home's schedule automations' next firings anew
    /// (``Home/nextFirings``): for `$layout`, not for `$events`.
    case didUpdateNextFirings(home: HomeID)
    /// The primary home changed; `nil` when the last home was removed.
    case didUpdatePrimaryHome(home: HomeID?)

    case didAddRoom(home: HomeID, room: RoomID, name: String)
    case didRemoveRoom(home: HomeID, room: RoomID, name: String)
    case didUpdateNameForRoom(home: HomeID, room: RoomID, oldName: String, name: String)

    case didAddZone(home: HomeID, zone: ZoneID, name: String)
    case didRemoveZone(home: HomeID, zone: ZoneID, name: String)
    case didUpdateNameForZone(home: HomeID, zone: ZoneID, oldName: String, name: String)
    case didAddRoomToZone(home: HomeID, room: RoomID, zone: ZoneID)
    case didRemoveRoomFromZone(home: HomeID, room: RoomID, zone: ZoneID)

    /// An accessory was added. Sent for each bridged accessory, never for a bridge.
    case didAddAccessory(home: HomeID, accessory: AccessoryID, name: String, room: RoomID)
    /// An accessory was removed. Sent for each bridged accessory, never for a bridge.
    case didRemoveAccessory(home: HomeID, accessory: AccessoryID, name: String, room: RoomID)
    case didUpdateRoomForAccessory(home: HomeID, accessory: AccessoryID, oldRoom: RoomID, room: RoomID)
    case didUpdateNameForAccessory(home: HomeID, accessory: AccessoryID, oldName: String, name: String)

    /// A user joined; only the display name, never the account.
    case didAddUser(home: HomeID, user: UserID, name: String)
    case didRemoveUser(home: HomeID, user: UserID, name: String)

    case didAddActionSet(home: HomeID, actionSet: ActionSetID, name: String)
    case didRemoveActionSet(home: HomeID, actionSet: ActionSetID, name: String)
    case didUpdateNameForActionSet(home: HomeID, actionSet: ActionSetID, oldName: String, name: String)
    /// An action set lost actions (`home(_:didUpdateActionsFor:)`): the accessory they wrote to left
    /// the home.
    case didUpdateActionsForActionSet(home: HomeID, actionSet: ActionSetID, name: String)
    /// An action set ran; `failedActions` counts the actions that did not succeed.
    case didExecuteActionSet(home: HomeID, actionSet: ActionSetID, failedActions: Int)

    case didAddTrigger(home: HomeID, trigger: TriggerID, name: String)
    case didRemoveTrigger(home: HomeID, trigger: TriggerID, name: String)
    case didUpdateNameForTrigger(home: HomeID, trigger: TriggerID, oldName: String, name: String)
    /// An automation was turned on or off, or lost an action set that was removed: `change` says which.
    case didUpdateTrigger(home: HomeID, trigger: TriggerID, change: TriggerChange)
    /// An automation fired and ran its action sets: `firing` says what set it off and what each
    /// action did (``TriggerFiring/failedActions`` counts those that did not succeed).
    case didFireTrigger(home: HomeID, trigger: TriggerID, firing: TriggerFiring)

    case accessoryDidUpdateReachability(home: HomeID, accessory: AccessoryID, isReachable: Bool)
    case didUpdateValueForCharacteristic(
        home: HomeID, accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType,
        value: CharacteristicValue
    )

    /// The accessory browser found an accessory that belongs to no home (`accessoryBrowser:didFindNewAccessory:`).
    case didFindNewAccessory(accessory: AccessoryID)
    /// An accessory left the browser: added to a home, or lost by its driver (`didRemoveNewAccessory`).
    case didRemoveNewAccessory(accessory: AccessoryID)

    /// The home the event concerns; `nil` for manager- and browser-level events.
    package var home: HomeID? {
        switch self {
        case .homeManagerDidUpdateHomes, .didUpdatePrimaryHome, .didFindNewAccessory, .didRemoveNewAccessory:
            nil
        case .didAddHome(let home, _), .didRemoveHome(let home, _), .didUpdateNameForHome(let home, _, _),
            .didUpdateLocationForHome(let home), .didUpdateNextFirings(let home), .didAddRoom(let home, _, _),
            .didRemoveRoom(let home, _, _),
            .didUpdateNameForRoom(let home, _, _, _),
            .didAddZone(let home, _, _), .didRemoveZone(let home, _, _), .didUpdateNameForZone(let home, _, _, _),
            .didAddRoomToZone(let home, _, _), .didRemoveRoomFromZone(let home, _, _),
            .didAddAccessory(let home, _, _, _), .didRemoveAccessory(let home, _, _, _),
            .didUpdateRoomForAccessory(let home, _, _, _), .didUpdateNameForAccessory(let home, _, _, _),
            .didAddUser(let home, _, _), .didRemoveUser(let home, _, _),
            .didAddActionSet(let home, _, _), .didRemoveActionSet(let home, _, _),
            .didUpdateNameForActionSet(let home, _, _, _), .didUpdateActionsForActionSet(let home, _, _),
            .didExecuteActionSet(let home, _, _),
            .didAddTrigger(let home, _, _), .didRemoveTrigger(let home, _, _),
            .didUpdateNameForTrigger(let home, _, _, _), .didUpdateTrigger(let home, _, _),
            .didFireTrigger(let home, _, _),
            .accessoryDidUpdateReachability(let home, _, _), .didUpdateValueForCharacteristic(let home, _, _, _, _):
            home
        }
    }

    /// The HomeKit delegate message's name, e.g. `didAddRoom`, for the wire.
    package var name: String {
        switch self {
        case .homeManagerDidUpdateHomes: "homeManagerDidUpdateHomes"
        case .didAddHome: "didAddHome"
        case .didRemoveHome: "didRemoveHome"
        case .didUpdateNameForHome: "didUpdateNameForHome"
        case .didUpdateLocationForHome: "didUpdateLocationForHome"
        case .didUpdateNextFirings: "didUpdateNextFirings"
        case .didUpdatePrimaryHome: "didUpdatePrimaryHome"
        case .didAddRoom: "didAddRoom"
        case .didRemoveRoom: "didRemoveRoom"
        case .didUpdateNameForRoom: "didUpdateNameForRoom"
        case .didAddZone: "didAddZone"
        case .didRemoveZone: "didRemoveZone"
        case .didUpdateNameForZone: "didUpdateNameForZone"
        case .didAddRoomToZone: "didAddRoomToZone"
        case .didRemoveRoomFromZone: "didRemoveRoomFromZone"
        case .didAddAccessory: "didAddAccessory"
        case .didRemoveAccessory: "didRemoveAccessory"
        case .didUpdateRoomForAccessory: "didUpdateRoomForAccessory"
        case .didUpdateNameForAccessory: "didUpdateNameForAccessory"
        case .didAddUser: "didAddUser"
        case .didRemoveUser: "didRemoveUser"
        case .didAddActionSet: "didAddActionSet"
        case .didRemoveActionSet: "didRemoveActionSet"
        case .didUpdateNameForActionSet: "didUpdateNameForActionSet"
        case .didUpdateActionsForActionSet: "didUpdateActionsForActionSet"
        case .didExecuteActionSet: "didExecuteActionSet"
        case .didAddTrigger: "didAddTrigger"
        case .didRemoveTrigger: "didRemoveTrigger"
        case .didUpdateNameForTrigger: "didUpdateNameForTrigger"
        case .didUpdateTrigger: "didUpdateTrigger"
        case .didFireTrigger: "didFireTrigger"
        case .accessoryDidUpdateReachability: "accessoryDidUpdateReachability"
        case .didUpdateValueForCharacteristic: "didUpdateValueForCharacteristic"
        case .didFindNewAccessory: "didFindNewAccessory"
        case .didRemoveNewAccessory: "didRemoveNewAccessory"
        }
    }
}

/// What ``HomeEvent/didUpdateTrigger(home:trigger:change:)`` changed about an automation.
package enum TriggerChange: String, Sendable, Hashable {
    /// It was turned on or off (by an administrator, or by itself after its one firing).
    case enabled
    /// An action set it ran was removed from the home: it runs the rest, or nothing when none is left.
    case actionSets
    /// An administrator gave it another event, other action sets or other options (`updateTrigger`).
    case definition
}
