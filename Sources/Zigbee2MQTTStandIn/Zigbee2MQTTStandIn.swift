import AsyncMailbox
import Foundation
import JSON
import Logging
import MQTT
import ServiceLifecycle
import Synchronization

/// A stand-in for zigbee2mqtt on a real broker, for tests, the demo and the benchmark: it publishes
/// recorded zigbee2mqtt payloads (Sources/Zigbee2MQTTStandIn/Recordings, taken from zigbee2mqtt 2.12.1's own test
/// suite) and answers `/set`, `/get` and `bridge/request/permit_join` the way zigbee2mqtt does: a
/// set merges into the device's state and the whole state is published (keys sorted), a set it
/// cannot apply is an error on `bridge/logging`; a group's set goes to its members as well, and the
/// group's state and each member's are published. It invents no device: every device is an entry
/// of a recorded `bridge/devices`, every group one of a recorded `bridge/groups`.
package final class Zigbee2MQTTStandIn: Service, Sendable {
    let client: MQTTClient
    /// zigbee2mqtt's base topic: its default, as the driver's.
    let base = "zigbee2mqtt"
    private let logger: Logger
    let world: Mutex<World>

    struct World {
        var devices: [JSON]
        var groups: [JSON] = []
        var states: [String: [(key: String, value: JSON)]]
        /// Devices whose sets fail, with zigbee2mqtt's error text.
        var failing: [String: String] = [:]
        /// Devices that take sets silently (a device that went quiet).
        var silent: Set<String> = []
        /// Whether permit join is on, as the last `permit_join` request left it.
        var joinPermitted = false
        /// zigbee2mqtt's error for every `permit_join` (an adapter that fails), or nil.
        var joinRefusal: String?
        /// Every `/set` and `/get` payload, by device, in order (`set {…}`, `get {…}`).
        var requests: [(device: String, request: String)] = []
    }

    /// - Parameters:
    ///   - devices: the `bridge/devices` array (entries as zigbee2mqtt published them).
    ///   - states: each device's first state payload, by friendly name.
    ///   - groups: the `bridge/groups` array.
    package init(
        client: MQTTClient, devices: [JSON], states: [String: JSON], groups: [JSON] = [], logger: Logger
    ) {
        self.client = client
        self.logger = logger
        world = Mutex(
            World(devices: devices, groups: groups, states: states.mapValues { $0.objectMembers ?? [] }))
    }

    /// Connects, publishes the bridge, its devices and their states (retained, as zigbee2mqtt does),
    /// and answers requests until shut down.
    package func run() async throws {
        try await start()
        // A graceful shutdown cancels the loop: the client's mailbox ends.
        await cancelWhenGracefulShutdown {
            for await message in self.client.messages { await self.handle(message) }
        }
        await client.disconnect()
    }

    /// Connects and publishes everything; returns when the broker has it (a test then serves it).
    package func start() async throws {
        try await client.connect()
        // Friendly names may contain '/', so `+/set` is not enough; its own publishes are not echoed.
        let noLocal: MQTTSubscribeOptions = client.configuration.protocolVersion == .v5 ? [.noLocal] : []
        try await client.subscribe(to: ["\(base)/#"], qos: .atLeastOnce, options: noLocal)
        try await publish("bridge/state", .object([("state", .string("online"))]), retain: true)
        try await publishDevices()
        try await publish("bridge/groups", .array(world.withLock { $0.groups }), retain: true)
        let (names, states) = world.withLock { world in (world.devices.compactMap(\.friendlyName), world.states) }
        for name in names {
            try await publish("\(name)/availability", .object([("state", .string("online"))]), retain: true)
            if let state = states[name] { try await publish(name, .object(state), retain: true) }
        }
    }

    // MARK: Answering

    func handle(_ message: MQTTMessage) async {
        let topic = message.topic
        guard topic.hasPrefix(base + "/") else { return }
        let rest = String(topic.dropFirst(base.count + 1))
        do {
            if rest == "bridge/request/permit_join" {
                try await permitJoin(message.payload)
            } else if rest.hasSuffix("/set") {
                try await set(String(rest.dropLast(4)), message.payload)
            } else if rest.hasSuffix("/get") {
                let name = String(rest.dropLast(4))
                world.withLock { $0.requests.append((name, "get " + String(decoding: message.payload, as: UTF8.self))) }
                if let state = world.withLock({ $0.states[name] }) {
                    try await publish(name, .object(state), retain: true)
                }
            }
        } catch {
            logger.error(
                "stand-in zigbee2mqtt: could not answer", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }

    private func set(_ name: String, _ payload: [UInt8]) async throws {
        enum Outcome {
            case unknown, error(String), silent
            /// The states to publish: the device's, or a group's and its members'.
            case states([(name: String, state: [(key: String, value: JSON)])])
        }
        let outcome = world.withLock { world -> Outcome in
            world.requests.append((name, "set " + String(decoding: payload, as: UTF8.self)))
            let targets: [JSON]
            if let device = world.devices.first(where: { $0.friendlyName == name }) {
                targets = [device]
            } else if let group = world.groups.first(where: { $0.friendlyName == name }) {
                targets = world.devices.filter { group.hasMember($0) }
            } else {
                return .unknown
            }
            guard let json = try? JSON.parse(payload), let fields = json.objectMembers else {
                return .error("Invalid message '\(String(decoding: payload, as: UTF8.self))', skipping...")
            }
            let settable = targets.reduce(into: Set<String>()) { $0.formUnion($1.settableProperties) }
            for (key, value) in fields where !settable.contains(key) {
                return .error("No converter available for '\(key)' on '\(name)': (\(value.serialized))")
            }
            if let error = world.failing[name] {
                return .error("Publish 'set' '\(fields.first?.key ?? "")' to '\(name)' failed: '\(error)'")
            }
            if world.silent.contains(name) { return .silent }
            var published: [(name: String, state: [(key: String, value: JSON)])] = []
            for target in [name] + targets.compactMap(\.friendlyName)
            where !published.contains(where: { $0.name == target }) {
                let state = Self.merging(fields, into: world.states[target] ?? [])
                world.states[target] = state
                published.append((target, state))
            }
            return .states(published)
        }
        switch outcome {
        case .unknown, .silent: return
        case .error(let text):
            try await publish(
                "bridge/logging",
                .object([("level", .string("error")), ("message", .string(text)), ("namespace", .string("z2m"))]),
                retain: false)
        case .states(let states):
            for (target, state) in states { try await publish(target, .object(state), retain: true) }
        }
    }

    /// A state with a set's fields taken in, keys sorted. Switched off, a light does not take the
    /// brightness sent with it (zigbee2mqtt's tests).
    static func merging(
        _ fields: [(key: String, value: JSON)], into state: [(key: String, value: JSON)]
    ) -> [(key: String, value: JSON)] {
        var state = state
        let off = fields.compactMap { field -> String? in
            guard field.key == "state" || field.key.hasPrefix("state_"), field.value == .string("OFF") else {
                return nil
            }
            return "brightness" + field.key.dropFirst("state".count)
        }
        for (key, value) in fields where value != .string("") && !off.contains(key) {
            if let index = state.firstIndex(where: { $0.key == key }) {
                state[index].value = value
            } else {
                state.append((key, value))
            }
        }
        state.sort { $0.key < $1.key }
        return state
    }

    private func permitJoin(_ payload: [UInt8]) async throws {
        let json = try? JSON.parse(payload)
        var response: [(key: String, value: JSON)]
        if let refusal = world.withLock({ $0.joinRefusal }) {
            response = [("data", .object([])), ("error", .string(refusal)), ("status", .string("error"))]
        } else if let time = json?["time"], case .integer(let seconds) = time {
            world.withLock { $0.joinPermitted = seconds > 0 }
            response = [("data", .object([("time", time)])), ("status", .string("ok"))]
        } else {
            response = [("data", .object([])), ("error", .string("Invalid payload")), ("status", .string("error"))]
        }
        if let transaction = json?["transaction"] { response.append(("transaction", transaction)) }
        try await publish("bridge/response/permit_join", .object(response), retain: false)
    }

    func publishDevices() async throws {
        let devices = world.withLock { $0.devices }
        try await publish("bridge/devices", .array(devices), retain: true)
    }

    func publish(_ suffix: String, _ json: JSON, retain: Bool) async throws {
        try await client.publish("\(base)/\(suffix)", payload: json.bytes, qos: .atLeastOnce, retain: retain)
    }
}

extension JSON {
    var friendlyName: String? { self["friendly_name"]?.stringValue }

    /// Whether this `bridge/groups` entry lists `device` (a `bridge/devices` entry) as a member.
    func hasMember(_ device: JSON) -> Bool {
        guard case .array(let members)? = self["members"], let ieee = device["ieee_address"]?.stringValue else {
            return false
        }
        return members.contains { $0["ieee_address"]?.stringValue == ieee }
    }

    /// The properties of a `bridge/devices` entry that zigbee2mqtt accepts in `/set` (access bit 2),
    /// at any depth of its exposes.
    var settableProperties: Set<String> {
        var properties: Set<String> = []
        func collect(_ expose: JSON) {
            if let property = expose["property"]?.stringValue, case .integer(let access)? = expose["access"],
                access & 2 != 0
            {
                properties.insert(property)
            }
            if case .array(let features)? = expose["features"] { features.forEach(collect) }
        }
        if case .array(let exposes)? = self["definition"]?["exposes"] { exposes.forEach(collect) }
        return properties
    }
}
