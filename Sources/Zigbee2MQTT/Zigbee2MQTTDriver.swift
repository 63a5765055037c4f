import AsyncMailbox
import Execution
import HomeModel
import JSON
import Logging
import MQTT
import OrderedCollections

/// zigbee2mqtt's devices and groups as accessories. Follows one zigbee2mqtt network through its MQTT
/// topics: the retained `bridge/devices` (devices by IEEE address, with their exposes),
/// `bridge/groups` (a group of lights, switches, covers or locks is one accessory, `group:<id>`,
/// with what its members offer), `bridge/state`,
/// `bridge/event`, each device's state and `availability`; writes go to `<device>/set` and are
/// confirmed by the device's next state publish carrying the values (or failed by zigbee2mqtt's
/// error on `bridge/logging`), reads go to `<device>/get`.
///
/// The IEEE address is the accessory's id, so a rename in zigbee2mqtt keeps the accessory, its room
/// and its action sets. The driver keeps no state on disk: zigbee2mqtt retains what it needs.
package actor Zigbee2MQTTDriver: JoinPermitting, ExecutorChoosingActor {
    package nonisolated let name = "zigbee2mqtt"
    package nonisolated let updates: AsyncStream<DriverUpdate>
    /// Values move only with the device's own state publishes (and a target once the device took it).
    package nonisolated var reportsConfirmedValues: Bool { true }
    /// The client's loop, if it has one: a state publish is read, mapped, recorded and published there.
    package nonisolated let executorChoice: ExecutorChoice
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executorChoice.unownedExecutor }

    private let sink: AsyncStream<DriverUpdate>.Continuation
    private let client: MQTTClient
    private let topics: Zigbee2MQTTTopics
    private let logger: Logger

    /// Devices by IEEE address, and groups by ``GroupDescription/accessoryKey``.
    private var devices: [String: Device] = [:]
    /// IEEE addresses in the order of `bridge/devices`.
    private var order: [String] = []
    /// The groups of `bridge/groups`, and the keys of those that are accessories, in its order.
    private var groups: [GroupDescription] = []
    private var groupOrder: [String] = []
    private var lastGroupsPayload: [UInt8] = []
    private var ieeeByName: [String: String] = [:]
    /// The last `bridge/devices` taken, to skip the same list again cheaply.
    private var lastDevicesPayload: [UInt8] = []
    /// Whether zigbee2mqtt says it is online (its retained `bridge/state`); nil until it said
    /// anything, and devices count as unreachable until it says online.
    private var bridgeOnline: Bool?
    private var connected = false
    /// A state or availability that came before its device was listed (retained messages arrive
    /// in topic order, not in the order they were published).
    private var early: [String: [(isAvailability: Bool, payload: [UInt8])]] = [:]
    /// The requests waiting for their answer, by id: a device's state publish (each in ``waiters``,
    /// which says what it must carry) or zigbee2mqtt's answer to a permit join (each in ``joins``).
    /// An answer goes into its request's stream, which keeps it for an asker that does not wait yet
    /// (it waits for the broker's PUBACK first); the first answer counts.
    private var replies: [Int: AsyncThrowingStream<JSON, any Error>.Continuation] = [:]
    private var waiters: [Waiter] = []
    /// The permit joins waiting, by transaction: the id of their reply.
    private var joins: [String: Int] = [:]
    private var nextRequest = 0
    private var reported: Set<String> = []

    /// - Parameters:
    ///   - client: a client for the broker zigbee2mqtt uses, not yet connected; the driver runs it.
    ///   - baseTopic: zigbee2mqtt's `mqtt.base_topic`.
    package init(client: MQTTClient, baseTopic: String = "zigbee2mqtt", logger: Logger) {
        self.client = client
        executorChoice = ExecutorChoice(client.loop, otherwise: "homegate-zigbee2mqtt")
        topics = Zigbee2MQTTTopics(base: baseTopic)
        self.logger = logger
        (updates, sink) = AsyncStream.makeStream()
    }

    // MARK: AccessoryDriver

    /// zigbee2mqtt's own word (its retained `bridge/state`), or that its broker is out of reach.
    package func condition() async -> DriverCondition? {
        guard connected else { return DriverCondition(isHealthy: false, "its broker is not connected") }
        switch bridgeOnline {
        case true?: return DriverCondition(isHealthy: true, "zigbee2mqtt is online")
        case false?: return DriverCondition(isHealthy: false, "zigbee2mqtt is offline")
        case nil: return DriverCondition(isHealthy: false, "zigbee2mqtt has not said that it is online")
        }
    }

    /// Connects (unless the client's own service did), subscribes to zigbee2mqtt's topics, and takes
    /// what arrives and what happens to the connection, on the driver's executor (the client's loop,
    /// if it has one), where the manager takes `updates` too; until cancelled or the client is closed.
    package func run() async {
        let client = client
        let filters = [topics.all]
        let noLocal: MQTTSubscribeOptions = client.configuration.protocolVersion == .v5 ? [.noLocal] : []
        // Prefers the loop, so each wait resumes here (ExecutorChoice.taskExecutor says why).
        await preferringChosenExecutor {
            await withDiscardingTaskGroup { group in
                group.addTask { [logger] in
                    do {
                        try await client.connect()
                        try await client.subscribe(to: filters, qos: .atLeastOnce, options: noLocal)
                    } catch let error as MQTTError where error.code == .clientClosed {
                        return  // stopped before it connected
                    } catch {
                        logger.error("zigbee2mqtt: could not subscribe", metadata: ["error": "\(error)"])
                    }
                }
                group.addTask { await self.receiveAll(client.messages) }
                group.addTask { await self.followConnection(client.connectionEvents()) }
            }
        }
    }

    package func stop() async {
        await client.disconnect()
        let stopped = HomeError(.communicationFailure, "The driver stopped.")
        for reply in replies.values { reply.finish(throwing: stopped) }
        (replies, waiters, joins) = ([:], [], [:])
        sink.finish()
    }

    package func accessories() async -> [Accessory] {
        (order + groupOrder).compactMap { devices[$0]?.accessory }
    }

    package func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        let device = try reachableDevice(accessory)
        guard let binding = device.mapped.bindings(of: service, characteristic) else {
            // A value the mapping fixed (a thermostat's TemperatureDisplayUnits): no property to ask.
            if let fixed = device.accessory.characteristic(service, characteristic)?.value { return fixed }
            throw HomeError(
                .notFound, "\(characteristic) is not a characteristic of \(device.description.friendlyName).")
        }
        if binding.isGettable {
            let topic = topics.get(device.description.friendlyName)
            let request = JSON.object([(binding.property, .string(""))]).bytes
            let state = try await send(
                request, to: topic, device: device.ieee, kind: "get", properties: [binding.property],
                expecting: [.present(binding.property)])
            if case .value(let value) = binding.read(state) { return value }
        }
        guard let value = devices[device.ieee]?.accessory.characteristic(service, characteristic)?.value else {
            throw HomeError(
                .communicationFailure,
                "\(device.description.friendlyName) has not reported \(binding.property) and cannot be asked for it.")
        }
        return value
    }

    package func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        let device = try reachableDevice(accessory)
        let request = try device.setRequest(for: values)
        guard case .object(let fields) = request.payload, !fields.isEmpty else { return }
        let topic = topics.set(device.description.friendlyName)
        _ = try await send(
            request.payload.bytes, to: topic, device: device.ieee, kind: "set", properties: Set(fields.map(\.key)),
            expecting: request.expectations, targets: request.targets)
        // A stop ends the targets the device was moving towards: they follow it again.
        let stopped = Set(
            values.filter { $0.characteristic == .holdPosition && $0.value == .bool(true) }.map(\.service))
        if !stopped.isEmpty, var device = devices[device.ieee] {
            device.pendingTargets = device.pendingTargets.filter { key, _ in
                !stopped.contains { key.hasPrefix("\($0)|") }
            }
            derivePositionStates(of: &device)
            devices[device.ieee] = device
        }
    }

    package func identify(_ accessory: AccessoryID) async throws {
        let device = try reachableDevice(accessory)
        guard let identify = device.mapped.identify else {
            throw HomeError(.notSupported, "\(device.description.friendlyName) has no way to identify itself.")
        }
        try await client.publish(
            topics.set(device.description.friendlyName),
            payload: JSON.object([(identify.property, identify.value)]).bytes,
            qos: .atLeastOnce)
    }

    // MARK: Permit join

    /// Asks zigbee2mqtt to let new devices join for `seconds` (0 closes the network again) and
    /// returns the seconds it says; zigbee2mqtt's error becomes `communicationFailure` with its words.
    package func permitJoin(seconds: Int) async throws -> Int {
        let (id, answer) = newReply()
        let transaction = "homegate-\(id)"
        joins[transaction] = id
        defer { joins[transaction] = nil }
        // `value` is what zigbee2mqtt 1.x needs; 2.x reads `time` only.
        let request = JSON.object([
            ("time", .integer(seconds)), ("transaction", .string(transaction)), ("value", .bool(seconds > 0)),
        ])
        let reply = try await send(request.bytes, to: topics.permitJoinRequest, reply: id, answer)
        return reply["time"]?.integerValue ?? seconds
    }

    // MARK: Waiting for the device

    /// Sends a request to a device and returns the state publish that confirms it: the waiter is in
    /// place before the request leaves, so the device cannot answer too early (an answer that comes
    /// before the broker's PUBACK waits in its reply's stream). With nothing to wait for (a write-only
    /// property), the broker's PUBACK is the confirmation.
    private func send(
        _ payload: [UInt8], to topic: String, device ieee: String, kind: String, properties: Set<String>,
        expecting expectations: [Expectation], targets: [CharacteristicWrite] = []
    ) async throws -> JSON {
        if expectations.isEmpty {
            try await client.publish(topic, payload: payload, qos: .atLeastOnce)
            if var device = devices[ieee] {
                takeTargets(targets, into: &device)
                devices[ieee] = device
            }
            return .object([])
        }
        let (id, answer) = newReply()
        waiters.append(
            Waiter(
                id: id, ieee: ieee, kind: kind, properties: properties, expectations: expectations, targets: targets))
        return try await send(payload, to: topic, reply: id, answer)
    }

    private func newReply() -> (id: Int, answer: AsyncThrowingStream<JSON, any Error>) {
        nextRequest += 1
        let (answer, reply) = AsyncThrowingStream<JSON, any Error>.makeStream()
        replies[nextRequest] = reply
        return (nextRequest, answer)
    }

    /// Publishes a request whose reply `id` is in place, and waits for its `answer`; cancelled, it fails.
    private func send(
        _ payload: [UInt8], to topic: String, reply id: Int, _ answer: AsyncThrowingStream<JSON, any Error>
    ) async throws -> JSON {
        defer { forget(reply: id) }
        do {
            try await client.publish(topic, payload: payload, qos: .atLeastOnce)
        } catch {
            finish(id, .failure(error))
        }
        for try await reply in answer { return reply }
        throw CancellationError()  // the stream of a cancelled task ends without an answer
    }

    private func finish(_ id: Int, _ result: Result<JSON, any Error>) {
        replies.removeValue(forKey: id)?.yield(with: result)
    }

    private func forget(reply id: Int) {
        replies[id] = nil
        waiters.removeAll { $0.id == id }
    }

    private func reachableDevice(_ accessory: AccessoryID) throws(HomeError) -> Device {
        guard let device = devices[accessory.rawValue], device.accessory.isReachable else {
            throw HomeError(.accessoryNotReachable, "The zigbee2mqtt device \(accessory) is not reachable.")
        }
        return device
    }

    // MARK: Messages

    /// Connection events come on their own stream, so they may be handled before or after the
    /// retained messages of the same connection: reachability is computed again on both sides.
    /// zigbee2mqtt's last word on `bridge/state` is kept across a reconnect (its retained copy
    /// comes again and corrects it).
    private func followConnection(_ events: AsyncStream<MQTTConnectionEvent>) async {
        for await event in events {
            switch event {
            case .connected:
                connected = true
            case .disconnected, .closed:
                connected = false
            }
            refreshReachability()
        }
    }

    private func receiveAll(_ messages: Mailbox<MQTTMessage>) async {
        for await message in messages { receive(message) }
    }

    private func receive(_ message: MQTTMessage) {
        guard let route = topics.route(message.topic) else { return }
        switch route {
        case .devices: devicesListed(message.payload)
        case .groups: groupsListed(message.payload)
        case .bridgeState: bridgeStateChanged(message.payload)
        case .event: event(message.payload)
        case .logging: logging(message.payload)
        case .permitJoinResponse: permitJoinAnswered(message.payload)
        case .device(let name): deviceMessage(name, isAvailability: false, message.payload, retained: message.retain)
        case .availability(let name):
            deviceMessage(name, isAvailability: true, message.payload, retained: message.retain)
        }
    }

    private func deviceMessage(_ name: String, isAvailability: Bool, _ payload: [UInt8], retained: Bool) {
        if let ieee = ieeeByName[name] {
            isAvailability ? availability(ieee, payload) : state(ieee, payload, retained: retained)
        } else if payload.count <= Self.earlyPayloadLimit, early[name] != nil || early.count < Self.earlyNamesKept {
            // Only the newest of each kind matters; groups and unknown names are bounded by the cap
            // and dropped at every bridge/devices.
            early[name, default: []].removeAll { $0.isAvailability == isAvailability }
            early[name]!.append((isAvailability, payload))
        }
    }

    /// How many unlisted names' early messages are kept (groups' states land here too), and the
    /// largest payload kept: at most about 64 MB.
    static let earlyNamesKept = 1_000
    static let earlyPayloadLimit = 65_536

    /// The entries of a retained list of `kind`s; nil when it is the payload taken `last`, or unreadable.
    private func read<Entry: ListEntry>(_ payload: [UInt8], last: inout [UInt8], of kind: String) -> [Entry]? {
        // zigbee2mqtt republishes the whole list (1.6 MB for 500 devices) on every join, leave, rename
        // and interview, and the broker sends it again on every reconnect: the same bytes change nothing.
        guard payload != last else { return nil }
        last = payload
        do {
            let (entries, problems) = try Entry.list(payload)
            for problem in problems { reportOnce(Entry.listTopic, problem, "skipped a malformed \(kind) entry") }
            return entries
        } catch {
            reportOnce(Entry.listTopic, "unreadable", "kept the \(kind)s known so far; \(Entry.listTopic): \(error)")
            return nil
        }
    }

    private func devicesListed(_ payload: [UInt8]) {
        guard let listed: [DeviceDescription] = read(payload, last: &lastDevicesPayload, of: "device") else { return }
        order = take(listed.filter(\.isAccessory), replacing: order, because: "it is no longer in bridge/devices")
        // A group offers what its members do: their exposes may have changed.
        rebuildGroups()
        // What is left waits for a group: all of it until bridge/groups came, then only groups'.
        if !lastGroupsPayload.isEmpty {
            let groupNames = Set(groups.map(\.friendlyName))
            early = early.filter { groupNames.contains($0.key) }
        }
    }

    private func groupsListed(_ payload: [UInt8]) {
        guard let listed: [GroupDescription] = read(payload, last: &lastGroupsPayload, of: "group") else { return }
        groups = listed
        rebuildGroups()
    }

    /// Makes the groups of `bridge/groups` whose members are known devices with a light, switch,
    /// cover or lock into accessories, and forgets the others.
    private func rebuildGroups() {
        let listed = groups.compactMap { group in
            group.asDevice(members: group.members.compactMap { devices[$0]?.description })
        }
        groupOrder = take(
            listed, replacing: groupOrder,
            because: "it is no longer a group of known lights, switches, covers or locks in bridge/groups")
        // Names follow the lists as a whole, so two devices that swapped names keep their own topics.
        ieeeByName = Dictionary(devices.values.map { ($0.description.friendlyName, $0.ieee) }) { first, _ in first }
    }

    /// Takes each of `listed` (the first of an address), forgets those of `known` no longer among them,
    /// and returns the addresses taken, in order.
    private func take(_ listed: [DeviceDescription], replacing known: [String], because reason: String) -> [String] {
        var taken: OrderedSet<String> = []
        for description in listed where taken.append(description.ieeeAddress).inserted {
            take(description)
        }
        for ieee in known where !taken.contains(ieee) { forget(ieee, because: reason) }
        return taken.elements
    }

    /// Takes a device (or a group) as listed: new, changed, renamed, or unchanged.
    private func take(_ description: DeviceDescription) {
        let mapped = ExposeMapping.map(description)
        let known = devices[description.ieeeAddress]
        var device = known ?? Device(description: description, mapped: mapped, accessory: mapped.accessory)
        let renamed = known.map { $0.description.friendlyName != description.friendlyName } ?? false
        if renamed {
            logger.notice(
                "zigbee2mqtt: \(device.description.friendlyName) is now called \(description.friendlyName)",
                metadata: ["ieee": "\(description.ieeeAddress)"])
        }
        if known != nil {
            guard renamed || device.mapped != mapped || device.description != description else { return }
            device.update(description, mapped)
        } else if !mapped.accessory.unmappedFeatures.isEmpty {
            let unmapped = mapped.accessory.unmappedFeatures.joined(separator: ", ")
            logger.info(
                "zigbee2mqtt: \(description.friendlyName) (\(description.vendor) \(description.model)): no mapping for \(unmapped)",
                metadata: ["ieee": "\(description.ieeeAddress)"])
        }
        device.accessory.isReachable = isReachable(device)
        devices[description.ieeeAddress] = device
        sink.yield(.found(device.accessory))
        if known == nil || renamed { replayEarly(description) }
    }

    private func replayEarly(_ description: DeviceDescription) {
        for (isAvailability, payload) in early.removeValue(forKey: description.friendlyName) ?? [] {
            isAvailability
                ? availability(description.ieeeAddress, payload)
                : state(description.ieeeAddress, payload, retained: true)
        }
    }

    private func forget(_ ieee: String, because reason: String) {
        guard let device = devices.removeValue(forKey: ieee) else { return }
        order.removeAll { $0 == ieee }
        groupOrder.removeAll { $0 == ieee }
        // The same lists again would bring it back.
        lastDevicesPayload = []
        lastGroupsPayload = []
        if ieeeByName[device.description.friendlyName] == ieee { ieeeByName[device.description.friendlyName] = nil }
        logger.notice(
            "zigbee2mqtt: \(device.description.friendlyName) is gone: \(reason)", metadata: ["ieee": "\(ieee)"])
        for waiter in waiters where waiter.ieee == ieee {
            finish(waiter.id, .failure(HomeError(.accessoryNotReachable, "The device left the network.")))
        }
        sink.yield(.lost(AccessoryID(ieee)))
    }

    /// Takes a state publish in. A retained one (or one that came before `bridge/devices`) is how
    /// the device was, not what it did: the presses it carries are old and are not passed on.
    private func state(_ ieee: String, _ payload: [UInt8], retained: Bool) {
        guard var device = devices[ieee] else { return }
        guard let json = try? JSON.parse(payload), case .object = json else {
            reportOnce(
                ieee, "state",
                "a state publish of \(device.description.friendlyName) is not a JSON object; kept the last good state")
            return
        }
        let (values, problems) = device.mapped.values(in: json)
        for problem in problems {
            reportOnce(
                ieee, "\(problem.property) invalid", "\(device.description.friendlyName): ignored \(problem.reason)")
        }
        for reported in values where !(retained && reported.characteristic.isEvent) {
            if reported.isTarget {
                // A target the device was sent stays until the device reports reaching it; otherwise
                // (moved by a wall switch, say) the target follows where the device is.
                let key = Device.key(reported.service, reported.characteristic)
                if let pending = device.pendingTargets[key] {
                    guard reported.value == pending else { continue }
                    device.pendingTargets[key] = nil
                }
            }
            record(reported.value, reported.service, reported.characteristic, of: &device)
        }
        let confirmed = waiters.filter {
            $0.ieee == ieee && replies[$0.id] != nil && $0.expectations.allSatisfy { $0.isMet(by: json) }
        }
        for waiter in confirmed {
            takeTargets(waiter.targets, into: &device)
        }
        derivePositionStates(of: &device)
        devices[ieee] = device
        for waiter in confirmed { finish(waiter.id, .success(json)) }
    }

    /// A cover without `motor_state`: its PositionState from where it is against the target it was
    /// sent and has not reached: opening (1) towards a higher position, closing (0) towards a lower
    /// one, else stopped (2).
    private func derivePositionStates(of device: inout Device) {
        for service in device.accessory.services
        where service.characteristic(.positionState) != nil
            && device.mapped.bindings(of: service.id, .positionState) == nil
        {
            let state = Self.positionState(
                current: service.characteristic(.currentPosition)?.value?.doubleValue,
                target: device.pendingTargets[Device.key(service.id, .targetPosition)]?.doubleValue)
            record(.int(state), service.id, .positionState, of: &device)
        }
    }

    static func positionState(current: Double?, target: Double?) -> Int {
        guard let current, let target, target != current else { return 2 }
        return target > current ? 1 : 0
    }

    /// The device took a command: the targets it was sent are its targets now (a stop ends them).
    private func takeTargets(_ targets: [CharacteristicWrite], into device: inout Device) {
        for target in targets {
            record(target.value, target.service, target.characteristic, of: &device)
            let reached =
                device.accessory.characteristic(target.service, Device.current(of: target.characteristic))?.value
                == target.value
            device.pendingTargets[Device.key(target.service, target.characteristic)] = reached ? nil : target.value
        }
    }

    /// Takes a value into the driver's copy and reports it when it changed.
    private func record(
        _ value: CharacteristicValue, _ service: ServiceID, _ type: CharacteristicType, of device: inout Device
    ) {
        guard type.isEvent || device.accessory.setValue(value, service: service, type: type) else { return }
        sink.yield(.value(device.accessory.id, service: service, characteristic: type, value))
    }

    private func availability(_ ieee: String, _ payload: [UInt8]) {
        // Empty: zigbee2mqtt cleared the retained availability (the device was renamed or removed).
        guard var device = devices[ieee], !payload.isEmpty else { return }
        guard let online = Self.onlineState(payload) else {
            reportOnce(
                ieee, "availability",
                "the availability of \(device.description.friendlyName) is neither online nor offline")
            return
        }
        device.available = online
        devices[ieee] = device
        updateReachability(ieee)
    }

    private func bridgeStateChanged(_ payload: [UInt8]) {
        guard let online = Self.onlineState(payload) else {
            reportOnce("bridge", "state", "bridge/state is neither online nor offline")
            return
        }
        if online != bridgeOnline { logger.notice("zigbee2mqtt is \(online ? "online" : "offline")") }
        bridgeOnline = online
        refreshReachability()
    }

    /// `{"state":"online"}` (2.x) or plain `online` (1.x), in any case: `{"state":"Offline"}` is
    /// in a real capture.
    static func onlineState(_ payload: [UInt8]) -> Bool? {
        let text: String =
            if let json = try? JSON.parse(payload), let state = json["state"]?.stringValue { state } else {
                String(decoding: payload, as: UTF8.self)
            }
        switch text.lowercased() {
        case "online": return true
        case "offline": return false
        default: return nil
        }
    }

    private func event(_ payload: [UInt8]) {
        guard let json = try? JSON.parse(payload), let type = json["type"]?.stringValue else {
            reportOnce("bridge", "event", "a bridge/event is not a JSON object with a type")
            return
        }
        let data = json["data"]
        let name = data?["friendly_name"]?.stringValue ?? "?"
        switch type {
        case "device_leave":
            if let ieee = data?["ieee_address"]?.stringValue {
                forget(ieee, because: "it left the network")
                // A group offers what its members do.
                rebuildGroups()
            }
        case "device_joined":
            logger.notice("zigbee2mqtt: \(name) joined; it is listed once interviewed")
        case "device_interview":
            logger.info("zigbee2mqtt: interview of \(name): \(data?["status"]?.stringValue ?? "?")")
        default:
            break
        }
    }

    /// zigbee2mqtt reports a failed `/set` only in its log: `Publish 'set' 'state' to 'bulb' failed: '…'`.
    private func logging(_ payload: [UInt8]) {
        guard let json = try? JSON.parse(payload), json["level"]?.stringValue == "error",
            let message = json["message"]?.stringValue
        else { return }
        guard let failure = Self.failure(in: message) else { return }
        for waiter in waiters where devices[waiter.ieee]?.description.friendlyName == failure.device {
            guard failure.kind.map({ $0 == waiter.kind }) ?? true, waiter.properties.contains(failure.property) else {
                continue
            }
            finish(waiter.id, .failure(HomeError(.communicationFailure, "zigbee2mqtt: \(message)")))
        }
    }

    /// The request a zigbee2mqtt error names: `Publish 'set' 'state' to 'bulb' failed: '…'`, or
    /// `No converter available for 'state' on 'bulb': …` (kind nil: a set).
    static func failure(in message: String) -> (kind: String?, property: String, device: String)? {
        let quoted = message.split(separator: "'", omittingEmptySubsequences: false).map(String.init)
        // Text between quotes sits at the odd indices.
        if message.hasPrefix("Publish '"), quoted.count >= 7, quoted[4] == " to " {
            return (quoted[1], quoted[3], quoted[5])
        }
        if message.hasPrefix("No converter available for '"), quoted.count >= 5, quoted[2] == " on " {
            return ("set", quoted[1], quoted[3])
        }
        return nil
    }

    private func permitJoinAnswered(_ payload: [UInt8]) {
        guard let json = try? JSON.parse(payload) else { return }
        let transaction = json["transaction"]?.stringValue ?? json["transaction"].map(\.serialized) ?? ""
        guard let id = joins[transaction] else { return }
        if json["status"]?.stringValue == "ok" {
            finish(id, .success(json["data"] ?? .object([])))
        } else {
            let error = json["error"]?.stringValue ?? "zigbee2mqtt refused"
            finish(id, .failure(HomeError(.communicationFailure, "zigbee2mqtt: \(error)")))
        }
    }

    // MARK: Reachability

    private func isReachable(_ device: Device) -> Bool {
        connected && bridgeOnline == true && device.available != false
    }

    private func updateReachability(_ ieee: String) {
        guard var device = devices[ieee] else { return }
        let reachable = isReachable(device)
        guard reachable != device.accessory.isReachable else { return }
        device.accessory.isReachable = reachable
        devices[ieee] = device
        sink.yield(.reachability(device.accessory.id, isReachable: reachable))
        guard !reachable else { return }
        for waiter in waiters where waiter.ieee == ieee {
            finish(
                waiter.id,
                .failure(HomeError(.accessoryNotReachable, "\(device.description.friendlyName) became unreachable.")))
        }
    }

    private func refreshReachability() {
        for ieee in order + groupOrder { updateReachability(ieee) }
    }

    // MARK: Logging

    /// Logs `message` the first time `subject` shows `cause`; a device that keeps sending the same bad
    /// payload is logged once.
    private func reportOnce(_ subject: String, _ cause: String, _ message: String) {
        let key = "\(subject)|\(cause)"
        guard !reported.contains(key) else { return }
        if reported.count >= 10_000 { reported = [] }  // bounded: after 10,000 causes, each may be said again
        reported.insert(key)
        logger.warning("zigbee2mqtt: \(message)", metadata: ["device": "\(subject)"])
    }
}

/// What a waiting write or read needs to see in one state publish of its device.
enum Expectation: Sendable, Hashable {
    case equal(String, JSON)
    /// A number inside an object property (`color.hue`), within a tolerance.
    case near(String, key: String, Double, tolerance: Double)
    case present(String)
    /// Any state publish of the device: a target it moves towards is confirmed by its next report.
    case anyPublish

    func isMet(by state: JSON) -> Bool {
        switch self {
        case .anyPublish:
            return true
        case .equal(let property, let value):
            guard let actual = state[property] else { return false }
            if actual == value { return true }
            if let a = actual.numberValue, let b = value.numberValue { return abs(a - b) < 1e-9 }
            return false
        case .near(let property, let key, let value, let tolerance):
            guard let actual = state[property]?[key]?.numberValue else { return false }
            return abs(actual - value) <= tolerance
        case .present(let property):
            guard let actual = state[property] else { return false }
            return actual != .null
        }
    }
}

private struct Waiter {
    let id: Int
    let ieee: String
    /// `set` or `get`, and the properties sent: what a zigbee2mqtt error must name to fail it.
    let kind: String
    let properties: Set<String>
    let expectations: [Expectation]
    /// Targets written (a cover's position): recorded once the device took the command.
    let targets: [CharacteristicWrite]
}

/// One device as the driver follows it.
private struct Device {
    var description: DeviceDescription
    var mapped: MappedDevice
    /// The mapped accessory with the values and reachability the device reported.
    var accessory: Accessory
    var available: Bool?
    /// Targets sent that the device has not reported reaching yet, by ``key(_:_:)``.
    var pendingTargets: [String: CharacteristicValue] = [:]

    var ieee: String { description.ieeeAddress }

    static func key(_ service: ServiceID, _ type: CharacteristicType) -> String { "\(service)|\(type)" }

    /// The characteristic that says where a target's device is.
    static func current(of target: CharacteristicType) -> CharacteristicType {
        switch target {
        case .targetPosition: .currentPosition
        case .targetHorizontalTiltAngle: .currentHorizontalTiltAngle
        default: target
        }
    }

    mutating func update(_ description: DeviceDescription, _ mapped: MappedDevice) {
        let old = accessory
        self.description = description
        self.mapped = mapped
        accessory = mapped.accessory
        for service in old.services {
            for characteristic in service.characteristics {
                if let value = characteristic.value {
                    accessory.setValue(value, service: service.id, type: characteristic.type)
                }
            }
        }
    }

    /// The `/set` request for `writes`, all in one payload: the payload, what the next state publish
    /// must carry to confirm it, and the targets to record once the device took it.
    func setRequest(
        for writes: [CharacteristicWrite]
    ) throws(HomeError) -> (payload: JSON, expectations: [Expectation], targets: [CharacteristicWrite]) {
        var fields: [(key: String, value: JSON)] = []
        var expectations: [(service: ServiceID, property: String, expectation: Expectation)] = []
        var targets: [CharacteristicWrite] = []
        var switchedOff: Set<ServiceID> = []
        var colors: [String: (binding: Binding, hue: Double?, saturation: Double?)] = [:]
        for write in writes {
            guard let binding = mapped.bindings(of: write.service, write.characteristic),
                binding.metadata.permissions.contains(.write)
            else {
                throw HomeError(
                    .readOnlyCharacteristic, "\(write.characteristic) of \(description.friendlyName) cannot be written."
                )
            }
            if case .color(let component, _) = binding.conversion {
                let value = write.value.doubleValue
                if component == .hue {
                    colors[binding.property, default: (binding, nil, nil)].hue = value
                } else {
                    colors[binding.property, default: (binding, nil, nil)].saturation = value
                }
                continue
            }
            guard let value = binding.deviceValue(for: write.value) else {
                if case .command = binding.conversion { continue }  // HoldPosition false: nothing to do
                throw HomeError(.invalidParameter, "\(write.value.plainText) has no meaning for \(binding.property).")
            }
            fields.removeAll { $0.key == binding.property }
            fields.append((binding.property, value))
            if write.characteristic == .on, write.value == .bool(false) { switchedOff.insert(binding.service) }
            if binding.isTarget {
                targets.append(write)
                if binding.isPublished { expectations.append((binding.service, binding.property, .anyPublish)) }
            } else if case .command = binding.conversion {
            } else if binding.isPublished {
                expectations.append((binding.service, binding.property, .equal(binding.property, value)))
            }
        }
        for (property, entry) in colors.sorted(by: { $0.key < $1.key }) {
            guard case .color(_, let hasHueSaturation) = entry.binding.conversion else { continue }
            let service = entry.binding.service
            let hue = entry.hue ?? accessory.characteristic(service, .hue)?.value?.doubleValue ?? 0
            let saturation =
                entry.saturation ?? accessory.characteristic(service, .saturation)?.value?.doubleValue ?? 100
            // Sent as the device takes colours: hue and saturation, or CIE xy; expected within a tolerance.
            let xy = ColorSpace.xy(hue: hue, saturation: saturation)
            let (components, tolerance): ([(key: String, value: Double)], Double) =
                hasHueSaturation
                ? ([("hue", hue), ("saturation", saturation)], 1.5) : ([("x", xy.x), ("y", xy.y)], 0.002)
            fields.append((property, .object(components.map { ($0.key, .number($0.value)) })))
            if entry.binding.isPublished {
                expectations += components.map {
                    (service, property, .near(property, key: $0.key, $0.value, tolerance: tolerance))
                }
            }
        }
        // A light switched off does not report the brightness sent with it (zigbee2mqtt's own tests:
        // `{"brightness":20,"color":{…},"state":"OFF"}` publishes the colour and the state only).
        let offBrightness = Set(
            mapped.bindings.filter { $0.characteristic == .brightness && switchedOff.contains($0.service) }.map(
                \.property))
        let kept = expectations.filter { !offBrightness.contains($0.property) }
        return (.object(fields), kept.map(\.expectation), targets)
    }
}
