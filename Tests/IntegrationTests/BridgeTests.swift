import Broker
import Foundation
import Gateway
import HomeModel
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
            var bridge = MosquittoBridge(centralPort: 0, caFile: certificates.caFile)
            // The rules as `homegate acl` and `homegate acl --central` print them (docs/scaling.md)
            let rules = try await ConfinementTests.demoRules(bridgeClientID: bridge.name)
            let passwords = Dictionary(uniqueKeysWithValues: accounts.map { ($0, $0) })
            let central = try await MosquittoBroker.start(
                .init(
                    allowAnonymous: false, passwords: passwords, accessRules: rules.aclFile(for: .central),
                    tls: .init(
                        certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile),
                    persistence: persistentCentral))
            do {
                bridge.centralPort = try #require(central.tlsPort)
                let hub = MosquittoBroker.Configuration(
                    allowAnonymous: false, passwords: passwords, accessRules: rules.aclFile(),
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
            // only, a member of no home nothing at all, and the bridge's state is readable
            let guest = try await BridgedAccount.connect("guest", port: bridged.central.port)
            let stranger = try await BridgedAccount.connect("stranger", port: bridged.central.port, subscribing: false)
            try await stranger.client.subscribe(to: ["homegate/#", "$SYS/#"], qos: .atLeastOnce)
            #expect(
                Set(try await guest.retained(under: "homegate/#").keys)
                    == expected.filter { $0.hasPrefix("\(Self.main)/") || $0 == "homegate/$status" })
            #expect(try await guest.retained(under: bridged.bridge.stateTopic) == [bridged.bridge.stateTopic: "1"])
            // (the retained copies come right after a SUBACK: by the end of guest's round trips
            // across the bridge, any for stranger would long have arrived)
            let strangerRead = await stranger.inbox.all.map(\.topic)
            #expect(strangerRead.isEmpty, "\(strangerRead)")

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
            await bridged.hub.stop(with: SIGKILL)

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

    /// A client whose QoS 1 request was not acknowledged sends it again after the central broker
    /// restarts, and the copy is a new message to the hub (issue 52: 3 runs in 5 executed twice). The
    /// gateway runs a request with an `id` once and answers each copy with the first answer.
    @Test("a request sent again after the central broker restarted runs once, and both copies get the same answer")
    func requestRunsOnce() async throws {
        try await Self.withBridge(persistentCentral: true) { bridged in
            let request = "homegate/$request/owner/addRoom"
            let body = #"{"id":"attic-1","home":"Main House","name":"Attic"}"#
            let hubInspector = try await BridgedAccount.connect("homegate", port: bridged.hub.port)
            try await hubInspector.client.subscribe(to: [request, bridged.bridge.stateTopic], qos: .atLeastOnce)
            try await withBridgedAccount("owner", port: bridged.central.port) { owner in
                try await owner.client.publish(request, body, qos: .atLeastOnce)
                let first = try await owner.answer(id: "attic-1")
                #expect(first.isOK, "\(first.serialized)")

                // The central broker restarts; the client sends the request again, as its resend would
                try await hubInspector.receive("1", on: bridged.bridge.stateTopic)
                await bridged.central.stop()
                try await hubInspector.receive("0", on: bridged.bridge.stateTopic)
                try await bridged.central.start()
                try await hubInspector.receive("1", on: bridged.bridge.stateTopic)
                try await eventually("owner connected to the central broker again") { owner.client.isConnected }
                try await owner.client.publish(request, body, qos: .atLeastOnce)

                // Then the hub had it twice, ran it once, and answered the copy as the first
                let second = try await owner.answer(id: "attic-1")
                #expect(second == first, "\(second.serialized) after \(first.serialized)")
                try await eventually("the hub had the request twice") {
                    await hubInspector.inbox.all.filter { $0.topic == request }.count == 2
                }
                let home = try await bridged.gateway.manager.home("Main House", account: "owner")
                #expect(home.rooms.filter { $0.name == "Attic" }.count == 1)
            }
            await hubInspector.disconnect()
        }
    }

    /// Two hubs on one central broker (issue 52), each a gateway with the demo home on a broker of its
    /// own, bridged with docs/scaling.md's block; the central broker's rules are the hubs' parts as
    /// `homegate acl --central` prints them. carol is a member of hub2's home only.
    @Test("two hubs on one central broker: each hub's topics are reachable only by its bridge and its members")
    func tenantsKeptApart() async throws {
        try await withTemporaryDirectory { folder in
            let certificates = try TestCertificates.make(in: "\(folder)/tls")
            let hub1 = try await ConfinementTests.demoRules(
                baseTopic: "site/hub1", gatewayAccount: "hub1", bridgeClientID: "hub1")
            let demo2 = try await ConfinementTests.demoRules(
                baseTopic: "site/hub2", gatewayAccount: "hub2", bridgeClientID: "hub2")
            let hub2 = AccessRules(
                topics: demo2.topics, gatewayAccount: "hub2", homeAssistant: demo2.homeAssistant,
                bridgeClientID: "hub2",
                members: demo2.members + [.init(home: "Main House", account: "carol", role: .guest)])
            let passwords = Dictionary(
                uniqueKeysWithValues: (Self.accounts + ["hub1", "hub2", "carol"]).map { ($0, $0) })
            let central = try await MosquittoBroker.start(
                .init(
                    allowAnonymous: false, passwords: passwords,
                    accessRules: hub1.aclFile(for: .central) + hub2.aclFile(for: .central),
                    tls: .init(
                        certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile),
                    persistence: true))
            try await withCleanup {
                let port = try #require(central.tlsPort)
                func hub(_ name: String, _ rules: AccessRules) -> MosquittoBroker.Configuration {
                    let bridge = MosquittoBridge(
                        name: name, centralPort: port, caFile: certificates.caFile, account: name, base: "site/\(name)")
                    return .init(
                        allowAnonymous: false, passwords: passwords, accessRules: rules.aclFile(), persistence: true,
                        extraLines: bridge.configuration)
                }
                try await withGateway(hub("hub1", hub1), baseTopic: "site/hub1", gatewayAccount: "hub1") { one in
                    try await withGateway(hub("hub2", hub2), baseTopic: "site/hub2", gatewayAccount: "hub2") { two in
                        // The document's broker settings are those the tests' brokers run with
                        let written = try String(contentsOfFile: one.broker.configFile, encoding: .utf8)
                        for line in MosquittoBridge.documentedBrokerSettings
                        where !line.hasPrefix("persistence_location") {
                            #expect(written.contains("\n\(line)\n"), "docs/scaling.md's \(line)")
                        }
                        let centralConfig = try String(contentsOfFile: central.configFile, encoding: .utf8)
                        #expect(MosquittoBridge.documentedCentralSettings.count >= 5)
                        for line in MosquittoBridge.documentedCentralSettings {
                            #expect(centralConfig.contains("\n\(line)\n"), "docs/scaling.md's central \(line)")
                        }
                        for (gateway, account) in [(one, "hub1"), (two, "hub2")] {
                            try await waitForRetainedTopics(
                                port: central.port, account: account, topics: gateway.topics, within: .seconds(60)
                            ) { await gateway.expectedRetainedTopics() }
                        }
                        try await Self.checkTenants(central: central.port, hub1: one.broker.port, hub2: two.broker.port)
                    }
                }
            } cleanup: {
                await central.stop(removingFiles: true)
            }
        }
    }

    /// What `tenantsKeptApart` checks once both hubs are mirrored on the central broker.
    static func checkTenants(central: Int, hub1: Int, hub2: Int) async throws {
        // carol joins hub2's Main House, asked at hub2 itself
        try await withBridgedAccount("owner", port: hub2, base: "site/hub2") { owner in
            try await owner.client.publish(
                "site/hub2/$request/owner/addUser",
                #"{"id":"carol","home":"Main House","account":"carol","name":"Carol"}"#, qos: .atLeastOnce)
            #expect(try await owner.answer(id: "carol").isOK)
        }
        // What reaches hub1's gateway from outside: the requests its broker hands it
        try await withBridgedAccount("hub1", port: hub1, base: "site/hub1", subscribing: false) { inspector in
            try await inspector.client.subscribe(
                to: ["site/hub1/$request/#", "site/hub1/+/+/+/+/+/set/+"], qos: .atLeastOnce)
            try await withBridgedAccount("carol", port: central, base: "site/hub2") { carol in
                try await withBridgedAccount("hub2", port: central, base: "site/hub2", subscribing: false) { bridge2 in
                    // carol and hub2's bridge account ask for everything of hub1 on the central broker
                    for outsider in [carol, bridge2] {
                        try await outsider.client.subscribe(
                            to: ["site/hub1/#", "$SYS/broker/connection/hub1/state"], qos: .atLeastOnce)
                    }
                    // and try to reach hub1's gateway: in their own names, and hub2's bridge in hub1's
                    let attempts: [(BridgedAccount, String)] = [
                        (carol, "site/hub1/$request/carol/homes"),
                        (carol, "site/hub1/Main House/Living Room/Floor Lamp/Lightbulb/On/set/carol"),
                        (bridge2, "site/hub1/$request/hub2/homes"),
                        (bridge2, "site/hub1/$request/hub1/homes"),
                    ]
                    for (outsider, topic) in attempts {
                        let refused = await #expect(throws: MQTTError.self, "\(outsider.name) on \(topic)") {
                            try await outsider.client.publish(topic, #"{"id":"outside"}"#, qos: .atLeastOnce)
                        }
                        #expect(refused?.code == .publishRefused, "\(outsider.name) was let through on \(topic)")
                    }

                    // hub1's own member reads and asks hub1 as at home; carol reads and asks hub2
                    try await withBridgedAccount("guest", port: central, base: "site/hub1") { guest in
                        let status = try await guest.retained(under: "site/hub1/$status")
                        #expect(status == ["site/hub1/$status": "online"])
                        let asked = try await guest.request("homes", id: "guest-homes")
                        #expect(asked.isOK, "\(asked.serialized)")
                    }
                    let homes = try await carol.request("homes", id: "carol-homes")
                    #expect(homes["data"]?.serialized.contains("Main House") == true, "\(homes.serialized)")
                    #expect(try await carol.retained(under: "site/hub2/$status") == ["site/hub2/$status": "online"])

                    // guest's request reached hub1; nothing of the outsiders did, though it came first
                    _ = try await inspector.inbox.next("guest's request at hub1") {
                        $0.topic == "site/hub1/$request/guest/homes"
                    }
                    let reached = await inspector.inbox.all.map(\.topic)
                    #expect(reached.allSatisfy { !$0.hasSuffix("/carol") && !$0.contains("/hub2/") }, "\(reached)")
                    // and nothing of hub1 reached carol or hub2's bridge: every retained copy would have
                    // come right after their SUBACKs, long before these round trips ended
                    for outsider in [carol, bridge2] {
                        let seen = await outsider.inbox.all.map(\.topic).filter {
                            $0.hasPrefix("site/hub1/") || $0.contains("connection/hub1")
                        }
                        #expect(seen.isEmpty, "\(outsider.name) read \(seen)")
                    }
                }
            }
        }
    }
}
