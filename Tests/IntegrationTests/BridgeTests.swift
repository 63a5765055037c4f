import Broker
import Foundation
import Gateway
import JSON
import MQTT
import TestSupport
import Testing

/// A hub bridged to a central broker (issue 34, docs/scaling.md): the gateway's mosquitto forwards
/// the home to a second mosquitto over mosquitto's own bridge, with the configuration the document
/// gives, and clients of the central broker use the home through it.
@Suite("Bridge: a hub's mosquitto bridged to a central broker", .timeLimit(.minutes(5)))
struct BridgeTests {
    static let accounts = ["owner", "guest", "stranger", "homeassistant", "homegate"]
    static let main = "homegate/Main House"
    static let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb"
    static let counter = "homegate/Main House/Kitchen/Counter Lights/Switch/On"
    static let stairs = "homegate/Main House/Hallway/Stair Light/Lightbulb/Brightness"

    /// The two brokers and the gateway of one test.
    struct Bridged {
        let gateway: RunningGateway
        let central: MosquittoBroker
        let bridge: MosquittoBridge
        var hub: MosquittoBroker { gateway.broker }
    }

    /// Starts the central broker (TLS listener for the bridge, plain one for the test's clients, the
    /// demo home's generated acl_file, persistence as asked), then the gateway on a hub broker with
    /// the same rules and the bridge, waits until the central broker holds every retained topic the
    /// gateway published, runs `body`, and stops everything. The devices do not move by themselves
    /// (the test compares payloads on both brokers).
    static func withBridge(persistentCentral: Bool, _ body: (Bridged) async throws -> Void) async throws {
        try await withTemporaryDirectory { folder in
            let certificates = try TestCertificates.make(in: "\(folder)/tls")
            let rules = try await ConfinementTests.demoRules().aclFile()
            let passwords = Dictionary(uniqueKeysWithValues: accounts.map { ($0, $0) })
            var bridge = MosquittoBridge(centralPort: 0, caFile: certificates.caFile)
            let central = try await MosquittoBroker.start(
                .init(
                    allowAnonymous: false, passwords: passwords, accessRules: rules + bridge.centralAccessRules,
                    tls: .init(
                        certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile),
                    persistence: persistentCentral))
            do {
                bridge.centralPort = try #require(central.tlsPort)
                let hub = MosquittoBroker.Configuration(
                    allowAnonymous: false, passwords: passwords, accessRules: rules + bridge.hubAccessRules,
                    persistence: true, extraLines: bridge.configuration)
                try await withGateway(hub, gatewayAccount: "homegate", tick: .seconds(3600)) { gateway in
                    try await waitForRetainedTopics(
                        port: central.port, account: bridge.account, topics: gateway.topics, within: .seconds(60)
                    ) {
                        await gateway.expectedRetainedTopics()
                    }
                    try await body(Bridged(gateway: gateway, central: central, bridge: bridge))
                }
                await central.stop(removingFiles: true)
            } catch {
                Issue.record("central broker log:\n\(central.log)")
                await central.stop(removingFiles: true)
                throw error
            }
        }
    }

    /// Waits until `account` sees the same retained messages (topics and payloads) on both brokers.
    static func waitUntilMirrored(_ account: String, _ bridged: Bridged, within timeout: Duration = .seconds(60))
        async throws -> [String: String]
    {
        try await withBridgedAccount(account, port: bridged.hub.port) { onHub in
            try await withBridgedAccount(account, port: bridged.central.port) { onCentral in
                var differing: [String] = []
                return try await eventuallyValue(
                    "\(account)'s view the same on both brokers (differing: \(differing))", timeout: timeout
                ) {
                    let hub = try await onHub.retained(under: "homegate/#")
                    let central = try await onCentral.retained(under: "homegate/#")
                    differing = Set(hub.keys).union(central.keys).filter { hub[$0] != central[$0] }.sorted().map {
                        "\($0): hub \(hub[$0] ?? "-"), central \(central[$0] ?? "-")"
                    }
                    return hub == central ? central : nil
                }
            }
        }
    }

    @Test(
        "the central broker holds the home's retained state, answers its members' commands across the bridge, and confines each account to its homes"
    )
    func mirrorsAnswersAndConfines() async throws {
        try await Self.withBridge(persistentCentral: true) { bridged in
            let expected = await bridged.gateway.expectedRetainedTopics()

            // The fixture waited until the central broker holds every retained topic under the base
            // topic; a member sees the same payloads there as on the hub
            let owner = try await Self.waitUntilMirrored("owner", bridged)
            #expect(owner["homegate/$status"] == "online")
            #expect(owner["\(Self.lamp)/Brightness"] == "100")
            let layout = try JSON.parse(try #require(owner["\(Self.main)/$layout"]))
            #expect(layout["name"] == .string("Main House"))
            #expect(
                Set(owner.keys)
                    == expected.filter {
                        $0.hasPrefix("\(Self.main)/") || $0.hasPrefix("homegate/Lake Cabin/")
                            || ["homegate/$status", "homegate/$homes", "homegate/$discovered"].contains($0)
                    })

            // And the central broker confines each account as the hub does: guest sees Main House
            // only, stranger only the gateway's status, and the bridge's state is readable
            let guest = try await BridgedAccount.connect("guest", port: bridged.central.port)
            let stranger = try await BridgedAccount.connect("stranger", port: bridged.central.port)
            #expect(
                Set(try await guest.retained(under: "homegate/#").keys)
                    == expected.filter { $0.hasPrefix("\(Self.main)/") || $0 == "homegate/$status" })
            #expect(try await stranger.retained(under: "homegate/#") == ["homegate/$status": "online"])
            #expect(try await guest.retained(under: bridged.bridge.stateTopic) == [bridged.bridge.stateTopic: "1"])

            // When owner, on the central broker, sends a request and writes a characteristic
            let central = try await BridgedAccount.connect("owner", port: bridged.central.port)
            let homes = try await central.request("homes", id: "homes-1")
            try await central.client.subscribe(to: ["\(Self.lamp)/Brightness"], qos: .atLeastOnce)
            try await central.client.publish("\(Self.lamp)/Brightness/set/owner", "42", qos: .atLeastOnce)

            // Then the request is answered there, and the new value comes back from the hub
            #expect(homes.isOK, "\(homes.serialized)")
            guard case .array(let listed) = homes["data"] else { throw TimedOut("no homes in \(homes.serialized)") }
            #expect(Set(listed.compactMap { $0["name"]?.stringValue }) == ["Main House", "Lake Cabin"])
            try await central.receive("42", on: "\(Self.lamp)/Brightness")

            // When a command fails, its answer comes on owner's own response topic: MQTT 5's
            // response topic and correlation data do not cross a 3.1.1 bridge
            let tooBright = "\(Self.lamp)/Brightness/set/owner"
            try await central.client.publish(
                tooBright, "500", qos: .atLeastOnce,
                properties: MQTTProperties(
                    responseTopic: "homegate/$response/owner/mine", correlationData: Array("c-1".utf8)))
            let refusal = try await central.answer(about: tooBright)
            #expect(try JSON.parse(refusal.payload).code == "valueHigherThanMaximum")
            #expect(refusal.properties.correlationData == nil)

            // When guest sends a command in owner's name, or into Lake Cabin, on the central broker
            let hubInspector = try await BridgedAccount.connect("homegate", port: bridged.hub.port)
            let commands = ["homegate/+/+/+/+/+/set/+", "homegate/+/+/+/$set/+"]
            try await hubInspector.client.subscribe(to: commands, qos: .atLeastOnce)
            let forged = [
                "\(Self.lamp)/On/set/owner", "homegate/Lake Cabin/Cabin Living Room/Cabin Heater/Switch/On/set/guest",
                "homegate/Lake Cabin/Cabin Living Room/Cabin Heater/$set/guest",
            ]
            for topic in forged {
                // Then the central broker refuses it (PUBACK 0x87)
                let refused = await #expect(throws: MQTTError.self) {
                    try await guest.client.publish(topic, "true", qos: .atLeastOnce)
                }
                #expect(refused?.code == .publishRefused, "\(topic) was taken")
            }
            // And it never reaches the hub: guest's own command, sent after them, arrives there first
            let own = "\(Self.lamp)/On/set/guest"
            try await guest.client.publish(own, "true", qos: .atLeastOnce)
            let arrived = try await hubInspector.inbox.next(within: .seconds(60), "guest's own command") {
                $0.topic == own
            }
            #expect(arrived.payloadString == "true")
            let others = await hubInspector.inbox.all.map(\.topic)
            #expect(!others.contains { forged.contains($0) }, "\(others)")
            try await central.client.subscribe(to: ["\(Self.lamp)/On"], qos: .atLeastOnce)
            try await central.receive("true", on: "\(Self.lamp)/On")

            // When guest sends a command at home, on the hub
            let atHome = try await BridgedAccount.connect("guest", port: bridged.hub.port)
            let local = "\(Self.lamp)/Brightness/set/guest"
            try await central.client.subscribe(to: [local], qos: .atLeastOnce)
            try await atHome.client.publish(local, "55", qos: .atLeastOnce)
            // Then it goes out to the central broker (members there read their home's topics) but does
            // not come back in: the hub has it once when a command guest sends at the central broker
            // after it was there arrives (which would come after such an echo)
            _ = try await central.inbox.next(within: .seconds(60), "the home's command on the central broker") {
                $0.topic == local
            }
            try await guest.client.publish(own, "false", qos: .atLeastOnce)
            _ = try await hubInspector.inbox.next(within: .seconds(60), "guest's second command") {
                $0.topic == own && $0.payloadString == "false"
            }
            #expect(await hubInspector.inbox.all.filter { $0.topic == local }.count == 1)
            await atHome.disconnect()

            for client in [central, guest, stranger, hubInspector] { await client.disconnect() }
        }
    }

    @Test(
        "what changes at the hub while the central broker is down, and the commands the central broker acknowledged while the hub was down, all cross once the bridge is back"
    )
    func outageLosesNothing() async throws {
        try await Self.withBridge(persistentCentral: true) { bridged in
            let state = bridged.bridge.stateTopic
            let hubInspector = try await BridgedAccount.connect("homegate", port: bridged.hub.port)
            try await hubInspector.client.subscribe(to: [state], qos: .atLeastOnce)
            try await hubInspector.receive("1", on: state)
            let before = try await Self.waitUntilMirrored("owner", bridged)
            let counterBefore = try #require(before[Self.counter])
            let counterAfter = counterBefore == "true" ? "false" : "true"
            #expect(before[Self.stairs] != "33" && before["\(Self.lamp)/Brightness"] != "77")
            #expect(before.keys.contains { $0.hasPrefix("\(Self.main)/Bedroom/Ceiling Fan/") })

            // When the central broker is down (stopped, with persistence), and at home a value changes
            // and an accessory is renamed: its old topics are cleared on the hub, and only the hub's
            // queue for the bridge can tell the central broker, whose copies survive its restart
            await bridged.central.stop()
            try await hubInspector.receive("0", on: state)
            let atHome = try await Account.connect("owner", to: bridged.hub)
            #expect(try await atHome.command("\(Self.stairs)/set/owner", "33").isOK)
            let rename = try await atHome.request(
                "renameAccessory", #"{"home":"Main House","accessory":"Ceiling Fan","name":"Bedroom Fan"}"#)
            #expect(rename.isOK, "\(rename.serialized)")
            await atHome.disconnect()
            await hubInspector.disconnect()

            // Then once it is back the bridge brings it all, the clearing included
            try await bridged.central.start()
            let mirrored = try await Self.waitUntilMirrored("owner", bridged)
            #expect(mirrored[Self.stairs] == "33")
            #expect(mirrored.keys.contains { $0.hasPrefix("\(Self.main)/Bedroom/Bedroom Fan/") })
            #expect(!mirrored.keys.contains { $0.hasPrefix("\(Self.main)/Bedroom/Ceiling Fan/") })

            // When the hub's broker is down (stopped, with persistence), and owner sends commands to
            // the central broker, each acknowledged there, which then restarts (with persistence)
            await bridged.hub.stop()
            let owner = try await BridgedAccount.connect("owner", port: bridged.central.port)
            let ids = (1...20).map { "queued-\($0)" }
            for id in ids {
                try await owner.client.publish("homegate/$request/owner/homes", #"{"id":"\#(id)"}"#, qos: .atLeastOnce)
            }
            try await owner.client.publish("\(Self.lamp)/Brightness/set/owner", "77", qos: .atLeastOnce)
            try await owner.client.publish("\(Self.counter)/set/owner", counterAfter, qos: .atLeastOnce)
            await owner.disconnect()
            await bridged.central.stop()
            try await bridged.central.start()
            let back = try await BridgedAccount.connect("owner", port: bridged.central.port)
            try await back.client.subscribe(to: ["\(Self.lamp)/Brightness", Self.counter], qos: .atLeastOnce)

            // Then once the hub is back, every one of them is run and answered on the central broker
            try await bridged.hub.start()
            for id in ids {
                let answer = try await back.answer(id: id)
                #expect(answer.isOK, "\(answer.serialized)")
            }
            try await back.receive("77", on: "\(Self.lamp)/Brightness")
            try await back.receive(counterAfter, on: Self.counter)
            try await bridged.gateway.waitUntilPublished()
            let after = try await Self.waitUntilMirrored("owner", bridged)
            #expect(after["\(Self.lamp)/Brightness"] == "77")
            #expect(after[Self.counter] == counterAfter)
            await back.disconnect()
        }
    }

    @Test(
        "a central broker restarted without persistence is refilled by the bridge from the hub's retained messages, without the gateway reconnecting"
    )
    func centralRestartRefilled() async throws {
        try await Self.withBridge(persistentCentral: false) { bridged in
            let expected = await bridged.gateway.expectedRetainedTopics()
            let hubInspector = try await BridgedAccount.connect("homegate", port: bridged.hub.port)
            try await hubInspector.client.subscribe(
                to: [bridged.bridge.stateTopic, "homegate/$status"], qos: .atLeastOnce)
            try await hubInspector.receive("1", on: bridged.bridge.stateTopic)

            // When the central broker restarts with nothing (no persistence)
            await bridged.central.stop()
            try await bridged.central.start()

            // Then the bridge, reconnecting, sends it every retained message of the hub again
            try await hubInspector.receive("0", on: bridged.bridge.stateTopic)
            try await hubInspector.receive("1", on: bridged.bridge.stateTopic)
            try await waitForRetainedTopics(
                port: bridged.central.port, account: bridged.bridge.account, topics: bridged.gateway.topics,
                within: .seconds(60)
            ) { expected }
            _ = try await Self.waitUntilMirrored("owner", bridged)
            // The gateway's own connection to the hub never dropped: it did not publish `$status` again
            let republished = await hubInspector.inbox.all.filter { $0.topic == "homegate/$status" && !$0.retain }
            #expect(republished.isEmpty, "\(republished)")
            await hubInspector.disconnect()
        }
    }

    @Test(
        "a hub that crashes leaves $status online on the central broker, where only the bridge's state says 0; a hub's broker that stops sends the gateway's offline first"
    )
    func hubGone() async throws {
        try await Self.withBridge(persistentCentral: false) { bridged in
            let state = bridged.bridge.stateTopic
            let owner = try await BridgedAccount.connect("owner", port: bridged.central.port)
            try await owner.client.subscribe(to: [state, "homegate/$status"], qos: .atLeastOnce)
            try await owner.receive("1", on: state)
            try await owner.receive("online", on: "homegate/$status")

            // When the hub's broker is killed (a crash, a power cut)
            await bridged.hub.kill()

            // Then the central broker says so on the bridge's state topic (the bridge's will), while
            // the gateway's status, which only the hub could have changed, still says online there
            try await owner.receive("0", on: state)
            try await owner.client.unsubscribe(from: ["homegate/$status"])
            try await owner.client.subscribe(to: ["homegate/$status"], qos: .atLeastOnce)
            try await owner.receive("online", on: "homegate/$status")
            #expect(await !owner.inbox.all.contains { $0.topic == "homegate/$status" && $0.payloadString != "online" })

            // When the hub is back, and then its broker is stopped (SIGTERM)
            try await bridged.hub.start()
            try await owner.receive("1", on: state)
            try await bridged.gateway.waitUntilPublished()
            #expect(try await Self.waitUntilMirrored("owner", bridged)["homegate/$status"] == "online")
            await owner.forget([state, "homegate/$status"])
            await bridged.hub.stop()

            // Then the stopping broker publishes the will of the gateway's connection, and the bridge
            // carries it out before it goes
            try await owner.receive("offline", on: "homegate/$status")
            try await owner.receive("0", on: state)

            try await bridged.hub.start()
            try await bridged.gateway.waitUntilPublished()
            await owner.disconnect()
        }
    }
}
