import Execution
import Logging
import MQTT
import ServiceLifecycle

/// Keeps `B/$status` true at the end: publishes `offline` (retained, QoS 1) when the gateway shuts
/// down gracefully. For a crash, `will(for:)` is the client's will, so the broker publishes the same
/// `offline` when the connection dies unannounced. `online` is ``GatewayService``'s to publish, once
/// its command subscriptions are in place on each connection: a client that sees `online` and sends a
/// command at once is answered.
package struct AvailabilityService: Service {
    package static let online = "online"
    package static let offline = "offline"

    private let client: MQTTClient
    private let topics: Topics
    private let logger: Logger

    package init(client: MQTTClient, topics: Topics, logger: Logger) {
        self.client = client
        self.topics = topics
        self.logger = logger
    }

    /// The will to configure on the gateway's MQTT client.
    package static func will(for topics: Topics) -> MQTTConfiguration.Will {
        .init(topic: topics.status, payload: Array(offline.utf8), qos: .atLeastOnce, retain: true)
    }

    /// Publishes `offline` at shutdown, waiting at most a few seconds for the broker's
    /// acknowledgement so that shutdown never hangs on a broker that is gone.
    package func run() async throws {
        try? await gracefulShutdown()
        guard client.isConnected else { return }
        let (client, topics) = (client, topics)
        let outcome = await Deadline.race(timeout: .seconds(3), timer: .continuous) {
            try await client.publish(topics.status, Self.offline, qos: .atLeastOnce, retain: true)
        }
        if case .failure(let error) = outcome {
            logger.warning("could not publish offline status", metadata: ["error": "\(error)"])
        }
    }
}
