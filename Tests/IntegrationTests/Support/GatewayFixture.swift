import Automations
import Broker
import Execution
import Foundation
import Gateway
import HAP
import History
import HomeModel
import Logging
import MQTT
import ServiceLifecycle
import TestSupport
import Testing
import VirtualDevices
import Zigbee2MQTT
import Zigbee2MQTTStandIn

/// The repository's `Config/demo-home.yml`.
let demoHomeFile = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Config/demo-home.yml")

/// The repository's recorded zigbee2mqtt payloads (Sources/Zigbee2MQTTStandIn/Recordings).
let zigbeeRecordingsFolder = Zigbee2MQTTRecordings.folder(
    root: demoHomeFile.deletingLastPathComponent().deletingLastPathComponent().path)
let zigbeeRecordings = try! Zigbee2MQTTRecordings(folder: zigbeeRecordingsFolder)
/// The recorded `bridge/groups`.
let zigbeeGroups = try! Zigbee2MQTTRecordings.groups(folder: zigbeeRecordingsFolder)

/// A gateway running in this process against a real broker, with the demo home on virtual devices.
struct RunningGateway {
    let broker: MosquittoBroker
    let manager: HomeManager
    /// The home database (in memory), for tests that cap its size.
    let database: HomeDatabase
    let driver: VirtualDriver
    let topics: Topics
    let logger: Logger
    /// The account that inspects the broker's retained topics (nil: anonymous).
    let inspector: String?
    /// Home Assistant discovery, when the gateway announces it.
    let homeAssistant: HomeAssistantDiscovery?
    /// The stand-in zigbee2mqtt, when the gateway has the zigbee2mqtt driver.
    let zigbee: Zigbee2MQTTStandIn?
    /// The history the gateway records and answers from, when it keeps one.
    var history: HistoryStore? = nil

    /// What the broker must hold under the base topic (and the discovery prefix) now, computed from
    /// the model.
    func expectedRetainedTopics() async -> Set<String> {
        let snapshot = await HomeSnapshot(of: manager)
        return RetainedView(
            homes: snapshot.homes, discovered: snapshot.discovered, topics: topics, homeAssistant: homeAssistant
        ).topics.union([topics.status, topics.health])
    }

    /// What the broker holds retained under the base topic (and this gateway's discovery configs) now.
    func retainedTopics() async throws -> Set<String> {
        try await retainedTopicsOnBroker(port: broker.port, account: inspector, topics: topics, also: extraFilters)
    }

    /// Waits until the broker's retained topics are exactly the model's (the publisher is done).
    func waitUntilPublished(within timeout: Duration = .seconds(60)) async throws {
        try await waitForRetainedTopics(
            port: broker.port, account: inspector, topics: topics, also: extraFilters, within: timeout
        ) {
            await expectedRetainedTopics()
        }
    }

    private var extraFilters: [String] { homeAssistant.map { [$0.configFilter] } ?? [] }
}

/// What the broker on 127.0.0.1:`port` holds retained under the base topic (and `filters`), read
/// as `account` (password = account; nil: anonymous).
func retainedTopicsOnBroker(port: Int, account: String?, topics: Topics, also filters: [String] = []) async throws
    -> Set<String>
{
    var configuration = MQTTConfiguration(port: port, clientID: "inspector-\(UUID().uuidString.prefix(6))")
    configuration.username = account
    configuration.password = account
    var logger = Logger(label: "test.inspector")
    logger.logLevel = .critical
    return try await RetainedTopics.read(
        under: ["\(topics.base)/#"] + filters, markerTopic: "\(topics.base)/$sync-inspector", using: configuration,
        logger: logger)
}

/// Waits until the broker holds exactly `expected()` retained under the base topic, or throws with
/// the difference. A refused read is tried again: with dynamic security the inspecting account may
/// get its rights only after the gateway's first sync. A minute unless told otherwise: a fixture's
/// first publish, under a whole-suite run beside another on two cores, ran out of 20 s.
func waitForRetainedTopics(
    port: Int, account: String?, topics: Topics, also filters: [String] = [], within timeout: Duration = .seconds(60),
    expected: () async -> Set<String>
) async throws {
    var difference = "nothing read yet"
    try await eventually("the retained view to match the model (\(difference))", timeout: timeout) {
        let wanted = await expected()
        let held: Set<String>
        do {
            held = try await retainedTopicsOnBroker(port: port, account: account, topics: topics, also: filters)
        } catch {
            difference = "the last read failed: \(error)"
            return false
        }
        difference =
            "missing \(wanted.subtracting(held).sorted()), stale \(held.subtracting(wanted).sorted())"
        return held == wanted
    }
}

/// Starts a broker (with `configuration`), the demo home in an in-memory database and the gateway,
/// waits until the home is on the broker, runs `body`, and shuts everything down. The virtual devices
/// move on by themselves every `tick` of real time (a test that must see a transition's states passes
/// a tick longer than itself and moves time with `driver.advance(by:)`); `rateLimit` is the
/// gateway's limit per account. `driverTimeout` is 30 s unless a test is about timeouts: the devices and
/// zigbee2mqtt's stand-in run in this process, and in a whole-suite run beside two busy processes a
/// permit join once missed the gateway's default of 10 s. With `history`, the gateway records into
/// an in-memory history (a batch every 20 ms) and answers `history` and `timeline` from it.
func withGateway<T>(
    _ configuration: MosquittoBroker.Configuration = .init(),
    baseTopic: String = "homegate",
    gatewayAccount: String? = nil,
    dynamicSecurity: Bool = false,
    homeAssistant: Bool = false,
    homeAssistantAccount: String = "homeassistant",
    tick: Duration = .seconds(1),
    driverTimeout: Duration = .seconds(30),
    rateLimit: RateLimit? = .standard,
    protocolVersion: MQTTConfiguration.ProtocolVersion = .v5,
    eventsQoS: MQTTQoS = .atMostOnce,
    zigbee2mqtt devices: Set<String>? = nil,
    zigbee2mqttGroups: Bool = false,
    zigbee2mqttStates: Bool = true,
    hap: [HAPEndpoint]? = nil,
    history keepsHistory: Bool = false,
    clock: AnyClock = .continuous,
    prepare: (MosquittoBroker) async throws -> Void = { _ in },
    _ body: (RunningGateway) async throws -> T
) async throws -> T {
    try await withBroker(configuration) { broker in
        try await prepare(broker)
        var logger = Logger(label: "test.gateway")
        logger.logLevel = .critical
        var zigbee: Zigbee2MQTTStandIn?
        var zigbeeDriver: Zigbee2MQTTDriver?
        if let devices {
            let listed = zigbeeRecordings.devices(named: devices)
            let standIn = Zigbee2MQTTStandIn(
                client: try makeClient(broker, name: "zigbee2mqtt") {
                    $0.username = "zigbee2mqtt"; $0.password = "zigbee2mqtt"
                },
                devices: listed, states: zigbee2mqttStates ? zigbeeRecordings.firstStates(of: listed) : [:],
                groups: zigbee2mqttGroups ? zigbeeGroups : [], logger: logger)
            try await standIn.start()
            zigbee = standIn
            zigbeeDriver = Zigbee2MQTTDriver(
                client: try makeClient(broker, name: "gateway-zigbee2mqtt") {
                    $0.username = gatewayAccount
                    $0.password = gatewayAccount
                }, logger: logger)
        }
        let topics = Topics(base: baseTopic)
        let demo = try DemoHome.load(contentsOf: demoHomeFile)
        let database = try HomeDatabase.inMemory()
        let manager = try HomeManager(database: database, driverTimeout: driverTimeout, probeInterval: .seconds(1))
        let driver = VirtualDriver(devices: demo.devices, tick: tick)
        try await manager.attach(driver)
        if let zigbeeDriver { try await manager.attach(zigbeeDriver) }
        if let hap {
            try await manager.attach(
                HAPDriver(
                    endpoints: hap, secrets: database.secrets(for: "hap"), probeInterval: .milliseconds(200),
                    logger: logger))
        }
        let serving = zigbee.map { standIn in Task { await standIn.serve() } }
        _ = try await demo.seed(manager)

        var mqtt = MQTTConfiguration(port: broker.port, clientID: "gateway-\(UUID().uuidString.prefix(6))")
        mqtt.username = gatewayAccount
        mqtt.password = gatewayAccount
        mqtt.protocolVersion = protocolVersion
        mqtt.will = AvailabilityService.will(for: topics)
        mqtt.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        mqtt.keepGatewaySession()
        let loop = EventLoopThread(name: "gateway-loop")
        defer { loop.stop() }
        let client = try MQTTClient(mqtt, logger: logger, loop: loop)
        let readBack = mqtt
        let statistics = GatewayStatistics()
        let discovery =
            homeAssistant
            ? HomeAssistantDiscovery(
                discoveryPrefix: "homeassistant", nodeID: "homegate", account: homeAssistantAccount, topics: topics,
                version: HealthService.version) : nil
        let keeper =
            dynamicSecurity
            ? AccessKeeper(sync: DynamicSecuritySync(client: client)) { manager in
                AccessRules(
                    topics: topics, gatewayAccount: gatewayAccount ?? "homegate",
                    homeAssistant: discovery, members: await manager.memberships().map(AccessRules.Member.init))
            } : nil
        let history = keepsHistory ? try HistoryStore.inMemory() : nil
        let gateway = GatewayService(
            manager: manager, client: client, topics: topics, defaultAccount: nil, homeAssistant: discovery,
            statistics: statistics, accessKeeper: keeper, logger: logger, rateLimit: rateLimit, eventsQoS: eventsQoS,
            history: history, clock: clock
        ) { [logger] in
            try await RetainedTopics.read(
                under: ["\(topics.base)/#"] + (discovery.map { [$0.configFilter] } ?? []),
                markerTopic: "\(topics.base)/$sync", using: readBack, logger: logger)
        }
        let recorder = history.map {
            HistoryRecorder(
                manager: manager, store: $0,
                settings: .init(batchWindow: .milliseconds(20), capacity: 10_000, retentionInterval: .seconds(3600)),
                logger: logger)
        }
        let automations: [any ServiceLifecycle.Service] = [AutomationService(manager: manager, logger: logger)]
        let group = ServiceGroup(
            services: automations + (recorder.map { [$0] } ?? []) + [
                client, AvailabilityService(client: client, topics: topics, logger: logger),
                HealthService(
                    client: client, topics: topics, statistics: statistics, interval: .milliseconds(200), logger: logger
                ),
                gateway,
            ],
            logger: logger)
        let running = Task { try await group.run() }
        let fixture = RunningGateway(
            broker: broker, manager: manager, database: database, driver: driver, topics: topics, logger: logger,
            inspector: gatewayAccount,
            homeAssistant: discovery, zigbee: zigbee, history: history)
        do {
            try await fixture.waitUntilPublished()
            let result = try await body(fixture)
            await group.triggerGracefulShutdown()
            try await running.value
            await manager.shutdown()
            await zigbee?.stop()
            await serving?.value
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            await manager.shutdown()
            await zigbee?.stop()
            await serving?.value
            throw error
        }
    }
}

extension DynamicSecuritySync {
    /// Hands every message of `messages` to `receive(_:)` until the stream ends: for a client that
    /// the sync has to itself.
    func forward(_ messages: some AsyncSequence<MQTTMessage, Never>) async {
        for await message in messages { receive(message) }
    }
}

extension HomeAssistantDiscovery {
    /// Discovery as the access rules read it: its account and prefix.
    init(account: String, discoveryPrefix: String) {
        self.init(
            discoveryPrefix: discoveryPrefix, nodeID: "homegate", account: account, topics: Topics(), version: "test")
    }
}
