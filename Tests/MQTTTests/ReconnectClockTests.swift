import Logging
import MQTT
import ServiceLifecycle
import TestSupport
import Testing

/// The client's attempts and the backoff between them, on a clock the test moves: a retry comes when
/// the clock reaches the delay the backoff gave, not before, and a shutdown ends the wait at once.
/// The delays are hours long, so a client that waited on real time never retries within a test.
@Suite("Reconnect attempts on the client's clock", .timeLimit(.minutes(5)))
struct ReconnectClockTests {
    let backoff = ReconnectBackoff(initial: .seconds(3600), maximum: .seconds(4 * 3600))

    @Test("a failed attempt is retried when the clock reaches the backoff's delay and not before; the delays grow")
    func retriesOnTheClock() async throws {
        // Given a client that keeps trying a port where nothing listens, on a clock that moves when told
        let refusing = try RefusingPort()
        let clock = ManualClock()
        let (client, events) = try await retryingClient([refusing.port], clock: clock)
        let connecting = Task { try await client.connect() }

        var ceiling = backoff.initial
        for attempt in 0..<4 {
            // When an attempt fails
            let delay = try await retryDelay(events)

            // Then the next waits for the backoff's delay for this attempt, the upper half of a ceiling
            // that doubles up to the maximum, on the clock: nothing happens until the clock reaches it
            #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay)")
            try await eventually("the wait on the clock") { clock.sleepers == 1 }
            clock.advance(by: delay - .nanoseconds(1))
            #expect(clock.sleepers == 1)
            #expect(await events.all.isEmpty)
            clock.advance(by: .nanoseconds(1))
            ceiling = min(ceiling * 2, backoff.maximum)
        }

        // When the client is shut down during a wait, Then its streams close and connect() ends, refused
        _ = try await retryDelay(events)
        try await shutDown(client, events)
        let error = try await #require(throws: MQTTError.self) { try await connecting.value }
        #expect(error.code == .clientClosed)
        withExtendedLifetime(refusing) {}
    }

    @Test("with several brokers a failed attempt moves on to the next at once; the wait comes after the round")
    func roundThenWait() async throws {
        // Given a client with two brokers, neither listening
        let first = try RefusingPort()
        let second = try RefusingPort()
        let (client, events) = try await retryingClient([first.port, second.port], clock: ManualClock())
        let connecting = Task { try await client.connect() }

        // When the first fails, Then the second is tried without a wait; after it, the backoff's delay
        #expect(try await retryDelay(events) == .zero)
        #expect(try await retryDelay(events) >= backoff.initial / 2)
        try await shutDown(client, events)
        _ = await connecting.result
        withExtendedLifetime((first, second)) {}
    }

    @Test("a graceful shutdown during the wait ends the client's run without the clock moving")
    func shutdownDuringTheWait() async throws {
        // Given a client run as a service, waiting on its clock after a failed attempt
        let refusing = try RefusingPort()
        let clock = ManualClock()
        let (client, events) = try await retryingClient([refusing.port], clock: clock)
        let group = ServiceGroup(services: [client], logger: quiet)
        let running = Task { try await group.run() }
        _ = try await retryDelay(events)
        try await eventually("the wait on the clock") { clock.sleepers == 1 }

        // When the group shuts down, Then the streams close and the run ends, the clock never moved
        await group.triggerGracefulShutdown()
        try await closed(events)
        try await running.value
        #expect(clock.now.offset == .zero)
        withExtendedLifetime(refusing) {}
    }

    /// A client that tries the brokers at `ports` until it is shut down, on `clock`, and its events.
    private func retryingClient(
        _ ports: [Int], clock: ManualClock
    ) async throws -> (MQTTClient, Inbox<MQTTConnectionEvent>) {
        var configuration = MQTTConfiguration(clientID: "retrying", reconnect: backoff, retryInitialConnection: true)
        configuration.brokers = ports.map { .init(host: "127.0.0.1", port: $0) }
        let client = try MQTTClient(configuration, logger: quiet, clock: clock)
        return (client, await Inbox.draining(client.connectionEvents()))
    }

    /// Waits for the `.closed` event (with `eventually`'s bound, so that a wait that is not cut short
    /// fails the test instead of hanging it).
    private func closed(_ events: Inbox<MQTTConnectionEvent>) async throws {
        _ = try await events.next("the end of the attempts") { $0 == .closed }
    }

    /// `disconnect()`, awaited only once the streams closed (as ``closed(_:)``: never a hang).
    private func shutDown(_ client: MQTTClient, _ events: Inbox<MQTTConnectionEvent>) async throws {
        let stopping = Task { await client.disconnect() }
        try await closed(events)
        await stopping.value
    }

    /// The delay the next `.disconnected` event announces.
    private func retryDelay(_ events: Inbox<MQTTConnectionEvent>) async throws -> Duration {
        let event = try await events.next("a failed attempt") {
            if case .disconnected = $0 { true } else { false }
        }
        guard case .disconnected(_, let delay) = event else { throw TimedOut("no failed attempt") }
        return delay
    }
}

private let quiet: Logger = {
    var logger = Logger(label: "test.reconnect")
    logger.logLevel = .critical
    return logger
}()
