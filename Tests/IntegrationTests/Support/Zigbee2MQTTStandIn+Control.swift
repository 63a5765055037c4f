import AsyncMailbox
import Foundation
import JSON
import MQTT
import Synchronization

@testable import Zigbee2MQTTStandIn

/// What a test does to the stand-in's network: states, availability, renames, joins and leaves,
/// devices that fail or go quiet.
extension Zigbee2MQTTStandIn {
    /// Answers requests until the client disconnects (for callers that run `start()` themselves).
    func serve() async {
        for await message in client.messages { await handle(message) }
    }

    func stop() async { await client.disconnect() }

    /// Publishes a device's state as given (any bytes: a broken payload is a test too).
    func publishState(_ name: String, _ payload: [UInt8], retain: Bool = true) async throws {
        try await client.publish("\(base)/\(name)", payload: payload, qos: .atLeastOnce, retain: retain)
    }

    /// zigbee2mqtt's availability of one device (2.x JSON form, or 1.x plain with `legacy`).
    func setAvailability(_ name: String, online: Bool, legacy: Bool = false) async throws {
        let word = online ? "online" : "offline"
        let payload = legacy ? Array(word.utf8) : JSON.object([("state", .string(word))]).bytes
        try await client.publish("\(base)/\(name)/availability", payload: payload, qos: .atLeastOnce, retain: true)
    }

    func setBridgeState(online: Bool) async throws {
        try await publish("bridge/state", .object([("state", .string(online ? "online" : "offline"))]), retain: true)
    }

    /// Renames a device as `bridge/request/device/rename` does: the new `bridge/devices`, the state on
    /// the new topic, the old retained topics cleared.
    func rename(_ old: String, to new: String) async throws {
        let state = world.withLock { world -> [(key: String, value: JSON)]? in
            world.devices = world.devices.map {
                $0.friendlyName == old ? $0.replacing("friendly_name", .string(new)) : $0
            }
            let state = world.states.removeValue(forKey: old)
            world.states[new] = state
            return state
        }
        try await client.publish("\(base)/\(old)", payload: [], qos: .atLeastOnce, retain: true)
        try await client.publish("\(base)/\(old)/availability", payload: [], qos: .atLeastOnce, retain: true)
        try await publishDevices()
        try await publish("\(new)/availability", .object([("state", .string("online"))]), retain: true)
        if let state { try await publish(new, .object(state), retain: true) }
    }

    /// Two devices swap names in one step, as a user renaming both while homegate was away would
    /// leave them: one `bridge/devices` with both changed.
    func swapNames(_ first: String, _ second: String) async throws {
        world.withLock { world in
            world.devices = world.devices.map { device in
                switch device.friendlyName {
                case first: device.replacing("friendly_name", .string(second))
                case second: device.replacing("friendly_name", .string(first))
                default: device
                }
            }
            let a = world.states[first]
            world.states[first] = world.states[second]
            world.states[second] = a
        }
        try await publishDevices()
    }

    /// zigbee2mqtt answers every `permit_join` with `error` (nil: as usual).
    func refuseJoins(with error: String?) {
        world.withLock { $0.joinRefusal = error }
    }

    /// A device leaves the network: `bridge/event` device_leave (when `announced`), then
    /// `bridge/devices` without it (when `relisted`).
    func leave(_ name: String, announced: Bool = true, relisted: Bool = true) async throws {
        let ieee = world.withLock { world -> String? in
            let ieee = world.devices.first { $0.friendlyName == name }?["ieee_address"]?.stringValue
            world.devices.removeAll { $0.friendlyName == name }
            return ieee
        }
        guard let ieee else { return }
        if announced {
            try await publish(
                "bridge/event",
                .object([
                    ("data", .object([("friendly_name", .string(name)), ("ieee_address", .string(ieee))])),
                    ("type", .string("device_leave")),
                ]), retain: false)
        }
        if relisted { try await publishDevices() }
    }

    /// Publishes `bridge/devices` as given (a broken one is a test too).
    func publishRawDevices(_ payload: [UInt8]) async throws {
        try await client.publish("\(base)/bridge/devices", payload: payload, qos: .atLeastOnce, retain: true)
    }

    /// Publishes `bridge/groups` with only the groups `keep` holds (zigbee2mqtt after a group was removed).
    func keepGroups(where keep: (JSON) -> Bool) async throws {
        let groups = world.withLock { world in
            world.groups = world.groups.filter(keep)
            return world.groups
        }
        try await publish("bridge/groups", .array(groups), retain: true)
    }

    /// Makes sets to `name` fail with `error` (nil: succeed again).
    func failSets(to name: String, with error: String?) {
        world.withLock { $0.failing[name] = error }
    }

    /// Makes `name` take sets without answering (nil effect, no state publish).
    func silence(_ name: String, _ silent: Bool = true) {
        world.withLock { world in
            if silent { world.silent.insert(name) } else { world.silent.remove(name) }
        }
    }

    /// The `/set` and `/get` requests `device` received, in order: `set {"brightness":203}`.
    func requests(to device: String) -> [String] {
        world.withLock { $0.requests.filter { $0.device == device }.map(\.request) }
    }

    /// A device joins while the network is open, as zigbee2mqtt reports it: `device_joined`, the
    /// interview, then `bridge/devices` with the device (a recorded entry), its availability and state.
    func join(_ device: JSON, state: JSON?) async throws {
        guard let name = device.friendlyName, let ieee = device["ieee_address"] else { return }
        guard world.withLock({ $0.joinPermitted }) else {
            throw StandInError("the network is closed: nothing can join")
        }
        let data = JSON.object([("friendly_name", .string(name)), ("ieee_address", ieee)])
        try await publish("bridge/event", .object([("data", data), ("type", .string("device_joined"))]), retain: false)
        for status in ["started", "successful"] {
            let interview = JSON.object([
                ("friendly_name", .string(name)), ("ieee_address", ieee), ("status", .string(status)),
            ])
            try await publish(
                "bridge/event", .object([("data", interview), ("type", .string("device_interview"))]), retain: false)
        }
        world.withLock { world in
            world.devices.append(device)
            if let state { world.states[name] = state.objectMembers }
        }
        try await publishDevices()
        try await publish("\(name)/availability", .object([("state", .string("online"))]), retain: true)
        if let state { try await publish(name, state, retain: true) }
    }
}

extension Zigbee2MQTTRecordings {
    /// The recorded availability payloads of `device` (or group), verbatim.
    func availabilities(of device: String) -> [String] {
        publishes.filter { $0.kind == "availability" && $0.device == device }.map(\.payload)
    }

    /// The recorded state publishes of `device`, verbatim.
    func states(of device: String) -> [String] {
        publishes.filter { $0.kind == "state" && $0.device == device }.map(\.payload)
    }

    /// The `bridge/groups` entries zigbee2mqtt publishes at startup (its test "Should publish groups
    /// on startup") in the recordings in `folder`, without the one whose id the recording left
    /// unresolved.
    static func groups(folder: String) throws -> [JSON] {
        for line in try String(contentsOfFile: "\(folder)/bridge-other.jsonl", encoding: .utf8).split(separator: "\n") {
            guard let record = try? JSON.parse(String(line)),
                record["topic"]?.stringValue == "zigbee2mqtt/bridge/groups",
                case .array(let entries)? = record["payload"]?["$stringify"]
            else { continue }
            return entries.filter { if case .integer = $0["id"] { true } else { false } }
        }
        return []
    }

    /// The folder of the recordings in a checkout: Sources/Zigbee2MQTTStandIn/Recordings under `root`.
    static func folder(root: String) -> String { "\(root)/Sources/Zigbee2MQTTStandIn/Recordings" }
}

extension JSON {
    func replacing(_ key: String, _ value: JSON) -> JSON {
        guard let members = objectMembers else { return self }
        return .object(members.map { $0.key == key ? ($0.key, value) : $0 })
    }
}

/// A test asked the stand-in for something zigbee2mqtt would not do.
struct StandInError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
