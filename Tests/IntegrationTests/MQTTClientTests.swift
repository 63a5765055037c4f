import AsyncMailbox
import Foundation
import MQTT
import Synchronization
import TestSupport
import Testing

@testable import Broker

@Suite("MQTT client against a real mosquitto", .timeLimit(.minutes(5)))
struct MQTTClientTests {
    /// Which thread serves a client's connection (its own, or an event loop it shares with tasks),
    /// over plain TCP or TLS.
    enum Serving: String, CaseIterable, CustomTestStringConvertible {
        case ownThread, eventLoop, tlsOwnThread, tlsEventLoop
        var testDescription: String { rawValue }

        /// Runs `body` under this transport with the loop to give the client (nil for its own
        /// thread), stopped afterwards.
        func with<T>(_ body: (EventLoopThread?) async throws -> T) async rethrows -> T {
            let usesLoop = self == .eventLoop || self == .tlsEventLoop
            let loop = usesLoop ? EventLoopThread(name: "test-loop") : nil
            defer { loop?.stop() }
            let transport: Transport = self == .tlsOwnThread || self == .tlsEventLoop ? .tls : .tcp
            return try await transport.run { try await body(loop) }
        }
    }

    @Test("publish and subscribe at every QoS", arguments: MQTTQoS.allCases, Serving.allCases)
    func publishSubscribe(qos: MQTTQoS, serving: Serving) async throws {
        try await serving.with { loop in
            try await withBroker { broker in
                let subscriber = try makeClient(broker, name: "sub", loop: loop)
                let publisher = try makeClient(broker, name: "pub", loop: loop)
                try await withConnected(subscriber) { inbox in
                    // Given a subscription at the QoS under test
                    let granted = try await subscriber.subscribe(to: ["qos/\(qos.rawValue)/#"], qos: qos)
                    #expect(granted == [qos])

                    // When another client publishes three messages at that QoS
                    try await withConnected(publisher) { _ in
                        for index in 1...3 {
                            try await publisher.publish(
                                "qos/\(qos.rawValue)/m", payload: bytes("message \(index)"), qos: qos)
                        }
                    }

                    // Then they arrive in order, at that QoS, not flagged retained
                    for index in 1...3 {
                        let message = try await inbox.next { $0.topic == "qos/\(qos.rawValue)/m" }
                        #expect(message.payloadString == "message \(index)")
                        #expect(message.qos == qos)
                        #expect(message.retain == false)
                    }
                }
            }
        }
    }

    @Test(
        "a retained message reaches a late subscriber; an empty retained message clears it",
        arguments: Transport.allCases)
    func retainedMessages(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                let publisher = try makeClient(broker, name: "pub")
                try await withConnected(publisher) { _ in
                    // Given two retained topics
                    try await publisher.publish("home/kept", "21.5", qos: .atLeastOnce, retain: true)
                    try await publisher.publish("home/cleared", "on", qos: .atLeastOnce, retain: true)

                    // When one is cleared with an empty retained message
                    try await publisher.publish("home/cleared", payload: [], qos: .atLeastOnce, retain: true)
                }

                // Then a subscriber that comes later gets the kept one, flagged retained
                let late = try makeClient(broker, name: "late")
                try await withConnected(late) { inbox in
                    try await late.subscribe(to: ["home/kept"])
                    let kept = try await inbox.next { $0.topic == "home/kept" }
                    #expect(kept.payloadString == "21.5")
                    #expect(kept.retain)

                    // and nothing for the cleared one: retained messages come before the SUBACK's
                    // followers, so a marker published after subscribing proves nothing was held back.
                    try await late.subscribe(to: ["home/cleared", "marker"])
                    try await late.publish("marker", "done", qos: .atLeastOnce)
                    _ = try await inbox.next { $0.topic == "marker" }
                    #expect(await inbox.all.filter { $0.topic == "home/cleared" }.isEmpty)
                }
            }
        }
    }

    @Test("a wrong password fails with the broker's reason", arguments: [MQTTConfiguration.ProtocolVersion.v5, .v311])
    func wrongPassword(version: MQTTConfiguration.ProtocolVersion) async throws {
        let configuration = MosquittoBroker.Configuration(allowAnonymous: false, passwords: ["alice": "right"])
        try await withBroker(configuration) { broker in
            // Given a client with the wrong password
            let client = try makeClient(broker, name: "alice") {
                $0.username = "alice"
                $0.password = "wrong"
                $0.protocolVersion = version
            }

            // When it connects, then the connection is refused with mosquitto's reason
            let error = try await #require(throws: MQTTError.self) { try await client.connect() }
            #expect(error.code == .notAuthorized || error.code == .badCredentials)
            #expect(!error.message.isEmpty)
            #expect(error.reasonCode != nil)
            #expect(!client.isConnected)

            // And the right password works
            let good = try makeClient(broker, name: "alice") {
                $0.username = "alice"
                $0.password = "right"
                $0.protocolVersion = version
            }
            try await withConnected(good) { _ in #expect(good.isConnected) }
            await client.disconnect()
        }
    }

    @Test("a listener that starts while the client connects hears of the connection once", arguments: Serving.allCases)
    func connectionAnnouncedOnce(serving: Serving) async throws {
        try await serving.with { loop in
            try await withBroker { broker in
                let client = try makeClient(broker, name: "announced", loop: loop)
                // Listeners start one after another, on a thread of their own, until well after the
                // connection: some start while the client takes the broker's CONNACK in.
                let listening = Task.detached {
                    var streams: [AsyncStream<MQTTConnectionEvent>] = []
                    var afterConnected = 0
                    // Bounded, so that a connect that fails ends the test rather than filling memory.
                    while afterConnected < 200 && streams.count < 50_000 {
                        streams.append(client.connectionEvents())
                        if client.isConnected { afterConnected += 1 }
                    }
                    return streams
                }
                try await client.connect()
                let streams = await listening.value
                // Every stream ends with `.closed` at the disconnect.
                await client.disconnect()
                var heardOnce = 0
                for stream in streams {
                    var connected = 0
                    for await event in stream { if case .connected = event { connected += 1 } }
                    #expect(connected <= 1, "a listener heard of one connection \(connected) times")
                    if connected == 1 { heardOnce += 1 }
                }
                #expect(heardOnce >= 200)
            }
        }
    }

    @Test("nothing listening: the connection fails with the system's reason")
    func nothingListening() async throws {
        let refusing = try RefusingPort()
        let client = try MQTTClient(MQTTConfiguration(port: refusing.port, clientID: "nobody"))
        let error = try await #require(throws: MQTTError.self) { try await client.connect() }
        #expect(error.code == .connectionFailed)
        #expect(error.message.localizedCaseInsensitiveContains("refused"))
        await client.disconnect()
        withExtendedLifetime(refusing) {}
    }

    @Test(
        "a broker that stops answering is found by the keep-alive, even while the client keeps publishing",
        arguments: Serving.allCases)
    func silentBroker(serving: Serving) async throws {
        try await serving.with { loop in
            try await withBroker { broker in
                // Given a client with the shortest keep-alive, connected
                let client = try makeClient(broker, name: "keepalive", loop: loop) { $0.keepAlive = .seconds(5) }
                let events = await Inbox.draining(client.connectionEvents())
                try await withConnected(client) { _ in
                    _ = try await events.next { $0 == .connected(sessionPresent: false) }

                    // When the broker freezes (its connections stay open) while the client
                    // publishes more often than the keep-alive, so it never goes quiet itself
                    broker.send(SIGSTOP)
                    defer { broker.send(SIGCONT) }
                    let publishing = Task {
                        while !Task.isCancelled {
                            try? await client.publish("alive/tick", "1")
                            try? await Task.sleep(for: .milliseconds(200))
                        }
                    }
                    defer { publishing.cancel() }

                    // Then the client finds the connection dead (a ping unanswered), and is back
                    // once the broker is
                    _ = try await events.next(within: .seconds(40), "disconnect event") {
                        if case .disconnected = $0 { true } else { false }
                    }
                    broker.send(SIGCONT)
                    _ = try await events.next(within: .seconds(40), "reconnect") {
                        $0 == .connected(sessionPresent: false)
                    }
                }
            }
        }
    }

    @Test(
        "a QoS above the broker's maximum is refused at once, and what follows still goes",
        arguments: Transport.allCases)
    func maximumQoS(transport: Transport) async throws {
        try await transport.run {
            try await withBroker(.init(listenerLines: ["max_qos 1"])) { broker in
                let client = try makeClient(broker, name: "maxqos")
                try await withConnected(client) { inbox in
                    try await client.subscribe(to: ["limited/#"])
                    let error = try await #require(throws: MQTTError.self) {
                        try await client.publish("limited/two", "x", qos: .exactlyOnce)
                    }
                    #expect(error.code == .notSupported)
                    try await client.publish("limited/one", "y", qos: .atLeastOnce)
                    #expect(try await inbox.next { $0.topic.hasPrefix("limited/") }.topic == "limited/one")
                }
            }
        }
    }

    @Test("a subscription that dynamic security refuses is reported", arguments: Transport.allCases)
    func refusedSubscription(transport: Transport) async throws {
        try await transport.run {
            let configuration = MosquittoBroker.Configuration(
                allowAnonymous: false, dynamicSecurity: .init(adminPassword: "admin-secret"))
            try await withBroker(configuration) { broker in
                // Given an account with no role: dynamic security denies it every subscription
                try broker.dynamicSecurity(["createClient", "limited", "-p", "limited-secret"])
                let client = try makeClient(broker, name: "limited") {
                    $0.username = "limited"
                    $0.password = "limited-secret"
                }
                try await withConnected(client) { _ in
                    // When it subscribes
                    let error = try await #require(throws: MQTTError.self) {
                        try await client.subscribe(to: ["secret/#"])
                    }
                    // Then the refusal names the filter and the broker's reason
                    #expect(error.code == .subscriptionRefused)
                    #expect(error.message.contains("secret/#"))
                    #expect(error.message.localizedCaseInsensitiveContains("not authorized"))
                    #expect(error.reasonCode == 0x87)
                }
            }
        }
    }

    @Test(
        "MQTT v5 response topic, correlation data and user properties survive a round trip",
        arguments: Transport.allCases)
    func v5Properties(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                let responder = try makeClient(broker, name: "responder")
                let requester = try makeClient(broker, name: "requester")
                try await withConnected(responder) { requests in
                    try await responder.subscribe(to: ["req/#"])
                    try await withConnected(requester) { responses in
                        try await requester.subscribe(to: ["resp/requester"])

                        // Given a request with v5 properties
                        let properties = MQTTProperties(
                            responseTopic: "resp/requester",
                            correlationData: [0, 1, 2, 0xFF],
                            userProperties: [.init("trace", "42"), .init("trace", "43"), .init("lang", "de")],
                            messageExpiryInterval: 60,
                            contentType: "application/json")
                        try await requester.publish("req/op", "{}", qos: .atLeastOnce, properties: properties)

                        // When the responder answers where the request asked, with its correlation data
                        let request = try await requests.next { $0.topic == "req/op" }
                        #expect(request.properties.responseTopic == "resp/requester")
                        #expect(request.properties.correlationData == [0, 1, 2, 0xFF])
                        #expect(request.properties.userProperties == properties.userProperties)
                        #expect(request.properties.contentType == "application/json")
                        #expect((1...60).contains(request.properties.messageExpiryInterval ?? 0))
                        let responseTopic = try #require(request.properties.responseTopic)
                        try await responder.publish(
                            responseTopic, "ok", qos: .atLeastOnce,
                            properties: MQTTProperties(correlationData: request.properties.correlationData))

                        // Then the requester gets it with the same correlation data
                        let response = try await responses.next { $0.topic == "resp/requester" }
                        #expect(response.payloadString == "ok")
                        #expect(response.properties.correlationData == [0, 1, 2, 0xFF])
                    }
                }
            }
        }
    }

    @Test("an MQTT 3.1.1 client works, and refuses v5 properties with a clear error", arguments: Transport.allCases)
    func v311(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                let client = try makeClient(broker, name: "v311") { $0.protocolVersion = .v311 }
                try await withConnected(client) { inbox in
                    try await client.subscribe(to: ["v3/#"])
                    try await client.publish("v3/a", "hello", qos: .exactlyOnce)
                    #expect(try await inbox.next { $0.topic == "v3/a" }.payloadString == "hello")

                    let error = try await #require(throws: MQTTError.self) {
                        try await client.publish("v3/b", "x", properties: MQTTProperties(responseTopic: "r"))
                    }
                    #expect(error.code == .notSupported)
                }
            }
        }
    }

    @Test(
        "after a broker restart the client reconnects, subscribes again and receives; QoS 1 publishes made meanwhile arrive",
        arguments: Serving.allCases)
    func reconnectAfterBrokerRestart(serving: Serving) async throws {
        try await serving.with { loop in
            try await withBroker { broker in
                let client = try makeClient(broker, name: "survivor", loop: loop)
                let events = await Inbox.draining(client.connectionEvents())
                try await withConnected(client) { inbox in
                    // Given a connected client with a subscription (clean session)
                    try await client.subscribe(to: ["restart/#"])
                    _ = try await events.next { $0 == .connected(sessionPresent: false) }

                    // When the broker stops
                    await broker.stop()
                    _ = try await events.next("disconnect event") {
                        if case .disconnected = $0 { true } else { false }
                    }
                    #expect(!client.isConnected)

                    // and a QoS 1 message is queued while it is away (synchronously: a publish made
                    // while the client reconnects, between its CONNECT and the broker's CONNACK, goes
                    // out before the subscriptions are made again, and its own subscription misses it),
                    // and one more whose acknowledgement is awaited
                    try client.send("restart/queued", payload: Array("kept".utf8), qos: .atLeastOnce)
                    let sentWhileDown = Task { try await client.publish("restart/acked", "acked", qos: .atLeastOnce) }

                    // and the broker comes back on the same port
                    try await broker.start()

                    // Then the client reconnects by itself, the queued publish is delivered and acknowledged,
                    // and the subscription was made again (it receives its own publish)
                    _ = try await events.next("reconnect") { $0 == .connected(sessionPresent: false) }
                    try await sentWhileDown.value
                    #expect(try await inbox.next { $0.topic == "restart/queued" }.payloadString == "kept")

                    let other = try makeClient(broker, name: "other")
                    try await withConnected(other) { _ in
                        try await other.publish("restart/after", "again", qos: .atLeastOnce)
                    }
                    #expect(try await inbox.next { $0.topic == "restart/after" }.payloadString == "again")
                }
            }
        }
    }

    @Test("a persistent session gets the QoS 1 messages published while it was away", arguments: Transport.allCases)
    func persistentSession(transport: Transport) async throws {
        try await transport.run {
            try await withBroker(.init(persistence: true)) { broker in
                // Given a client with a persistent session and a QoS 1 subscription
                let id = "persistent-\(UUID().uuidString.prefix(8))"
                let client = try makeClient(broker, name: "persistent") {
                    $0.clientID = id
                    $0.cleanSession = false
                }
                let events = await Inbox.draining(client.connectionEvents())
                try await withConnected(client) { _ in
                    try await client.subscribe(to: ["away/#"], qos: .atLeastOnce)

                    // When the broker stops (keeping sessions on disk) while the client is connected, and
                    // the client stays away (no reconnect can come before the message: the client is
                    // stopped before the broker starts again)
                    await broker.stop()
                    _ = try await events.next("disconnect event") {
                        if case .disconnected = $0 { true } else { false }
                    }
                }
                try await broker.start()
                let publisher = try makeClient(broker, name: "publisher")
                try await withConnected(publisher) { _ in
                    try await publisher.publish("away/news", "while you were out", qos: .atLeastOnce)
                }

                // Then the broker kept the session: the client coming back with the same id finds it and
                // gets the message
                let back = try makeClient(broker, name: "persistent") {
                    $0.clientID = id
                    $0.cleanSession = false
                }
                let backEvents = await Inbox.draining(back.connectionEvents())
                try await withConnected(back) { inbox in
                    _ = try await backEvents.next("connected", where: { $0 == .connected(sessionPresent: true) })
                    let message = try await inbox.next { $0.topic == "away/news" }
                    #expect(message.payloadString == "while you were out")
                    #expect(message.qos == .atLeastOnce)
                }
            }
        }
    }

    /// A broker that crashes and restores a persistence file saved before the client subscribed
    /// says the session is there, but it lacks the subscription: the client subscribes again on
    /// every reconnect (a hub's mosquitto after a power cut left the gateway deaf to commands).
    @Test("after a broker crash restores a session saved before the subscription, the client subscribes again")
    func resubscribesWhenTheSessionLacksIt() async throws {
        try await withBroker(.init(persistence: true)) { broker in
            let client = try makeClient(broker, name: "persistent") { $0.cleanSession = false }
            let events = await Inbox.draining(client.connectionEvents())
            try await withConnected(client) { inbox in
                // Given the broker's file holding the client's session without a subscription (saved
                // as it stopped), and the client subscribed after that
                _ = try await events.next("connected") { $0 == .connected(sessionPresent: false) }
                await broker.stop()
                try await broker.start()
                _ = try await events.next("back") { $0 == .connected(sessionPresent: true) }
                try await client.subscribe(to: ["crash/#"], qos: .atLeastOnce)

                // When the broker crashes (no save) and comes back from that file
                await broker.stop(with: SIGKILL)
                try await broker.start()
                _ = try await events.next("back again") { $0 == .connected(sessionPresent: true) }

                // Then the subscription is there again: a retained message reaches the client
                let publisher = try makeClient(broker, name: "publisher")
                try await withConnected(publisher) { _ in
                    try await publisher.publish("crash/news", "still here", qos: .atLeastOnce, retain: true)
                }
                let message = try await inbox.next("the retained message") { $0.topic == "crash/news" }
                #expect(message.payloadString == "still here")
            }
        }
    }

    @Test("TLS: a trusted certificate connects; an untrusted one is refused")
    func tls() async throws {
        try await withTemporaryDirectory { directory in
            let trusted = try TestCertificates.make(in: "\(directory)/trusted")
            let stranger = try TestCertificates.make(in: "\(directory)/stranger", authorityName: "someone else")
            let listener = MosquittoBroker.Configuration.TLSListener(
                certificateFile: trusted.serverCertificateFile, keyFile: trusted.serverKeyFile)
            try await withBroker(.init(tls: listener)) { broker in
                let tlsPort = try #require(broker.tlsPort)

                // A client that trusts the broker's CA connects and works over TLS
                let good = try makeClient(broker, name: "tls") {
                    $0.brokers[0].port = tlsPort
                    $0.tls = .init(caFile: trusted.caFile)
                }
                try await withConnected(good) { inbox in
                    try await good.subscribe(to: ["tls/#"])
                    try await good.publish("tls/x", "secret", qos: .atLeastOnce)
                    #expect(try await inbox.next { $0.topic == "tls/x" }.payloadString == "secret")
                }

                // A client that trusts another CA is refused, with the TLS reason
                let wary = try makeClient(broker, name: "wary") {
                    $0.brokers[0].port = tlsPort
                    $0.tls = .init(caFile: stranger.caFile)
                }
                let error = try await #require(throws: MQTTError.self) { try await wary.connect() }
                #expect(error.code == .tls)
                #expect(error.message.localizedCaseInsensitiveContains("certificate verify failed"))

                // And so is one that relies on the system's trust store
                let system = try makeClient(broker, name: "system") {
                    $0.brokers[0].port = tlsPort
                    $0.tls = .init()
                }
                await #expect(throws: MQTTError.self) { try await system.connect() }
                await wary.disconnect()
                await system.disconnect()
            }
        }
    }

    @Test("after unsubscribing, messages on that filter stop arriving", arguments: Transport.allCases)
    func unsubscribe(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                let client = try makeClient(broker)
                try await withConnected(client) { inbox in
                    // Given a subscription that works
                    try await client.subscribe(to: ["unsub/#", "marker"])
                    try await client.publish("unsub/a", "before", qos: .atLeastOnce)
                    _ = try await inbox.next { $0.topic == "unsub/a" }

                    // When it is removed
                    try await client.unsubscribe(from: ["unsub/#"])
                    try await client.publish("unsub/a", "after", qos: .atLeastOnce)
                    try await client.publish("marker", "done", qos: .atLeastOnce)

                    // Then the message published after it does not arrive (the marker, sent later, did)
                    _ = try await inbox.next { $0.topic == "marker" }
                    #expect(await inbox.all.filter { $0.topic == "unsub/a" }.isEmpty)
                }
            }
        }
    }

    @Test(
        "on the loop, writeQueuedNow sends what a job queued while the job still runs; the rest leaves at the pass's end",
        arguments: Transport.allCases)
    func writeQueuedNow(transport: Transport) async throws {
        try await transport.run {
            try await withBroker { broker in
                let loop = EventLoopThread(name: "test-loop")
                defer { loop.stop() }
                let subscriber = try makeClient(broker, name: "sub")
                let publisher = try makeClient(broker, name: "pub", loop: loop)
                try await withConnected(subscriber) { inbox in
                    try await subscriber.subscribe(to: ["early/#"], qos: .atLeastOnce)
                    try await withConnected(publisher) { _ in
                        // The client connects on its own thread and hands the connection to the loop
                        // after the CONNACK; an acknowledgement read later is read on the loop, so from
                        // here the loop's passes serve the connection
                        try await publisher.publish("early/handed-over", "0", qos: .atLeastOnce)
                        let arrived = DispatchSemaphore(value: 0)
                        let watcher = Task {
                            _ = try await inbox.next { $0.topic == "early/first" }
                            arrived.signal()
                        }
                        // Given a job on the loop that queues a message and asks for it to be written now
                        let onLoop = RunsOnLoop(loop)
                        let job = Task {
                            await onLoop.run { () -> Bool in
                                try? publisher.send("early/first", payload: bytes("1"), qos: .atLeastOnce)
                                loop.writeQueuedNow()
                                try? publisher.send("early/second", payload: bytes("2"), qos: .atLeastOnce)
                                // When the job holds the loop until the first message has arrived (it could not
                                // arrive before the job's end without the early write; the limit only ends a
                                // failing run)
                                return arrived.wait(timeout: .now() + 60) == .success
                            }
                        }
                        // Then it arrived while the job ran, and the second one after the job
                        #expect(await job.value)
                        try await watcher.value
                        #expect(try await inbox.next { $0.topic == "early/second" }.payloadString == "2")
                    }
                }
            }
        }
    }

    @Test("an acl_file filters what an account may read and write", arguments: Transport.allCases)
    func accessRules(transport: Transport) async throws {
        try await transport.run {
            let rules = """
                user reader
                topic read public/#

                user writer
                topic write public/#
                topic write private/#
                """
            let configuration = MosquittoBroker.Configuration(
                allowAnonymous: false, passwords: ["reader": "r", "writer": "w"], accessRules: rules)
            try await withBroker(configuration) { broker in
                let reader = try makeClient(broker, name: "reader") {
                    $0.username = "reader"
                    $0.password = "r"
                }
                let writer = try makeClient(broker, name: "writer") {
                    $0.username = "writer"
                    $0.password = "w"
                }
                try await withConnected(reader) { inbox in
                    // mosquitto's acl_file grants every subscription and filters delivery instead
                    try await reader.subscribe(to: ["private/#", "public/#"])
                    try await withConnected(writer) { _ in
                        try await writer.publish("private/diary", "secret", qos: .atLeastOnce)
                        try await writer.publish("public/news", "hello", qos: .atLeastOnce)
                    }
                    #expect(try await inbox.next { $0.topic == "public/news" }.payloadString == "hello")
                    #expect(await inbox.all.filter { $0.topic.hasPrefix("private/") }.isEmpty)
                }
            }
        }
    }

    @Test("after disconnect the client refuses work and its streams end", arguments: Serving.allCases)
    func disconnectEnds(serving: Serving) async throws {
        try await serving.with { loop in
            try await withBroker { broker in
                let client = try makeClient(broker, loop: loop)
                let events = await Inbox.draining(client.connectionEvents())
                try await client.connect()
                await client.disconnect()
                _ = try await events.next { $0 == .closed }
                let error = try await #require(throws: MQTTError.self) { try await client.publish("x", "y") }
                #expect(error.code == .clientClosed)
                var iterator = client.messages.makeAsyncIterator()
                #expect(await iterator.next() == nil)
            }
        }
    }
}

/// Runs a closure as one job on the loop, as an actor on the loop does.
private actor RunsOnLoop {
    let loop: EventLoopThread
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(_ loop: EventLoopThread) { self.loop = loop }

    func run<Value: Sendable>(_ body: @Sendable () -> Value) -> Value { body() }
}

extension MosquittoBroker {
    /// Sends `signal` to the broker process: SIGSTOP and SIGCONT freeze and thaw it, as a broker
    /// that stops answering without closing its connections.
    fileprivate func send(_ signal: Int32) {
        process.withLock { $0 }?.send(signal)
    }
}
