import Broker
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import TestSupport
import Testing
import VirtualDevices

#if canImport(Glibc)
    import Glibc
#endif

/// Every account kind against every topic kind, on a real mosquitto with the generated acl_file
/// (docs/access-rules.md is the expectation; docs/reliability.md, scenario 6).
@Suite("Security matrix: who may read and write what", .serialized, .timeLimit(.minutes(3)))
struct SecurityMatrixTests {
    static let topics = Topics(base: "homegate")
    static let passwords = [
        "homegate": "gw-secret-1", "owner": "owner-secret-2", "guest": "guest-secret-3",
        "homeassistant": "ha-secret-4", "stranger": "stranger-secret-5",
    ]
    /// The account kinds; nil is anonymous.
    static let accounts: [String?] = ["owner", "guest", "homeassistant", "stranger", nil]

    static let rules = AccessRules(
        topics: topics, gatewayAccount: "homegate",
        homeAssistant: .init(account: "homeassistant", discoveryPrefix: "homeassistant"),
        members: [
            .init(home: "Main House", account: "owner", role: .administrator),
            .init(home: "Lake Cabin", account: "owner", role: .administrator),
            .init(home: "Main House", account: "guest", role: .guest),
            .init(home: "Main House", account: "homeassistant", role: .guest),
        ])

    static var brokerConfiguration: MosquittoBroker.Configuration {
        MosquittoBroker.Configuration(allowAnonymous: true, passwords: passwords, accessRules: rules.aclFile())
    }

    /// Runs `body` with a broker that enforces the rules: the generated acl_file, or the
    /// dynamic-security plugin brought in step by the gateway's sync (each account's client made by
    /// the broker's administrator, with its password; receiving denied unless a role grants it;
    /// no anonymous clients).
    static func withProtectedBroker(
        _ protection: ConfinementTests.Protection, _ body: (MosquittoBroker) async throws -> Void
    ) async throws {
        guard protection == .dynamicSecurity else {
            try await withBroker(brokerConfiguration, body)
            return
        }
        let configuration = MosquittoBroker.Configuration(
            allowAnonymous: false, dynamicSecurity: .init(adminPassword: "admin-secret"))
        try await withBroker(configuration) { broker in
            for (account, password) in passwords {
                try broker.dynamicSecurity(["createClient", account, "-p", password])
            }
            let admin = try makeClient(broker, name: "admin") {
                $0.username = "admin"
                $0.password = "admin-secret"
            }
            let sync = DynamicSecuritySync(client: admin)
            let forwarding = Task { await sync.forward(admin.messages) }
            _ = try await admin.connect()
            try await sync.apply([.setDefaultACLAccess("publishClientReceive", allow: false)])
            let plan = try await sync.sync(rules)
            #expect(plan.missingAccounts.isEmpty)
            await admin.disconnect()
            forwarding.cancel()
            try await body(broker)
        }
    }

    static let mainValue = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On"
    static let cabinValue = "homegate/Lake Cabin/Cabin Living Room/Cabin Heater/Switch/On"

    /// Topic kinds the gateway publishes, each with the accounts that may read it.
    static let readable: [(topic: String, readers: Set<String>)] = [
        (mainValue, ["owner", "guest", "homeassistant"]),
        ("homegate/Main House/Living Room/Floor Lamp/$reachable", ["owner", "guest", "homeassistant"]),
        ("homegate/Main House/Living Room/Floor Lamp/$state", ["owner", "guest", "homeassistant"]),
        ("homegate/Main House/$layout", ["owner", "guest", "homeassistant"]),
        ("homegate/Main House/$events", ["owner", "guest", "homeassistant"]),
        (cabinValue, ["owner"]),
        ("homegate/Lake Cabin/$layout", ["owner"]),
        ("homegate/$homes", ["owner"]),
        ("homegate/$discovered", ["owner"]),
        ("homegate/$events", []),
        ("homegate/$health", []),
        ("homegate/$response/owner", ["owner"]),
        ("homegate/$response/guest", ["guest"]),
        ("homegate/$response/guest/v5-answers", ["guest"]),
        ("homegate/$response/homeassistant", ["homeassistant"]),
        ("homegate/$response/stranger", ["stranger"]),
        ("homegate/$request/owner/addUser", []),
        ("homegate/Main House/Living Room/Floor Lamp/Lightbulb/On/set/owner", ["owner", "guest", "homeassistant"]),
        ("homeassistant/light/homegate/floor_lamp/config", ["homeassistant"]),
        ("homeassistant/status", ["homeassistant"]),
        // Members only: a pattern without %u, which every account and anonymous would read, makes
        // mosquitto warn at every start (issue 52)
        ("homegate/$status", ["owner", "guest", "homeassistant"]),
    ]

    /// Connects `account` (nil: anonymous) with MQTT 5, so refused publications are reported.
    static func connect(_ account: String?, port: Int) async throws -> (MQTTClient, Inbox<MQTTMessage>) {
        var configuration = MQTTConfiguration(
            port: port, clientID: "\(account ?? "anonymous")-\(UUID().uuidString.prefix(6))")
        configuration.username = account
        configuration.password = account.flatMap { passwords[$0] }
        var logger = Logger(label: "test.matrix")
        logger.logLevel = .critical
        let client = try MQTTClient(configuration, logger: logger)
        let inbox = await Inbox.draining(client.messages)
        try await client.connect()
        return (client, inbox)
    }

    @Test(
        "reading: each account kind gets exactly the topic kinds its rules allow",
        arguments: ConfinementTests.Protection.allCases)
    func reading(protection: ConfinementTests.Protection) async throws {
        try await Self.withProtectedBroker(protection) { broker in
            let (gateway, _) = try await Self.connect("homegate", port: broker.port)
            var readers: [(String, MQTTClient, Inbox<MQTTMessage>)] = []
            for account in Self.accounts where account != nil || protection == .aclFile {
                let (client, inbox) = try await Self.connect(account, port: broker.port)
                // A refused subscription is fine: what matters is what arrives. The plugin refuses a
                // subscription wider than a role allows, so there each topic is asked for alone.
                let filters =
                    protection == .aclFile ? ["homegate/#", "homeassistant/#"] : Self.readable.map(\.topic)
                for filter in filters { _ = try? await client.subscribe(to: [filter], qos: .atLeastOnce) }
                readers.append((account ?? "anonymous", client, inbox))
            }
            for (topic, _) in Self.readable {
                try await gateway.publish(topic, "payload", qos: .atLeastOnce)
            }
            // A marker each account with any rights may read, the members' on the status and the
            // stranger's on its answers: once it arrived, everything published before it has (mosquitto
            // keeps each subscriber's order). Anonymous reads nothing at all.
            try await gateway.publish("homegate/$status", "marker", qos: .atLeastOnce)
            try await gateway.publish("homegate/$response/stranger", "marker", qos: .atLeastOnce)
            // (under dynamic security a stranger has no role at all, not even for its answers)
            let strangerHasNoRole = protection == .dynamicSecurity
            for (account, _, inbox) in readers {
                guard account != "anonymous", !(strangerHasNoRole && account == "stranger") else { continue }
                _ = try await inbox.next("\(account)'s marker") { $0.payloadString == "marker" }
            }
            for (account, client, inbox) in readers {
                let received = Set(await inbox.all.map(\.topic))
                let expected =
                    strangerHasNoRole && account == "stranger"
                    ? [] : Set(Self.readable.filter { $0.readers.contains(account) }.map(\.topic))
                #expect(
                    received == expected,
                    "\(account): unexpected \(received.subtracting(expected).sorted()), missing \(expected.subtracting(received).sorted())"
                )
                await client.disconnect()
            }
            await gateway.disconnect()
        }
    }

    /// The homes each account is a member of.
    static let homes: [String: Set<String>] = [
        "owner": ["Main House", "Lake Cabin"], "guest": ["Main House"], "homeassistant": ["Main House"],
    ]

    /// The topic kinds a client may try to write, for `account` and `other` (another account):
    /// commands in its own name into its own homes only, requests in its own name (under dynamic
    /// security only members have a role that allows them).
    static func writable(_ account: String, other: String, protection: ConfinementTests.Protection)
        -> [(topic: String, allowed: Bool)]
    {
        let lamp = "homegate/Main House/Living Room/Floor Lamp"
        let requests = protection == .aclFile || homes[account] != nil
        let main = homes[account, default: []].contains("Main House")
        let cabin = homes[account, default: []].contains("Lake Cabin")
        return [
            ("\(lamp)/Lightbulb/On/set/\(account)", main),
            ("\(lamp)/Lightbulb/$ha/set/\(account)", main),
            ("\(lamp)/$set/\(account)", main),
            ("\(lamp)/$identify/\(account)", main),
            ("homegate/Main House/$actionsets/Good Night/$run/\(account)", main),
            ("homegate/$request/\(account)/homes", requests),
            ("homegate/Lake Cabin/Cabin Living Room/Cabin Heater/Switch/On/set/\(account)", cabin),
            ("homegate/Lake Cabin/Cabin Living Room/Cabin Heater/$set/\(account)", cabin),
            ("homegate/Lake Cabin/$actionsets/Away/$run/\(account)", cabin),
            ("\(lamp)/Lightbulb/On/set/\(other)", false),
            ("\(lamp)/$set/\(other)", false),
            ("\(lamp)/$identify/\(other)", false),
            ("homegate/Main House/$actionsets/Good Night/$run/\(other)", false),
            ("homegate/$request/\(other)/addUser", false),
            ("\(lamp)/Lightbulb/On/set", false),
            ("\(lamp)/Lightbulb/On", false),
            ("\(lamp)/$reachable", false),
            ("homegate/Main House/$layout", false),
            ("homegate/Main House/$events", false),
            ("homegate/$status", false),
            ("homegate/$response/\(account)", false),
            ("homegate/$response/\(other)", false),
            ("homeassistant/light/homegate/floor_lamp/config", false),
            ("homeassistant/status", account == "homeassistant"),
        ]
    }

    @Test(
        "writing: commands only in one's own name into one's own homes, retained or not; no state, answers or discovery",
        arguments: accounts, ConfinementTests.Protection.allCases)
    func writing(account: String?, protection: ConfinementTests.Protection) async throws {
        try await Self.withProtectedBroker(protection) { broker in
            let (gateway, gatewayInbox) = try await Self.connect("homegate", port: broker.port)
            try await gateway.subscribe(to: ["homegate/#", "homeassistant/#"], qos: .atLeastOnce)
            let name = account ?? "anonymous"
            let other = account == "owner" ? "guest" : "owner"
            guard account != nil || protection == .aclFile else {
                // Dynamic security lets no anonymous client in at all
                await #expect(throws: MQTTError.self) { try await Self.connect(nil, port: broker.port) }
                await gateway.disconnect()
                return
            }
            let (client, _) = try await Self.connect(account, port: broker.port)
            var allowed: Set<String> = []
            for (topic, mayWrite) in Self.writable(name, other: other, protection: protection) {
                for retain in [false, true] {
                    let expected = account == nil ? false : mayWrite
                    do {
                        try await client.publish(topic, "written by \(name)", qos: .atLeastOnce, retain: retain)
                        #expect(expected, "\(name) may not write \(topic) (retain \(retain)), but the broker took it")
                        allowed.insert(topic)
                    } catch let error as MQTTError {
                        #expect(!expected, "\(name) may write \(topic) (retain \(retain)): \(error)")
                        #expect(error.code == .publishRefused, "\(error)")
                    }
                }
            }
            // What reached the gateway is exactly what the broker took: each publish above was
            // acknowledged (or refused) before this marker was sent, and mosquitto hands a message to
            // its subscribers before it acknowledges it
            try await gateway.publish("homegate/$status", "marker", qos: .atLeastOnce)
            _ = try await gatewayInbox.next("the marker") { $0.payloadString == "marker" }
            let reached = Set(await gatewayInbox.all.filter { $0.payloadString == "written by \(name)" }.map(\.topic))
            #expect(reached == allowed, "\(name): reached \(reached.sorted()), taken \(allowed.sorted())")
            await client.disconnect()
            await gateway.disconnect()
        }
    }

    @Test("no password and no account in the gateway's log (trace level), its retained topics or its events")
    func noSecrets() async throws {
        let passwords = ["homegate": "gw-Pa55-word", "owner": "owner-Pa55", "guest": "guest-Pa55"]
        try await withBroker(.init(allowAnonymous: false, passwords: passwords)) { broker in
            try await withTemporaryDirectory { directory in
                try "gw-Pa55-word\n".write(toFile: "\(directory)/password", atomically: true, encoding: .utf8)
                let config = "\(directory)/homegate.yml"
                try """
                mqtt:
                  broker: mqtt://127.0.0.1:\(broker.port)
                  username: homegate
                  passwordFile: \(directory)/password
                data:
                  directory: \(directory)/data
                accessories:
                  virtual: \(demoHomeFile.path)
                commands:
                  defaultAccount: owner
                logging:
                  level: trace

                """.write(toFile: config, atomically: true, encoding: .utf8)
                let log = "\(directory)/homegate.log"
                let gateway = try ChildProcess(try homegateExecutable(), ["run", "--config", config], outputFile: log)
                defer { gateway.send(SIGKILL) }

                // Everything retained, every event and answer while owner adds a user and guest writes
                var configuration = MQTTConfiguration(port: broker.port, clientID: "watcher")
                configuration.username = "homegate"
                configuration.password = "gw-Pa55-word"
                var logger = Logger(label: "test.watcher")
                logger.logLevel = .critical
                let watcher = try MQTTClient(configuration, logger: logger)
                try await withConnected(watcher) { inbox in
                    try await watcher.subscribe(to: ["homegate/#"], qos: .atLeastOnce)
                    _ = try await inbox.next("online") {
                        $0.topic == "homegate/$status" && $0.payloadString == "online"
                    }
                    for layout in [
                        "homegate/Main House/$layout", "homegate/Lake Cabin/$layout", "homegate/$discovered",
                    ] {
                        _ = try await inbox.next(layout) { $0.topic == layout }
                    }
                    try await watcher.publish(
                        "homegate/$request/owner/addUser", #"{"home":"Main House","account":"visitor","name":"Vera"}"#,
                        qos: .atLeastOnce)
                    _ = try await inbox.next("didAddUser") { $0.payloadString?.contains("didAddUser") == true }
                    _ = try await inbox.next("the layout with Vera") {
                        $0.topic == "homegate/Main House/$layout" && $0.payloadString?.contains("Vera") == true
                    }
                    let published = await inbox.all.filter {
                        !$0.topic.contains("/$request/") && !$0.topic.contains("/$response/")
                    }
                    #expect(published.count > 50)
                    for message in published {
                        let text = message.payloadString ?? ""
                        for secret in passwords.values { #expect(!text.contains(secret), "\(message.topic)") }
                        #expect(!text.contains("\"account\""), "\(message.topic)")
                        for account in ["owner", "visitor", "homeassistant"] {
                            #expect(
                                !text.contains(account),
                                "\(message.topic) names the account \(account): \(text.prefix(200))")
                        }
                    }
                }
                gateway.send(SIGTERM)
                await gateway.waitForExit()
                let output = try String(contentsOfFile: log, encoding: .utf8)
                #expect(output.contains("published the home"), "the log is the gateway's: \(output.prefix(500))")
                for secret in passwords.values { #expect(!output.contains(secret), "the log holds a password") }
                for account in ["owner", "visitor"] { #expect(!output.contains(account), "the log names \(account)") }
            }
        }
    }
}
