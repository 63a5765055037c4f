import Foundation

/// A home: HomeKit's `HMHome`, as a value. Snapshots of it are what the model hands out.
package struct Home: Sendable, Hashable, Identifiable {
    package let id: HomeID
    package internal(set) var name: String
    /// Whether this is the manager's primary home.
    package internal(set) var isPrimary: Bool
    /// The room for the entire home (`roomForEntireHome`); its name is ``HomeName/defaultRoom``.
    package internal(set) var defaultRoom: Room
    /// The rooms users made, in the order they were added (the default room is not among them).
    package internal(set) var rooms: [Room] = []
    package internal(set) var zones: [Zone] = []
    /// Every accessory, bridges and bridged accessories alike, in the order they were added.
    package internal(set) var accessories: [Accessory] = []
    package internal(set) var actionSets: [ActionSet] = []
    package internal(set) var users: [User]
    /// The home's automations, in the order they were added.
    package internal(set) var triggers: [Trigger] = []
    /// Where the home is, for its schedules' time zone and its sunrise and sunset; `nil` until an
    /// administrator sets it.
    package internal(set) var location: HomeLocation? = nil
    /// When each of its schedule automations fires next, as the schedule service planned it: an
    /// automation that fires no more (or is off) has none. Not stored: planned again at start.
    package internal(set) var nextFirings: [TriggerID: Date] = [:]
    /// Where names were found among `accessories`, a hint for ``accessoryIndex(named:)``; shared by
    /// copies, and not part of the value.
    let accessoryNamePositions = PositionHint<String>()
    /// Where rooms were found among `rooms`, a hint for ``room(_:)``; shared and not part of the value alike.
    let roomPositions = PositionHint<RoomID>()
    /// Where accessories were found among `accessories`, a hint for ``accessory(_:)``; alike.
    let accessoryPositions = PositionHint<AccessoryID>()
    /// Where automations were found among `triggers`, a hint for ``trigger(_:)``; shared and not part
    /// of the value alike.
    let triggerPositions = PositionHint<TriggerID>()

    /// The default room followed by the user-made rooms.
    package var allRooms: [Room] { [defaultRoom] + rooms }

    package func zone(_ id: ZoneID) -> Zone? { zones.first { $0.id == id } }
    package func actionSet(_ id: ActionSetID) -> ActionSet? { actionSets.first { $0.id == id } }
    package func accessories(in room: RoomID) -> [Accessory] { accessories.filter { $0.room == room } }
    /// `account`'s role in this home; nil when it is no user of it.
    package func role(of account: String) -> Role? { users.first { $0.account == account }?.role }
}

/// A room. It belongs to one home.
package struct Room: Sendable, Hashable, Identifiable {
    package let id: RoomID
    package internal(set) var name: String
    /// Whether this is the home's default room, which cannot be renamed, removed or zoned.
    package let isDefault: Bool
}

/// A zone: a named group of rooms (upstairs, bedrooms). A room may be in several zones.
package struct Zone: Sendable, Hashable, Identifiable {
    package let id: ZoneID
    package internal(set) var name: String
    package internal(set) var rooms: [RoomID]
}

/// A member's role in a home.
package enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    /// The account that created the home: may do everything.
    case administrator
    /// An account the administrator added: may identify, read, write, observe and execute action sets.
    case guest

    /// Whether the role may change the layout (homes, rooms, zones, accessories, action sets, names)
    /// and the users.
    package var mayChangeLayout: Bool { self == .administrator }
}

/// A member of a home. Others see only its display name and role; the account stays inside the model.
package struct User: Sendable, Hashable, Identifiable {
    package let id: UserID
    package internal(set) var name: String
    package let role: Role
    let account: String
}

/// A device in a home, or found by a driver and not yet in a home.
package struct Accessory: Sendable, Hashable, Identifiable {
    package let id: AccessoryID
    package internal(set) var name: String {
        didSet { nameKeyHash = HomeName.keyHash(name) }
    }
    /// ``HomeName/keyHash(_:)`` of `name`: lookups and the namespace check compare it before the
    /// names, so a home of 10,000 accessories is built without comparing 50 million names.
    private(set) var nameKeyHash: Int
    package var category: AccessoryCategory
    package var manufacturer: String
    package var model: String
    /// The bridge this accessory sits behind, if any.
    package var bridge: AccessoryID?
    /// The accessories behind this one when it is a bridge.
    package var bridgedAccessories: [AccessoryID]
    package var services: [Service]
    /// Whether the accessory can be reached now. Not persisted: after a restart it is false until its
    /// driver reports it.
    package var isReachable: Bool
    /// The room it is in; `nil` only while it belongs to no home.
    package internal(set) var room: RoomID?
    /// What the driver found on the device but cannot offer as a characteristic (a zigbee2mqtt
    /// expose with no mapping), so the accessory browser can say so. Not persisted.
    package var unmappedFeatures: [String] = []
    /// The accessory must be paired with its setup code before it can join a home (an unpaired
    /// HomeKit accessory: `pairAccessory`, not `addAccessory`). Not persisted.
    package var needsPairing = false
    /// The name the device gives itself, when it is not a valid name here (`Fan-2 (Bedroom)` is
    /// offered as `Fan 2 Bedroom`), kept with the accessory and shown beside its name (`$discovered`,
    /// `$layout`).
    package var deviceName: String?

    package var isBridge: Bool { category == .bridge || !bridgedAccessories.isEmpty }

    /// Describes an accessory the way a driver reports it.
    package init(
        id: AccessoryID,
        name: String,
        category: AccessoryCategory,
        manufacturer: String = "",
        model: String = "",
        bridge: AccessoryID? = nil,
        bridgedAccessories: [AccessoryID] = [],
        services: [Service],
        isReachable: Bool = true
    ) {
        self.id = id
        self.name = name
        self.nameKeyHash = HomeName.keyHash(name)
        self.category = category
        self.manufacturer = manufacturer
        self.model = model
        self.bridge = bridge
        self.bridgedAccessories = bridgedAccessories
        self.services = services
        self.isReachable = isReachable
    }

    package func service(_ id: ServiceID) -> Service? { services.first { $0.id == id } }

    package func characteristic(_ service: ServiceID, _ type: CharacteristicType) -> Characteristic? {
        self.service(service)?.characteristics.first { $0.type == type }
    }

    /// Drops the values of event characteristics (a button's last press): an accessory as a driver
    /// reports it carries them, but a press is not a state the model keeps.
    mutating func forgetEvents() {
        for s in services.indices {
            for c in services[s].characteristics.indices
            where services[s].characteristics[c].type.isEvent && services[s].characteristics[c].value != nil {
                services[s].characteristics[c].value = nil
            }
        }
    }

    /// Sets one characteristic's value; returns whether it changed (false also when there is no such
    /// characteristic). For drivers keeping their own copy; the model's copy changes only through the manager.
    @discardableResult
    package mutating func setValue(_ value: CharacteristicValue, service: ServiceID, type: CharacteristicType) -> Bool {
        guard let s = services.firstIndex(where: { $0.id == service }),
            let c = services[s].characteristics.firstIndex(where: { $0.type == type }),
            services[s].characteristics[c].value != value
        else { return false }
        services[s].characteristics[c].value = value
        return true
    }
}

/// A function of an accessory, with its characteristics.
package struct Service: Sendable, Hashable, Codable, Identifiable {
    package let id: ServiceID
    package var type: ServiceType
    package var name: String
    package var characteristics: [Characteristic]

    package init(id: ServiceID, type: ServiceType, name: String, characteristics: [Characteristic]) {
        self.id = id
        self.type = type
        self.name = name
        self.characteristics = characteristics
    }

    package func characteristic(_ type: CharacteristicType) -> Characteristic? {
        characteristics.first { $0.type == type }
    }
}

/// A typed value with its metadata. `value` is the last one known (read, written or reported).
package struct Characteristic: Sendable, Hashable, Codable {
    package let type: CharacteristicType
    package var metadata: CharacteristicMetadata
    package var value: CharacteristicValue?

    package init(type: CharacteristicType, metadata: CharacteristicMetadata, value: CharacteristicValue?) {
        self.type = type
        self.metadata = metadata
        self.value = value
    }

    /// A standard characteristic with HAP's metadata (``CharacteristicMetadata/standard(for:)``).
    package static func standard(_ type: CharacteristicType, _ value: CharacteristicValue?) -> Characteristic {
        Characteristic(
            type: type,
            metadata: .standard(for: type) ?? .init(format: .string, permissions: [.read]),
            value: value
        )
    }
}

/// A scene: named actions executed together.
package struct ActionSet: Sendable, Hashable, Identifiable {
    package let id: ActionSetID
    package internal(set) var name: String
    package internal(set) var actions: [Action]
}

/// One action of an action set: write `value` to a characteristic.
package struct Action: Sendable, Hashable, Codable {
    package let accessory: AccessoryID
    package let service: ServiceID
    package let characteristic: CharacteristicType
    package let value: CharacteristicValue

    /// The characteristic it writes.
    package var key: ValueKey { ValueKey(accessory: accessory, service: service, characteristic: characteristic) }
}

/// The outcome of one action when an action set runs.
package struct ActionResult: Sendable, Hashable {
    package let action: Action
    /// Why the action failed; `nil` when it succeeded.
    package let error: HomeError?
    package var succeeded: Bool { error == nil }
}

/// An automation: HomeKit's event trigger (`HMEventTrigger`) or timer trigger. When its event
/// happens (its characteristic takes the value it waits for, or its schedule comes due), the hub
/// runs its action sets, in order, as the home's administrator.
package struct Trigger: Sendable, Hashable, Identifiable {
    package let id: TriggerID
    package internal(set) var name: String
    /// A disabled trigger is kept but never fires.
    package internal(set) var isEnabled: Bool
    /// What fires it.
    package internal(set) var event: TriggerEvent
    /// The action sets it runs; one removed from the home leaves this list.
    package internal(set) var actionSets: [ActionSetID]
    /// What it does after a firing: turn itself off, turn its writes back after a while.
    package internal(set) var options = TriggerOptions()
    /// What must hold when its event fires for it to run; all of them.
    package internal(set) var conditions: [TriggerCondition] = []

    /// Whether its conditions hold in `home` at `now` (no condition: always).
    package func conditionsHold(in home: Home, at now: Date) -> Bool {
        conditions.allSatisfy { $0.holds(in: home, at: now) }
    }

    /// Whether it can fire: it is on and has an action set to run. One whose action sets were all
    /// removed stays on but does nothing until it is given one.
    package var isActive: Bool { isEnabled && !actionSets.isEmpty }

    /// Whether a change of `key` to `newValue` fires the trigger: one left with no action set (they
    /// were removed) has nothing to run and does not fire.
    package func isFired(by key: ValueKey, value newValue: CharacteristicValue) -> Bool {
        guard isActive, case .characteristic(let characteristic, let value) = event else {
            return false
        }
        return key == characteristic && (value == nil || value == newValue)
    }

    /// The characteristic and range of an active threshold trigger; `nil` otherwise.
    package var activeThreshold: (key: ValueKey, range: ThresholdRange)? {
        guard isActive, case .threshold(let key, let range) = event else { return nil }
        return (key, range)
    }

    /// The schedule the automation service runs: an enabled schedule trigger's, with an action set
    /// to run; `nil` otherwise.
    package var activeSchedule: TriggerSchedule? {
        guard isActive else { return nil }
        return event.schedule
    }
}

/// What an automation does after it fired, beside its action sets (HomeKit's execute-once, Apple
/// Home's "Turn off after").
package struct TriggerOptions: Sendable, Hashable {
    /// It turns itself off after its first firing (kept, as ``HomeEdit/enableTrigger(home:trigger:enabled:)``
    /// leaves it), so that "once, at the next sunset" needs no one to remove it.
    package var executeOnce: Bool
    /// After this long the characteristics it wrote return to the values they had before it fired;
    /// a new firing restarts the wait. Whole seconds, from one second to ``longestTurnBack``.
    package var turnBackAfter: Duration?
    /// How late a schedule's firing that came due while the hub was down may be and still run at
    /// start; nil for ``CatchUp/standardGrace`` (15 minutes), zero for never. Whole seconds, at most
    /// ``longestTurnBack``.
    package var catchUpGrace: Duration?

    /// A day: longer than a household's "off again after" and short enough to be a return, not a schedule.
    static let longestTurnBack = Duration.seconds(86_400)

    package init(executeOnce: Bool = false, turnBackAfter: Duration? = nil, catchUpGrace: Duration? = nil) {
        self.executeOnce = executeOnce
        self.turnBackAfter = turnBackAfter
        self.catchUpGrace = catchUpGrace
    }

    /// Checks the durations: whole seconds, a turn-back from one second and a grace from zero, both
    /// at most ``longestTurnBack``.
    package func validate() throws(HomeError) {
        if let turnBackAfter, !Self.isWholeSeconds(turnBackAfter, from: .seconds(1)) {
            throw HomeError(
                .invalidDuration,
                "A turn-back duration is whole seconds from 1 to \(Self.longestTurnBack.components.seconds), not \(turnBackAfter)."
            )
        }
        if let catchUpGrace, !Self.isWholeSeconds(catchUpGrace, from: .zero) {
            throw HomeError(
                .invalidDuration,
                "A catch-up grace is whole seconds from 0 to \(Self.longestTurnBack.components.seconds), not \(catchUpGrace)."
            )
        }
    }

    private static func isWholeSeconds(_ duration: Duration, from shortest: Duration) -> Bool {
        duration.components.attoseconds == 0 && duration >= shortest && duration <= longestTurnBack
    }
}

/// The values an automation's firing changed, to be written back when `due` comes (its
/// ``TriggerOptions/turnBackAfter``): stored, so that a restart neither loses nor repeats it.
/// Removing the automation or turning it off cancels it (``isKept(by:)``).
package struct PendingTurnBack: Sendable, Hashable {
    package let trigger: TriggerID
    package let home: HomeID
    /// When the values return.
    package var due: Date
    /// Each written characteristic with the value it had before the first firing of the wait.
    package var values: [Action]

    /// Whether `trigger` keeps its pending turn-back: while it is on, or when it executes once (it
    /// turned itself off as it fired, and the return belongs to that firing). The database keeps the
    /// same rule (``HomeDatabase/keepingTriggers``).
    static func isKept(by trigger: Trigger) -> Bool { trigger.isEnabled || trigger.options.executeOnce }
}

/// What one firing of an automation did: what set it off, each action set's results, or why it
/// could not run. ``HomeEvent/didFireTrigger(home:trigger:firing:)`` carries it, so `$events` can say it.
package struct TriggerFiring: Sendable, Hashable {
    package let trigger: String
    package let home: String
    package let cause: FiringCause
    package var actionSets: [ActionSetRun] = []
    /// Its conditions did not hold: nothing ran.
    package var conditionsFailed = false
    /// It stored a turn-back of what it wrote (its ``TriggerOptions/turnBackAfter``), still pending.
    package var leftTurnBack = false

    /// The actions that did not succeed; an action set that could not run at all counts as one.
    package var failedActions: Int {
        actionSets.reduce(0) { count, run in
            switch run.outcome {
            case .success(let results): count + results.count { !$0.succeeded }
            case .failure: count + 1
            }
        }
    }
}

/// One action set an automation ran: its name then, and each action's result, or why it could
/// not run at all.
package struct ActionSetRun: Sendable, Hashable {
    package let name: String
    package let outcome: Result<[ActionResult], HomeError>
}

/// One characteristic of one accessory, by ids: what a batched read asks of a driver, and what the
/// group commit keeps a value under.
package struct ValueKey: Hashable, Sendable {
    package let accessory: AccessoryID
    package let service: ServiceID
    package let characteristic: CharacteristicType

    package init(accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) {
        self.accessory = accessory
        self.service = service
        self.characteristic = characteristic
    }
}

/// A characteristic named the way requests name it: accessory and service by name, the characteristic
/// by type.
package struct CharacteristicReference: Sendable, Hashable {
    package var accessory: String
    package var service: String
    package var characteristic: CharacteristicType

    package init(accessory: String, service: String, characteristic: CharacteristicType) {
        self.accessory = accessory
        self.service = service
        self.characteristic = characteristic
    }
}

/// An action as a request names it.
package struct ActionRequest: Sendable, Hashable {
    package var target: CharacteristicReference
    package var value: CharacteristicValue

    package init(_ target: CharacteristicReference, _ value: CharacteristicValue) {
        self.target = target
        self.value = value
    }
}

/// A value read from an accessory.
package struct CharacteristicRead: Sendable, Hashable {
    package let accessory: AccessoryID
    package let accessoryName: String
    package let service: ServiceID
    package let serviceName: String
    package let characteristic: CharacteristicType
    package let value: CharacteristicValue
}

/// A home as the home list shows it to one account.
package struct HomeSummary: Sendable, Hashable, Identifiable {
    package let id: HomeID
    package let name: String
    package let isPrimary: Bool
    /// The account's role in this home.
    package let role: Role
}

/// Who is a member of which home, with the account: for the Gateway's broker access rules only, never
/// to be shown to other users.
package struct Membership: Sendable, Hashable {
    package let homeName: String
    package let account: String
    package let role: Role
}
