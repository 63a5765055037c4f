import Gateway
import Logging
import MQTT
import ServiceLifecycle
import UnixSignals

/// The gateway's services, put together and run until SIGTERM or SIGINT. On shutdown the services
/// stop in reverse order: `offline` is published first, then the client disconnects, then whatever
/// came before it (the demo's broker) stops.
struct GatewayApplication {
    var mqtt: MQTTConfiguration
    var topics: Topics
    var logger: Logger
    /// Services that must outlive the gateway (the demo's private broker).
    var foundation: [any Service] = []

    func run() async throws {
        var mqtt = mqtt
        mqtt.will = AvailabilityService.will(for: topics)
        mqtt.retryInitialConnection = true
        let client = try MQTTClient(mqtt, logger: logger)
        let services: [any Service] =
            foundation + [client, AvailabilityService(client: client, topics: topics, logger: logger)]
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}
