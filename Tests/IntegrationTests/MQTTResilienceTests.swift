import Broker
import Foundation
import Logging
import MQTT
import ServiceLifecycle
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The client where brokers are unkind: limits, rivals for its client id, silence, old protocol
/// versions, several brokers, packets MQTT forbids. Each test fails without the behaviour it names.
@Suite("MQTT client against limits, silence and several brokers", .timeLimit(.minutes(5)))
struct MQTTResilienceTests {
    @Test(
        "a broker that accepts and drops the client at once is retried ever more slowly, not in a storm",
        arguments: Transport.allCases)
    func rivalsForOneClientIDBackOff(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                // Given two clients with the same client id, which the broker lets take over each other's session
                let sameID = "twin-\(UUID().uuidString.prefix(6))"
                let configure: (inout MQTTConfiguration) -> Void = {
                    $0.clientID = sameID
                    $0.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(30))
                }
                let first = try makeClient(broker, name: "first", configure: configure)
                let second = try makeClient(broker, name: "second", configure: configure)
                let events = await Inbox.draining(first.connectionEvents())
                try await first.connect()
                try await second.connect()

                // When they keep taking the id from each other
                var delays: [Duration] = []
                var reasons: [String] = []
                for _ in 0..<4 {
                    let event = try await events.next(within: .seconds(60), "a lost connection") {
                        if case .disconnected = $0 { true } else { false }
                    }
                    if case .disconnected(let error, let delay) = event {
                        delays.append(delay)
                        reasons.append(error.message)
                    }
                }
                await first.disconnect()
                await second.disconnect()

                // Then each retry waits longer than the one before could (the ceiling doubles from 100 ms:
                // the fourth is drawn from 400-800 ms), and the log says why the connection went
                #expect(delays[3] >= .milliseconds(400), "delays \(delays)")
                #expect(delays[3] > delays[0], "delays \(delays)")
                // (the first connection lasted as long as the second client took to connect, seconds on a
                // busy machine; the others a moment each)
                #expect(reasons.dropFirst().allSatisfy { $0.contains("same client id") }, "reasons \(reasons)")
            }
        }
    }

    @Test(
        "a subscription larger than the broker's maximum packet goes out in several packets",
        arguments: Transport.allCases)
    func subscriptionSplitToTheBrokersMaximumPacketSize(transport: Transport) async throws {
        try await transport.run {
            try await withBroker(.init(extraLines: ["max_packet_size 200"])) { broker in
                // Given 20 filters of about 30 bytes: one SUBSCRIBE would be over 600 bytes
                let filters = (0..<20).map { "limits/filter-number-\($0)/value" }
                let client = try makeClient(broker, name: "many")
                try await withConnected(client) { inbox in
                    // When the client subscribes to all of them at once
                    let granted = try await client.subscribe(to: filters, qos: .atLeastOnce)

                    // Then every filter is granted, and a message on the last one arrives
                    #expect(granted == Array(repeating: .atLeastOnce, count: 20))
                    try await client.publish(filters[19], "reached", qos: .atLeastOnce)
                    #expect(try await inbox.next { $0.topic == filters[19] }.payloadString == "reached")
                }
            }
        }
    }

    @Test(
        "MQTT 5: the client's maximum packet size goes in CONNECT, so the broker keeps larger messages from it",
        arguments: Transport.allCases)
    func maximumPacketSizeIsToldToTheBroker(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                // Given a subscriber that takes packets of up to 1,000 bytes
                let subscriber = try makeClient(broker, name: "small") { $0.maximumPacketSize = 1000 }
                try await withConnected(subscriber) { inbox in
                    try await subscriber.subscribe(to: ["size/#"], qos: .atLeastOnce)

                    // When a message of 5,000 bytes is published on its filter, then a small one
                    let publisher = try makeClient(broker, name: "large")
                    try await withConnected(publisher) { _ in
                        try await publisher.publish(
                            "size/large", payload: Array(repeating: 0x41, count: 5000), qos: .atLeastOnce)
                        try await publisher.publish("size/small", "after", qos: .atLeastOnce)
                    }

                    // Then only the small one arrives: the broker dropped the large one for this subscriber
                    #expect(try await inbox.next { $0.topic == "size/small" }.payloadString == "after")
                    #expect(await inbox.all.filter { $0.topic == "size/large" }.isEmpty)
                    #expect(subscriber.isConnected)
                }
            }
        }
    }

    @Test("a broker that never answers CONNECT fails the attempt at the connect timeout")
    func silentBrokerTimesOut() async throws {
        // Given a listener that takes the connection and the CONNECT and says nothing
        let silent = try ScriptedBroker { _ in .init(bytes: [], close: false) }
        defer { silent.stop() }
        let client = try MQTTClient(
            MQTTConfiguration(
                port: silent.port, clientID: "patient", keepAlive: .seconds(3600), connectTimeout: .seconds(1)),
            logger: quietLogger)

        // When the client connects, Then it fails with the timeout in words, long before the
        // keep-alive (a bound far above the 30 s a connect took at load 20, not a speed test)
        let started = ContinuousClock.now
        let error = try await #require(throws: MQTTError.self) { try await client.connect() }
        #expect(error.code == .connectionFailed)
        #expect(error.message.contains("connect timeout"), "\(error)")
        #expect(ContinuousClock.now - started < .seconds(1800))
        await client.disconnect()
    }

    @Test("a listener that never completes the TCP handshake fails the attempt at the connect timeout")
    func unansweredHandshakeTimesOut() async throws {
        // Given a listener whose accept queue is full, so the kernel drops further SYNs
        let listener = try FullListener()
        defer { listener.close() }
        let client = try MQTTClient(
            MQTTConfiguration(port: listener.port, clientID: "knocking", connectTimeout: .seconds(1)),
            logger: quietLogger)

        // When the client connects, Then the attempt ends at the timeout with a clear error
        let error = try await #require(throws: MQTTError.self) { try await client.connect() }
        #expect(error.code == .connectionFailed)
        #expect(error.message.contains("connect timeout"), "\(error)")
        await client.disconnect()
    }

    @Test(
        "MQTT 5 against a broker that speaks only 3.1.1: the error says to set the protocol version, and 3.1.1 connects",
        arguments: [true, false])
    func oldBrokerGetsAHint(refusesWithCONNACK: Bool) async throws {
        // Given a broker that knows only MQTT 3.1.1: it refuses (or drops) a v5 CONNECT and takes a 3.1.1 one
        let old = try ScriptedBroker { connect in
            let isV5 = ScriptedBroker.protocolLevel(connect) == 5
            if !isV5 { return .init(bytes: ScriptedPacket.connackAccepted(v5: false), close: false) }
            return .init(bytes: refusesWithCONNACK ? ScriptedPacket.connackUnacceptableProtocol : [], close: true)
        }
        defer { old.stop() }

        // When an MQTT 5 client connects, Then the error names the setting to change
        let modern = try MQTTClient(MQTTConfiguration(port: old.port, clientID: "modern"), logger: quietLogger)
        let error = try await #require(throws: MQTTError.self) { try await modern.connect() }
        #expect(error.message.contains("mqtt.protocolVersion: \"3.1.1\""), "\(error)")
        await modern.disconnect()

        // And a 3.1.1 client connects
        let older = try MQTTClient(
            MQTTConfiguration(port: old.port, clientID: "older", protocolVersion: .v311), logger: quietLogger)
        try await older.connect()
        #expect(older.isConnected)
        await older.disconnect()
        #expect(old.protocolLevels == [5, 4])
    }

    @Test("several brokers: the first that answers serves, the client moves to the next when it goes, and back")
    func failoverBetweenBrokers() async throws {
        try await withBroker { primary in
            try await withBroker { secondary in
                // Given a client with a dead address first, then two live brokers
                let refusing = try RefusingPort()
                let dead = refusing.port
                let client = try makeClient(primary, name: "roaming") {
                    $0.brokers = [
                        .init(host: "127.0.0.1", port: dead), .init(host: "127.0.0.1", port: primary.port),
                        .init(host: "127.0.0.1", port: secondary.port),
                    ]
                }
                let events = await Inbox.draining(client.connectionEvents())
                try await withConnected(client) { inbox in
                    // Then it connected to the first live one, with its subscription
                    #expect(client.connectedBroker?.port == primary.port)
                    try await client.subscribe(to: ["roam/#"], qos: .atLeastOnce)
                    _ = try await events.next { $0 == .connected(sessionPresent: false) }

                    // When that broker stops, Then the client moves to the other, subscribes there again,
                    // and counts the switch
                    await primary.stop()
                    _ = try await events.next("the move") { $0 == .connected(sessionPresent: false) }
                    #expect(client.connectedBroker?.port == secondary.port)
                    #expect(client.brokerSwitches == 1)
                    let local = try makeClient(secondary, name: "local")
                    try await withConnected(local) { _ in
                        try await local.publish("roam/here", "secondary", qos: .atLeastOnce)
                    }
                    #expect(try await inbox.next { $0.topic == "roam/here" }.payloadString == "secondary")

                    // When the first comes back and the second goes, Then it is back on the first
                    try await primary.start()
                    await secondary.stop()
                    _ = try await events.next("the move back") { $0 == .connected(sessionPresent: false) }
                    #expect(client.connectedBroker?.port == primary.port)
                    #expect(client.brokerSwitches == 2)
                }
                withExtendedLifetime(refusing) {}
            }
        }
    }

    @Test("a PUBLISH whose topic name has a wildcard is dropped, and what follows still arrives")
    func wildcardTopicNameIsDropped() async throws {
        // Given a broker that sends a forbidden topic name, then an ordinary message
        let rogue = try ScriptedBroker { _ in
            .init(
                bytes: ScriptedPacket.connackAccepted(v5: true)
                    + ScriptedPacket.publish(topic: "a/+/b", payload: "wild", v5: true)
                    + ScriptedPacket.publish(topic: "a/x/b", payload: "fine", v5: true),
                close: false)
        }
        defer { rogue.stop() }
        let client = try MQTTClient(MQTTConfiguration(port: rogue.port, clientID: "careful"), logger: quietLogger)
        let inbox = await Inbox.draining(client.messages)
        try await client.connect()

        // Then only the ordinary message is delivered
        #expect(try await inbox.next().topic == "a/x/b")
        #expect(await inbox.all.isEmpty)
        await client.disconnect()
    }

    @Test("a QoS 1 PUBLISH with packet id 0 ends the connection as a protocol error, and is not delivered")
    func packetIDZeroIsAProtocolError() async throws {
        let rogue = try ScriptedBroker { _ in
            .init(
                bytes: ScriptedPacket.connackAccepted(v5: true)
                    + ScriptedPacket.publish(topic: "a/b", payload: "zero", qos1PacketID: 0, v5: true),
                close: false)
        }
        defer { rogue.stop() }
        let client = try MQTTClient(MQTTConfiguration(port: rogue.port, clientID: "strict"), logger: quietLogger)
        let inbox = await Inbox.draining(client.messages)
        let events = await Inbox.draining(client.connectionEvents())
        try await client.connect()

        let error = try await lostConnection(events, "the end of the connection")
        #expect(error.code == .protocolError, "\(error)")
        #expect(await inbox.all.isEmpty)
        await client.disconnect()
    }

    @Test("a DISCONNECT from the broker is reported with its reason, in the broker's words")
    func brokerDisconnectReasonInWords() async throws {
        // Given a broker that accepts the connection and then sends DISCONNECT "Packet too large"
        let strict = try ScriptedBroker { _ in
            .init(
                bytes: ScriptedPacket.connackAccepted(v5: true) + ScriptedPacket.disconnect(reason: 0x95), close: false)
        }
        defer { strict.stop() }
        let client = try MQTTClient(MQTTConfiguration(port: strict.port, clientID: "chatty"), logger: quietLogger)
        let events = await Inbox.draining(client.connectionEvents())
        try await client.connect()

        // Then the lost connection names the reason, not "Success"
        let error = try await lostConnection(events, "the disconnect")
        #expect(error.message.contains("Packet too large"), "\(error)")
        #expect(error.reasonCode == 0x95)
        await client.disconnect()
    }

    @Test("a keep-alive timeout says so in words")
    func keepAliveTimeoutInWords() async throws {
        // Given a broker that accepts the connection and then never answers a PINGREQ
        let mute = try ScriptedBroker { _ in .init(bytes: ScriptedPacket.connackAccepted(v5: true), close: false) }
        defer { mute.stop() }
        let client = try MQTTClient(
            MQTTConfiguration(port: mute.port, clientID: "pinging", keepAlive: .seconds(5)), logger: quietLogger)
        let events = await Inbox.draining(client.connectionEvents())
        try await client.connect()

        // Then the connection ends, after one keep-alive without an answer, with the reason in words
        let error = try await lostConnection(events, "the keep-alive timeout", within: .seconds(60))
        #expect(error.code == .connectionLost)
        #expect(error.message.contains("keep-alive"), "\(error)")
        await client.disconnect()
    }

    @Test("a broker that takes less than QoS 2 or keeps no retained messages is named in the log on connecting")
    func brokerLimitsAreWarnedAbout() async throws {
        try await withBroker(.init(listenerLines: ["max_qos 1", "retain_available false"])) { broker in
            let lines = LogLines()
            let client = try MQTTClient(
                MQTTConfiguration(port: broker.port, clientID: "limited"), logger: Logger(label: "test") { _ in lines })
            try await client.connect()
            await client.disconnect()
            let warnings = lines.all.filter { $0.level == .warning }.map(\.message)
            #expect(warnings.contains { $0.contains("accepts publishes up to QoS 1 only") }, "\(warnings)")
            #expect(warnings.contains { $0.contains("keeps no retained messages") }, "\(warnings)")
        }
    }

    @Test("a keep-alive libmosquitto cannot send as given is refused when the client is made")
    func keepAliveOutOfRangeIsRefused() throws {
        for keepAlive in [Duration.seconds(2), .milliseconds(7500), .seconds(70_000)] {
            #expect(throws: MQTTError.self) {
                _ = try MQTTClient(MQTTConfiguration(clientID: "k", keepAlive: keepAlive), logger: quietLogger)
            }
        }
        _ = try MQTTClient(MQTTConfiguration(clientID: "k", keepAlive: .zero), logger: quietLogger)
    }

    @Test("a graceful shutdown while no broker answers ends the client's run at once")
    func shutdownWithoutABroker() async throws {
        // Given a client run as a service that keeps trying a port where nothing listens
        let refusing = try RefusingPort()
        let client = try MQTTClient(
            MQTTConfiguration(port: refusing.port, clientID: "lonely", retryInitialConnection: true),
            logger: quietLogger)
        let events = await Inbox.draining(client.connectionEvents())
        let group = ServiceGroup(services: [client], logger: quietLogger)
        let running = Task { try await group.run() }
        _ = try await events.next("a failed attempt") {
            if case .disconnected = $0 { true } else { false }
        }

        // When the service group shuts down, Then the run ends without a broker ever answering
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(try await events.next("closed") { $0 == .closed } == .closed)
        withExtendedLifetime(refusing) {}
    }

    /// The error of the next `.disconnected` event.
    private func lostConnection(
        _ events: Inbox<MQTTConnectionEvent>, _ what: String, within timeout: Duration = .seconds(60)
    ) async throws -> MQTTError {
        let event = try await events.next(within: timeout, what) {
            if case .disconnected = $0 { true } else { false }
        }
        guard case .disconnected(let error, _) = event else { throw TimedOut("no \(what)") }
        return error
    }

}

private let quietLogger: Logger = {
    var logger = Logger(label: "test.resilience")
    logger.logLevel = .critical
    return logger
}()

/// A loopback listener whose accept queue is full: the kernel drops the SYNs of further
/// connections, so they neither succeed nor fail until the client gives up.
private final class FullListener: Sendable {
    let port: Int
    private let descriptors: [Int32]

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { throw TimedOut("could not listen: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        // Fill the queue: connections the listener never accepts.
        var fillers: [Int32] = []
        for _ in 0..<2 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
            }
            fillers.append(filler)
        }
        descriptors = [listener] + fillers
    }

    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }
}
