import HomeModel
import Logging
import MQTT

/// What the publisher renders from: all homes and the accessories no home has yet.
public struct HomeSnapshot: Sendable {
    public var homes: [Home]
    public var discovered: [Accessory]

    public init(homes: [Home], discovered: [Accessory]) {
        self.homes = homes
        self.discovered = discovered
    }

    public init(of manager: HomeManager) async {
        homes = await manager.allHomes()
        discovered = await manager.discoveredAccessories()
    }
}

/// Keeps the broker's retained topics under the base topic equal to the home model.
///
/// After every (re)connect it reads back what the broker holds, publishes everything (QoS 1,
/// retained) and clears what no longer belongs to the home; afterwards it publishes only what
/// changed, and clears every topic of a renamed, moved or removed object. It never publishes a value
/// that did not change, so a failed write moves no value topic.
public actor RetainedPublisher {
    private let client: MQTTClient
    private let topics: Topics
    private let readBack: @Sendable () async throws -> Set<String>
    private let statistics: GatewayStatistics
    private let logger: Logger
    private let homeAssistant: HomeAssistantDiscovery?
    /// Clearings of command topics whose echo the gateway must drop (MQTT 3.1.1 only).
    private let echoes: ClearingEchoes?
    /// What this gateway has told the broker to retain.
    private var published = RetainedView()
    /// Services already logged as having no Home Assistant component (each is said once).
    private var reportedUnmapped: Set<String> = []
    /// A full reload is under way: updates wait for it (see ``synchronize(_:)``).
    private var isSynchronizing = false
    private var changedWhileSynchronizing = false
    /// Until the first full reload there is nothing to diff against: updates before it are left
    /// to it (it reads the model after them), or everything would be sent twice.
    private var hasSynchronized = false

    /// - Parameters:
    ///   - homeAssistant: also keep Home Assistant's discovery configs and `$ha` states retained.
    ///   - readBack: lists the topics the broker holds retained under the base topic (and this
    ///     gateway's discovery config topics).
    ///   - echoes: where to note clearings of command topics (stale retained commands), whose
    ///     echo the gateway must not take for a command (MQTT 3.1.1).
    public init(
        client: MQTTClient, topics: Topics, homeAssistant: HomeAssistantDiscovery? = nil,
        statistics: GatewayStatistics = GatewayStatistics(), logger: Logger, echoes: ClearingEchoes? = nil,
        readBack: @escaping @Sendable () async throws -> Set<String>
    ) {
        self.echoes = echoes
        self.homeAssistant = homeAssistant
        self.statistics = statistics
        self.client = client
        self.topics = topics
        self.logger = logger
        self.readBack = readBack
    }

    /// Topics under the base topic that other parts of the gateway own and resync must leave alone.
    private var foreignTopics: Set<String> { [topics.status, topics.health] }

    /// The full reload after a (re)connect (HomeKit's homeManagerDidUpdateHomes): publish every topic
    /// and clear the stale ones. `snapshot` is taken after the broker's state was read.
    ///
    /// The actor is re-entered while it waits for the broker and the model. Updates that come
    /// meanwhile are not applied on their own (against a `published` that is about to be replaced,
    /// they would send everything twice, or an older snapshot after a newer one); they make the
    /// reload take one more fresh snapshot at its end instead.
    public func synchronize(_ snapshot: @Sendable () async -> HomeSnapshot) async {
        isSynchronizing = true
        defer { isSynchronizing = false }
        var held: Set<String>
        do {
            held = try await readBack()
        } catch {
            logger.warning(
                "could not read back the broker's retained topics; clearing only what this gateway published",
                metadata: ["error": "\(error)"])
            held = published.topics
        }
        let current = await snapshot()
        let desired = view(of: current)
        var sent = 0
        for (topic, payload) in desired.payloads.sorted(by: { $0.key < $1.key }) {
            sent += send(topic, payload) ? 1 : 0
        }
        let stale = held.union(published.topics).subtracting(desired.topics).subtracting(foreignTopics)
        for topic in stale.sorted() { _ = send(topic, []) }
        published = desired
        hasSynchronized = true
        logger.info("published the home", metadata: ["topics": "\(sent)", "cleared": "\(stale.count)"])
        while changedWhileSynchronizing {
            changedWhileSynchronizing = false
            apply(view(of: await snapshot()))
        }
    }

    /// Brings the broker in step with `snapshot` after a layout change: publishes what changed,
    /// clears what went away.
    public func update(_ snapshot: HomeSnapshot) {
        guard hasSynchronized, !isSynchronizing else {
            changedWhileSynchronizing = isSynchronizing
            return
        }
        apply(view(of: snapshot))
    }

    /// Announces every discovery config again and republishes the states Home Assistant reads
    /// (`$ha`, `$reachable`): after Home Assistant said `online` on its status topic.
    public func reannounce() {
        guard let homeAssistant else { return }
        let prefix = homeAssistant.discoveryPrefix + "/"
        let configs = published.payloads.filter { $0.key.hasPrefix(prefix) }
        let states = published.payloads.filter { $0.key.hasSuffix("/$ha") || $0.key.hasSuffix("/$reachable") }
        for (topic, payload) in configs.sorted(by: { $0.key < $1.key }) { _ = send(topic, payload) }
        for (topic, payload) in states.sorted(by: { $0.key < $1.key }) { _ = send(topic, payload) }
        logger.info(
            "announced the home to Home Assistant again",
            metadata: ["configs": "\(configs.count)", "states": "\(states.count)"])
    }

    private func view(of snapshot: HomeSnapshot) -> RetainedView {
        if let homeAssistant {
            for home in snapshot.homes where homeAssistant.announces(home) {
                for (accessory, service) in homeAssistant.unmappedServices(in: home)
                where reportedUnmapped.insert("\(accessory.id)/\(service.id)").inserted {
                    logger.notice(
                        "no Home Assistant component fits this service; it is not announced",
                        metadata: [
                            "accessory": "\(accessory.name)", "service": "\(service.name)",
                            "type": "\(service.type.rawValue)",
                        ])
                }
            }
        }
        return RetainedView(
            homes: snapshot.homes, discovered: snapshot.discovered, topics: topics, homeAssistant: homeAssistant)
    }

    /// Publishes what changed for one accessory (a value or its reachability); cheaper than `update`.
    public func update(accessory: AccessoryID, in home: Home) {
        guard hasSynchronized, !isSynchronizing else {
            changedWhileSynchronizing = isSynchronizing
            return
        }
        guard let snapshot = home.accessory(accessory) else { return }
        for (topic, payload) in RetainedView.accessoryPayloads(
            snapshot, in: home, topics: topics, homeAssistant: homeAssistant)
        where published[topic] != payload {
            if send(topic, payload) { published[topic] = payload }
        }
    }

    private func apply(_ desired: RetainedView) {
        let (publish, clear) = desired.changes(from: published)
        for (topic, payload) in publish { _ = send(topic, payload) }
        for topic in clear { _ = send(topic, []) }
        published = desired
    }

    /// Queues one retained QoS 1 message; libmosquitto delivers it, across reconnects too.
    private func send(_ topic: String, _ payload: [UInt8]) -> Bool {
        if payload.isEmpty, let echoes, topics.isCommandTopic(topic) { echoes.expect(topic) }
        do {
            try client.send(topic, payload: payload, qos: .atLeastOnce, retain: true)
            statistics.sentMessage()
            return true
        } catch {
            logger.error("could not publish", metadata: ["topic": "\(topic)", "error": "\(error)"])
            return false
        }
    }
}

/// Lists the topics a broker holds retained under a filter, over a short-lived connection of its
/// own (so the gateway's command subscriptions never overlap it): subscribe, then publish a marker
/// and collect every retained message until the marker comes back, then disconnect.
public enum RetainedTopics {
    public static func read(
        under filter: String, markerTopic: String, using configuration: MQTTConfiguration, logger: Logger,
        timeout: Duration = .seconds(30)
    ) async throws -> Set<String> {
        try await read(
            under: [filter], markerTopic: markerTopic, using: configuration, logger: logger, timeout: timeout)
    }

    /// The same for several filters at once (the base topic and the discovery configs).
    public static func read(
        under filters: [String], markerTopic: String, using configuration: MQTTConfiguration, logger: Logger,
        timeout: Duration = .seconds(30)
    ) async throws -> Set<String> {
        var configuration = configuration
        configuration.clientID += "-readback"
        configuration.will = nil
        configuration.cleanSession = true
        configuration.retryInitialConnection = false
        let client = try MQTTClient(configuration, logger: logger)
        let marker = "readback-\(UInt64.random(in: 0...UInt64.max))"
        do {
            try await client.connect()
            try await client.subscribe(to: filters + [markerTopic], qos: .atMostOnce)
            try await client.publish(markerTopic, marker, qos: .atLeastOnce)
            let held = try await withThrowingTaskGroup(of: Set<String>?.self) { group in
                group.addTask {
                    var held: Set<String> = []
                    for await message in client.messages {
                        if message.topic == markerTopic && message.payloadString == marker { return held }
                        if message.retain && !message.payload.isEmpty { held.insert(message.topic) }
                    }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
            await client.disconnect()
            guard let held else { throw MQTTError(.connectionLost, "no answer while reading the retained topics back") }
            return held
        } catch {
            await client.disconnect()
            throw error
        }
    }
}
