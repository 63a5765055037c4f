import Foundation
import HomeModel
import JSON

/// The JSON payloads of the MQTT contract (docs/mqtt.md), from model snapshots. Key order is fixed, so the same home always
/// renders to the same bytes. Accounts never appear: users are shown by display name and role only.
package enum Rendering {
    /// `B/$homes`: the homes, in order, and which one is primary.
    static func homes(_ homes: [Home]) -> JSON {
        .array(homes.map { .object([("name", .string($0.name)), ("primary", .bool($0.isPrimary))]) })
    }

    /// `B/$discovered`: accessories that drivers found and that belong to no home yet.
    static func discovered(_ accessories: [Accessory]) -> JSON {
        .array(
            accessories.map { accessory in
                var fields: [(key: String, value: JSON)] = [
                    ("id", .string(accessory.id.rawValue)),
                    ("name", .string(accessory.name)),
                    ("category", .string(accessory.category.rawValue)),
                    ("manufacturer", .string(accessory.manufacturer)),
                    ("model", .string(accessory.model)),
                    ("bridged", .array(accessory.bridgedAccessories.map { .string($0.rawValue) })),
                ]
                if !accessory.unmappedFeatures.isEmpty {
                    fields.append(("unmapped", .array(accessory.unmappedFeatures.map { .string($0) })))
                }
                if accessory.needsPairing { fields.append(("needsPairing", .bool(true))) }
                if let deviceName = accessory.deviceName { fields.append(("deviceName", .string(deviceName))) }
                return .object(fields)
            })
    }

    /// `B/<home>/$layout`: the whole home as clients may see it, its head, then each accessory's and
    /// automation's entry taken from `fragments` (which renders only those that changed since it last
    /// saw them), then its tail.
    static func layoutBytes(_ home: Home, fragments: inout LayoutFragments) -> [UInt8] {
        var bytes = JSON.object(layoutHead(home)).bytes
        bytes.removeLast()  // the head's "}"
        bytes += Array(#","accessories":["#.utf8)
        for (index, accessory) in home.accessories.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += fragments.bytes(for: accessory, in: home, room: roomName(accessory.room, in: home))
        }
        bytes.append(UInt8(ascii: "]"))
        for (key, value) in layoutTail(home, withTriggers: false) {
            var member = JSON.object([(key, value)]).bytes
            member[0] = UInt8(ascii: ",")  // the member's "{"
            member.removeLast()  // its "}"
            if key == "triggers" {
                member.removeLast()  // the empty array's "]"
                for (index, trigger) in home.triggers.enumerated() {
                    if index > 0 { member.append(UInt8(ascii: ",")) }
                    member += fragments.bytes(for: trigger, in: home)
                }
                member.append(UInt8(ascii: "]"))
            }
            bytes += member
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    static func layoutHead(_ home: Home) -> [(key: String, value: JSON)] {
        [
            ("name", .string(home.name)),
            ("primary", .bool(home.isPrimary)),
            ("defaultRoom", .string(home.defaultRoom.name)),
            ("location", ScheduleFields.layout(home.location)),
            (
                "rooms",
                .array(home.allRooms.map { .object([("name", .string($0.name)), ("default", .bool($0.isDefault))]) })
            ),
            (
                "zones",
                .array(
                    home.zones.map { zone in
                        .object([
                            ("name", .string(zone.name)),
                            ("rooms", .array(zone.rooms.compactMap { home.room($0).map { .string($0.name) } })),
                        ])
                    })
            ),
        ]
    }

    /// The members after the accessories; `triggers` empty unless `withTriggers`.
    static func layoutTail(_ home: Home, withTriggers: Bool = true) -> [(key: String, value: JSON)] {
        [
            (
                "actionSets",
                .array(
                    home.actionSets.map { actionSet in
                        .object([
                            ("name", .string(actionSet.name)),
                            ("actions", .array(actionSet.actions.map { action($0, in: home) })),
                        ])
                    })
            ),
            ("triggers", .array(withTriggers ? home.triggers.map { trigger($0, in: home) } : [])),
            (
                "users",
                .array(home.users.map { .object([("name", .string($0.name)), ("role", .string($0.role.rawValue))]) })
            ),
        ]
    }

    static func accessoryLayout(_ accessory: Accessory, in home: Home) -> JSON {
        var fields: [(key: String, value: JSON)] = [("name", .string(accessory.name))]
        if let deviceName = accessory.deviceName { fields.append(("deviceName", .string(deviceName))) }
        fields += [
            ("room", .string(roomName(accessory.room, in: home))),
            ("category", .string(accessory.category.rawValue)),
            ("manufacturer", .string(accessory.manufacturer)),
            ("model", .string(accessory.model)),
            ("reachable", .bool(accessory.isReachable)),
            ("bridge", accessory.bridge.flatMap { home.accessory($0) }.map { .string($0.name) } ?? .null),
            (
                "bridged",
                .array(accessory.bridgedAccessories.compactMap { home.accessory($0).map { .string($0.name) } })
            ),
            (
                "services",
                .array(
                    accessory.services.map { service in
                        .object([
                            ("name", .string(service.name)),
                            ("type", .string(service.type.rawValue)),
                            ("characteristics", .array(service.characteristics.map(characteristicLayout))),
                        ])
                    })
            ),
        ]
        return .object(fields)
    }

    private static func characteristicLayout(_ characteristic: Characteristic) -> JSON {
        let metadata = characteristic.metadata
        var members: [(key: String, value: JSON)] = [
            ("type", .string(characteristic.type.rawValue)),
            ("format", .string(metadata.format.rawValue)),
        ]
        if let unit = metadata.unit { members.append(("unit", .string(unit.rawValue))) }
        if let minimum = metadata.minimumValue { members.append(("min", .number(minimum))) }
        if let maximum = metadata.maximumValue { members.append(("max", .number(maximum))) }
        if let step = metadata.stepValue { members.append(("step", .number(step))) }
        if let maxLength = metadata.maxLength { members.append(("maxLength", .integer(maxLength))) }
        if let validValues = metadata.validValues {
            members.append(("validValues", .array(validValues.map { .integer($0) })))
        }
        if let validStrings = metadata.validStrings {
            members.append(("validStrings", .array(validStrings.map { .string($0) })))
        }
        members.append(("permissions", .array(metadata.permissions.names.map { .string($0) })))
        return .object(members)
    }

    static func trigger(_ trigger: Trigger, in home: Home) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("name", .string(trigger.name)), ("enabled", .bool(trigger.isEnabled)),
            ("active", .bool(trigger.isActive)),
        ]
        if let event = trigger.event.characteristic {
            members += names(event.accessory, event.service, event.characteristic, in: home)
        }
        switch trigger.event {
        case .characteristic(_, let triggerValue):
            members.append(("value", triggerValue.map(value) ?? .null))
        case .threshold(_, let range):
            members.append(("range", TriggerFields.layout(range)))
        case .schedule(let schedule):
            members += ScheduleFields.layout(schedule)
            members.append(("nextFiring", ScheduleFields.layout(home.nextFirings[trigger.id], in: home)))
        }
        members.append(
            ("actionSets", .array(trigger.actionSets.compactMap { home.actionSet($0).map { .string($0.name) } })))
        if trigger.options.executeOnce { members.append(("executeOnce", .bool(true))) }
        if let turnBackAfter = trigger.options.turnBackAfter {
            members.append(("turnBackAfter", .integer(Int(turnBackAfter.components.seconds))))
        }
        if let catchUpGrace = trigger.options.catchUpGrace {
            members.append(("catchUpGrace", .integer(Int(catchUpGrace.components.seconds))))
        }
        if !trigger.conditions.isEmpty {
            members.append(("conditions", TriggerFields.layout(trigger.conditions, in: home)))
        }
        return .object(members)
    }

    private static func action(_ action: Action, in home: Home) -> JSON {
        .object(
            names(action.accessory, action.service, action.characteristic, in: home) + [("value", value(action.value))])
    }

    /// A characteristic's `accessory`, `service` and `characteristic` members, named as `home` names
    /// them; an object it no longer has, by its id.
    static func names(
        _ accessory: AccessoryID, _ service: ServiceID, _ characteristic: CharacteristicType, in home: Home
    ) -> [(key: String, value: JSON)] {
        let found = home.accessory(accessory)
        return [
            ("accessory", .string(found?.name ?? accessory.rawValue)),
            ("service", .string(found?.service(service)?.name ?? service.rawValue)),
            ("characteristic", .string(characteristic.rawValue)),
        ]
    }

    /// `B/<home>/<room>/<accessory>/$state`: every published value, `{"<service>":{"<characteristic>":value}}`
    /// (a service without one is left out). Written without a JSON tree: a value change renders its
    /// accessory's `$state`, and building the tree cost as much as writing it.
    static func stateBytes(_ accessory: Accessory) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "{")]
        output.reserveCapacity(128)
        var isFirstService = true
        for service in accessory.services {
            var isFirstValue = true
            for characteristic in service.characteristics where characteristic.isPublished {
                guard let value = characteristic.value, !characteristic.type.isEvent else { continue }
                if isFirstValue {
                    if !isFirstService { output.append(UInt8(ascii: ",")) }
                    JSON.writeString(service.name, to: &output)
                    output.append(UInt8(ascii: ":"))
                    output.append(UInt8(ascii: "{"))
                    isFirstService = false
                    isFirstValue = false
                } else {
                    output.append(UInt8(ascii: ","))
                }
                JSON.writeString(characteristic.type.rawValue, to: &output)
                output.append(UInt8(ascii: ":"))
                Self.value(value).write(to: &output)
            }
            if !isFirstValue { output.append(UInt8(ascii: "}")) }
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// A characteristic value as JSON (data as base64 text).
    package static func value(_ value: CharacteristicValue) -> JSON {
        switch value {
        case .bool(let bool): .bool(bool)
        case .int(let int): .integer(int)
        case .float(let double): .number(double)
        case .string(let string): .string(string)
        case .data(let data): .string(data.base64EncodedString())
        }
    }

    /// The topic level of a room: its name (the default room's name is its reserved `$default`).
    package static func roomName(_ room: RoomID?, in home: Home) -> String {
        room.flatMap { home.room($0)?.name } ?? home.defaultRoom.name
    }
}
