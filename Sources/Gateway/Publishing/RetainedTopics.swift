import AsyncMailbox
import Execution
import Logging
import MQTT

/// Lists the topics a broker holds retained under some filters (the base topic and the discovery
/// configs), over a short-lived connection of its own (so the gateway's command subscriptions never
/// overlap it): subscribe, then publish a marker and collect every retained message until the marker
/// comes back, then disconnect.
package enum RetainedTopics {
    package static func read(
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
        enum Outcome: Sendable {
            case held(Set<String>)
            case lost
            case timedOut
        }
        do {
            try await client.connect()
            // A connection that drops meanwhile loses the marker (a clean session, delivered at QoS 0):
            // the read fails at once rather than after `timeout`, and the caller may read again.
            let events = client.connectionEvents()
            try await client.subscribe(to: filters + [markerTopic], qos: .atMostOnce)
            try await client.publish(markerTopic, marker, qos: .atLeastOnce)
            let outcome = await Deadline.race(timeout: timeout, timer: .continuous) {
                await withTaskGroup(of: Outcome.self) { group in
                    group.addTask {
                        var held: Set<String> = []
                        for await message in client.messages {
                            if message.topic == markerTopic && message.payloadString == marker { return .held(held) }
                            if message.retain && !message.payload.isEmpty { held.insert(message.topic) }
                        }
                        return .lost
                    }
                    group.addTask {
                        for await event in events {
                            if case .disconnected = event { return .lost }
                        }
                        return .lost
                    }
                    let first = await group.next() ?? .lost
                    group.cancelAll()
                    return first
                }
            }
            await client.disconnect()
            switch (try? outcome?.get()) ?? .timedOut {
            case .held(let held): return held
            case .lost:
                throw MQTTError(.connectionLost, "the connection was lost while reading the retained topics back")
            case .timedOut:
                throw MQTTError(.connectionLost, "no answer within \(timeout) while reading the retained topics back")
            }
        } catch {
            await client.disconnect()
            throw error
        }
    }
}
