import Execution
import Foundation
import JSON
import Logging
import MQTT
import ServiceLifecycle

/// Publishes `B/$health` (retained) every `interval` and each time the connection comes back:
/// version, uptime, resident memory, the broker (its address, reconnects, switches to another of the
/// configured brokers), messages in and out, commands answered ok and failed by code.
package struct HealthService: ServiceLifecycle.Service {
    /// homegate's version, as `$health` reports it.
    package static let version = "0.1.0"

    private let client: MQTTClient
    private let topics: Topics
    private let statistics: GatewayStatistics
    private let interval: Duration
    private let clock: AnyClock
    private let logger: Logger

    package init(
        client: MQTTClient, topics: Topics, statistics: GatewayStatistics, interval: Duration = .seconds(60),
        clock: some Clock<Duration> = ContinuousClock(), logger: Logger
    ) {
        self.clock = AnyClock(clock)
        self.client = client
        self.topics = topics
        self.statistics = statistics
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    var connections = 0
                    for await event in client.connectionEvents() {
                        guard case .connected = event else { continue }
                        connections += 1
                        if connections > 1 { statistics.reconnected() }
                        publish()
                    }
                }
                group.addTask { await clock.every(interval) { publish() } }
            }
        }
    }

    private func publish() {
        guard client.isConnected else { return }
        let payload = statistics.health(
            version: Self.version, residentBytes: Self.residentBytes(),
            broker: client.connectedBroker?.description, brokerSwitches: client.brokerSwitches)
        do {
            try client.send(topics.health, payload: payload.bytes, qos: .atLeastOnce, retain: true)
        } catch {
            logger.warning("could not publish health", metadata: ["error": "\(error)"])
        }
    }

    /// The process's resident memory from /proc (Linux); nil elsewhere.
    package static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
