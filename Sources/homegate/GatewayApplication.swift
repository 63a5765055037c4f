import Automations
import CMalloc
import Config
import Foundation
import Gateway
import HAP
import History
import HomeKitBridge
import HomeModel
import Logging
import MQTT
import ServiceLifecycle
import UnixSignals
import VirtualDevices
import Web
import Zigbee2MQTT

/// The gateway put together from a configuration and run until SIGTERM or SIGINT. Services stop in
/// reverse order: the gateway stops taking commands, `offline` is published, the client
/// disconnects, the drivers stop and the database closes, and last whatever came before (the demo's
/// broker).
struct GatewayApplication {
    var configuration: GatewayConfiguration
    var logger: Logger
    /// The virtual devices `accessories.virtual` names, when the caller read them already.
    var demoHome: DemoHome? = nil
    /// Services that must outlive the gateway (the demo's private broker).
    var foundation: [any ServiceLifecycle.Service] = []
    /// Run once the home is open and its drivers attached, beside the gateway (the demo places its
    /// zigbee2mqtt devices).
    var started: (@Sendable (HomeManager) async -> Void)? = nil
    /// Called with the rules for the homes' users at start and after every change of homes or
    /// users, before the acl_file is checked: the demo writes them into its broker's acl_file.
    var accessRulesChanged: (@Sendable (AccessRules) async -> Void)? = nil
    /// Called with the web page's port once it is served (the demo prints the address).
    var webListening: @Sendable (Int) async -> Void = { _ in }
    /// A HomeKit bridge whose port is taken listens on a free one (the demo) instead of not at all.
    var homekitAnyPortIfTaken = false
    /// Called with each HomeKit bridge once it listens (the demo prints how to pair it).
    var homekitListening: @Sendable (HomeBridge, BridgeListener) async -> Void = { _, _ in }

    func run() async throws {
        var configuration = configuration
        try configuration.resolveClientID()
        let topics = configuration.topics
        // One thread for the gateway's connection and zigbee2mqtt's: a device's state publish is
        // read, recorded, published and acknowledged there, in one pass. HOMEGATE_MQTT_SERVING=thread
        // leaves each connection to libmosquitto's own loop on its client's thread instead, for the
        // benchmark that compares the two (`bench/run.sh --only serving`).
        // At rest it gives malloc's free pages back to the system: a hub's heaps hold a few MB freed
        // by the last burst of commands otherwise (docs/benchmarks.md, "The hub build's memory").
        let loop: EventLoopThread? =
            ProcessInfo.processInfo.environment["HOMEGATE_MQTT_SERVING"] == "thread"
            ? nil : EventLoopThread(name: "homegate-loop", atRest: { _ = malloc_trim(0) })
        let (manager, drivers) = try await Self.openHome(configuration, demoHome: demoHome, loop: loop, logger: logger)
        let history = try Self.openHistory(configuration, logger: logger)

        var mqtt = try configuration.mqttConfiguration()
        mqtt.will = AvailabilityService.will(for: topics)
        mqtt.retryInitialConnection = true
        mqtt.keepGatewaySession()
        let client = try MQTTClient(mqtt, logger: logger, loop: loop)
        let readBackConfiguration = mqtt
        logger.info(
            "MQTT client id \(mqtt.clientID)",
            metadata: ["brokers": "\(mqtt.brokers.map(\.description).joined(separator: ", "))"])
        let statistics = GatewayStatistics()
        let ruleSource = AccessRuleSource(configuration: configuration)
        let accessKeeper =
            configuration.access.dynamicSecurity
            ? AccessKeeper(sync: DynamicSecuritySync(client: client)) { manager in
                ruleSource.rules(memberships: await manager.memberships())
            } : nil
        let homeAssistant = configuration.homeAssistantDiscovery
        if let homeAssistant, !(await manager.memberships()).contains(where: { $0.account == homeAssistant.account }) {
            logger.warning(
                "Home Assistant discovery is on, but its account is a user of no home: nothing is announced (and configs announced before are cleared); add it to the homes it should see with addUser"
            )
        }
        let gateway = GatewayService(
            manager: manager, client: client, topics: topics, defaultAccount: configuration.commands.defaultAccount,
            homeAssistant: homeAssistant, statistics: statistics, accessKeeper: accessKeeper, logger: logger,
            rateLimit: configuration.commands.rateLimit, eventsQoS: configuration.mqtt.eventsQoS, history: history,
            protectionProblems: { [configuration, accessRulesChanged] manager in
                let rules = ruleSource.rules(memberships: await manager.memberships())
                await accessRulesChanged?(rules)
                return configuration.access.brokerProtectionProblems(
                    rules: rules, regenerate: "homegate acl --config <your config>")
            }
        ) { [logger] in
            // The broker the gateway is connected to, not the list's first.
            var configuration = readBackConfiguration
            if let broker = client.connectedBroker { configuration.brokers = [broker] }
            return try await RetainedTopics.read(
                under: ["\(topics.base)/#"] + (homeAssistant.map { [$0.configFilter] } ?? []),
                markerTopic: "\(topics.base)/$sync", using: configuration, logger: logger)
        }
        let automations = AutomationService(manager: manager, logger: logger)
        // Each batch wakes the loop, so that its rest (and malloc_trim) comes after the last one.
        let recorder = history.map {
            HistoryRecorder(manager: manager, store: $0, logger: logger, afterBatch: { loop?.wake() })
        }
        var services: [any ServiceLifecycle.Service] =
            foundation + [StopAtShutdown { await manager.shutdown() }] + drivers + [
                // After the drivers: it stops before them, so no automation writes to a stopped driver.
                automations,
                ScheduleService(manager: manager, logger: logger),
                TurnBackService(manager: manager, loopGuard: automations.loopGuard, logger: logger),
            ] + (recorder.map { [$0] } ?? []) + [
                client,
                AvailabilityService(client: client, topics: topics, logger: logger),
                HealthService(client: client, topics: topics, statistics: statistics, logger: logger), gateway,
            ]
        if let started {
            services.append(StartedHook(manager: manager, started: started))
        }
        if let homekit = configuration.homekit, !homekit.bridges.isEmpty {
            services.append(
                HomeKitBridgeService(
                    bridges: homekit.bridges.map {
                        HomeKitBridgeService.Bridge(
                            HomeBridge.Settings(home: $0.home, account: $0.account, port: $0.port), host: $0.listen,
                            interfaces: homekit.interfaces, advertise: homekit.advertise,
                            anyPortIfTaken: homekitAnyPortIfTaken)
                    }, manager: manager, loop: loop, logger: logger, firmware: HealthService.version,
                    started: homekitListening))
        }
        if let web = configuration.web {
            // Last, so it stops first: no page action arrives after the gateway stopped taking commands.
            services.append(
                WebServer(
                    settings: web, manager: manager, router: gateway.router,
                    credentials: BrokerCredentials(
                        configuration: try configuration.mqttConfiguration(), logger: logger),
                    statistics: statistics, client: client, logger: logger, listening: webListening,
                    homekit: Self.homekitPairing(configuration.homekit, manager: manager), history: history))
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // SIGTERM ends the gateway whatever a service does: a graceful stop that takes longer is
        // cancelled, and a cancellation a service ignores ends the process (systemd's own stop
        // timeout is 90 s; these stay inside it).
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(30)
        groupConfiguration.maximumCancellationDuration = .seconds(15)
        try await ServiceGroup(configuration: groupConfiguration).run()
    }

    /// The home manager on the configured database, with the drivers registered (and the virtual
    /// devices' homes built while the database is empty), and the services that serve the drivers
    /// (and zigbee2mqtt's client) for the gateway's lifetime. The manager, the virtual devices and
    /// zigbee2mqtt's driver and connection run on `loop`, when given.
    static func openHome(
        _ configuration: GatewayConfiguration, demoHome: DemoHome? = nil, loop: EventLoopThread? = nil,
        logger: Logger
    ) async throws -> (HomeManager, [any ServiceLifecycle.Service]) {
        try FileManager.default.createDirectory(atPath: configuration.data.directory, withIntermediateDirectories: true)
        let database =
            configuration.data.inMemory
            ? try HomeDatabase.inMemory() : try HomeDatabase.open(atPath: configuration.data.databaseFile)
        let manager = try HomeManager(
            database: database, driverTimeout: configuration.commands.timeout,
            homeCreators: configuration.homes.homeCreators, valueCommitWindow: configuration.data.valueCommitWindow,
            executor: loop, logger: logger)
        var services: [any ServiceLifecycle.Service] = []
        func serve(_ driver: any AccessoryDriver) async throws {
            services.append(DriverService(manager: manager, driver: try await manager.register(driver)))
        }
        if let zigbee2mqtt = try configuration.zigbee2mqttConfiguration(),
            let settings = configuration.accessories.zigbee2mqtt
        {
            let client = try MQTTClient(zigbee2mqtt, logger: logger, loop: loop)
            try await serve(Zigbee2MQTTDriver(client: client, baseTopic: settings.baseTopic, logger: logger))
            // After its driver: it stops first, and the driver's connect and reading end with it.
            services.append(client)
        }
        if let hap = configuration.accessories.hap {
            try await serve(
                HAPDriver(
                    endpoints: hap.endpoints.map { HAPEndpoint(host: $0.host, port: $0.port) },
                    browser: hap.discovery ? HAPBrowser(logger: logger) : nil, secrets: manager.secrets(for: "hap"),
                    logger: logger))
        }
        if let devicesFile = configuration.accessories.virtual {
            let devices = try demoHome ?? DemoHome.load(contentsOf: URL(fileURLWithPath: devicesFile))
            try await serve(VirtualDriver(devices: devices.devices, executor: loop))
            // One transaction for the whole home, not one per room and accessory.
            if try await manager.building({ try await devices.seed($0) }) {
                logger.notice("built the homes of \(devicesFile) into the empty database")
            }
        }
        return (manager, services)
    }
}

extension GatewayApplication {
    /// The setup of a home's HomeKit bridge for the web page, when the configuration serves the home.
    static func homekitPairing(_ settings: GatewayConfiguration.HomeKitSettings?, manager: HomeManager)
        -> HomeKitPairingSource
    {
        let served = Set((settings?.bridges ?? []).map { HomeName.key($0.home) })
        return { id, name in
            guard served.contains(HomeName.key(name)), let setup = try? BridgeSetup.load(home: id, manager: manager)
            else { return nil }
            return HomeKitPairing(
                setupCode: setup.setupCode, qrCode: setup.qrCode?.svg ?? "", isPaired: setup.isPaired)
        }
    }

    /// The history store `history` configures, beside the home database (in memory when the home
    /// database is); nil when history is off. The timeline's events are kept as long as the raw values.
    static func openHistory(_ configuration: GatewayConfiguration, logger: Logger) throws -> HistoryStore? {
        let settings = configuration.history
        guard settings.enabled else {
            logger.info("history is off (history.enabled: false): nothing is recorded")
            return nil
        }
        let day = 86_400
        let retention = HistoryRetention(
            raw: .seconds(settings.rawDays * day), hourly: .seconds(settings.hourlyDays * day),
            events: .seconds(settings.rawDays * day), maximumBytes: settings.maxMegabytes << 20)
        if configuration.data.inMemory { return try HistoryStore.inMemory(retention: retention) }
        return try HistoryStore.open(atPath: configuration.data.historyFile, retention: retention)
    }
}

/// Runs the caller's `started` beside the gateway once (the demo places its zigbee2mqtt devices),
/// cancelled at shutdown if it has not finished.
struct StartedHook: ServiceLifecycle.Service {
    let manager: HomeManager
    let started: @Sendable (HomeManager) async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown { await started(manager) }
        try? await gracefulShutdown()
    }
}

/// Keeps something for as long as the gateway runs, and stops it afterwards: the home manager (its
/// drivers), the demo's broker.
struct StopAtShutdown: ServiceLifecycle.Service {
    let stop: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }
}
