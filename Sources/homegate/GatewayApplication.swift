import Accessories
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import ServiceLifecycle
import UnixSignals

/// The gateway put together from its parts and run until SIGTERM or SIGINT. Services stop in
/// reverse order: the gateway stops taking commands, `offline` is published, the client
/// disconnects, the drivers stop and the database closes, and last whatever came before (the demo's
/// broker).
struct GatewayApplication {
    var mqtt: MQTTConfiguration
    var topics: Topics
    /// The folder of the SQLite database (`home.sqlite`).
    var dataDirectory: String
    /// Virtual devices (and the homes to build from them while the database is empty).
    var devicesFile: String?
    var defaultAccount: String?
    var deviceTimeout: Duration = .seconds(10)
    var logger: Logger
    /// Services that must outlive the gateway (the demo's private broker).
    var foundation: [any ServiceLifecycle.Service] = []

    func run() async throws {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let database = try HomeDatabase.open(atPath: "\(dataDirectory)/home.sqlite")
        let manager = try HomeManager(database: database, driverTimeout: deviceTimeout, logger: logger)
        if let devicesFile {
            let devices = try DemoHome.load(contentsOf: URL(fileURLWithPath: devicesFile))
            try await manager.attach(devices.makeDriver())
            if try await devices.seed(manager) {
                logger.notice("built the homes of \(devicesFile) into the empty database")
            }
        }

        var mqtt = mqtt
        mqtt.will = AvailabilityService.will(for: topics)
        mqtt.retryInitialConnection = true
        let client = try MQTTClient(mqtt, logger: logger)
        let readBackConfiguration = mqtt
        let statistics = GatewayStatistics()
        let gateway = GatewayService(
            manager: manager, client: client, topics: topics, defaultAccount: defaultAccount,
            statistics: statistics, logger: logger
        ) { [topics, logger] in
            try await RetainedTopics.read(
                under: "\(topics.base)/#", markerTopic: "\(topics.base)/$sync", using: readBackConfiguration,
                logger: logger)
        }
        let services: [any ServiceLifecycle.Service] =
            foundation + [
                HomeService(manager: manager), client,
                AvailabilityService(client: client, topics: topics, logger: logger),
                HealthService(client: client, topics: topics, statistics: statistics, logger: logger), gateway,
            ]
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}

/// Keeps the home manager for as long as the gateway runs; then stops its drivers.
struct HomeService: ServiceLifecycle.Service {
    let manager: HomeManager

    func run() async throws {
        try? await gracefulShutdown()
        await manager.shutdown()
    }
}
