import Broker
import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing
import VirtualDevices

/// A hostile user against the gateway behind each kind of broker protection (issue: hardening):
/// nothing an account publishes stays visible outside what its role allows, answers go nowhere but
/// `B/$response/<account>`, refusals can be matched to what was sent, and creating a home is a
/// privilege. Each test runs once with the generated acl_file and once with dynamic security.
@Suite("Confinement: every account kept to its role, at the broker and in the gateway", .timeLimit(.minutes(3)))
struct ConfinementTests {
    /// How the broker learns who may do what.
    enum Protection: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case aclFile
        case dynamicSecurity

        var testDescription: String { rawValue }
    }

    static let accounts = ["owner", "guest", "stranger", "homeassistant"]
    static let lamp = "homegate/Main House/Living Room/Floor Lamp"
    static let heater = "homegate/Lake Cabin/Cabin Living Room/Cabin Heater"

    /// The demo home's users as broker rules (owner administers both homes, guest is a guest of Main
    /// House, homeassistant a guest of both; stranger is in none).
    static func demoRules(
        baseTopic: String = "homegate", gatewayAccount: String = "homegate", bridgeClientID: String? = nil
    )
        async throws -> AccessRules
    {
        let demo = try DemoHome.load(contentsOf: demoHomeFile)
        let manager = try HomeManager(database: .inMemory())
        try await manager.attach(VirtualDriver(devices: demo.devices))
        _ = try await demo.seed(manager)
        let memberships = await manager.memberships()
        await manager.shutdown()
        return AccessRules(
            topics: Topics(base: baseTopic), gatewayAccount: gatewayAccount,
            homeAssistant: .init(account: "homeassistant", discoveryPrefix: "homeassistant"),
            bridgeClientID: bridgeClientID, members: memberships.map(AccessRules.Member.init))
    }

    /// Runs `body` with the demo gateway behind `protection`; every account's password is its name.
    static func withProtectedGateway(
        _ protection: Protection, homeAssistant: Bool = false, rateLimit: RateLimit? = .standard,
        _ body: (RunningGateway) async throws -> Void
    ) async throws {
        switch protection {
        case .aclFile:
            let passwords = Dictionary(uniqueKeysWithValues: (accounts + ["homegate"]).map { ($0, $0) })
            let broker = MosquittoBroker.Configuration(
                allowAnonymous: false, passwords: passwords, accessRules: try await demoRules().aclFile())
            try await withGateway(
                broker, gatewayAccount: "homegate", homeAssistant: homeAssistant, rateLimit: rateLimit, body)
        case .dynamicSecurity:
            let broker = MosquittoBroker.Configuration(
                allowAnonymous: false, dynamicSecurity: .init(adminPassword: "admin"))
            try await withGateway(
                broker, gatewayAccount: "admin", dynamicSecurity: true, homeAssistant: homeAssistant,
                rateLimit: rateLimit
            ) { broker in
                for account in accounts { try broker.dynamicSecurity(["createClient", account, "-p", account]) }
            } _: { gateway in
                try await body(gateway)
            }
        }
    }

    /// Connects a member once the broker lets it read what its role allows (with dynamic security
    /// the gateway's first sync gives the roles, and the plugin disconnects a client whose roles
    /// change).
    static func connect(_ account: String, _ gateway: RunningGateway) async throws -> Account {
        try await GatewayIntegrationTests.connectWhenAllowed(account, to: gateway.broker)
    }

    /// Connects stranger, a member of no home, with MQTT 5 so that refused publishes are reported.
    /// With the acl_file it may send requests and read its answers like any account; with dynamic
    /// security it has no role at all, so it is not subscribed to answers.
    static func connectStranger(_ gateway: RunningGateway) async throws -> MQTTClient {
        let client = try makeClient(gateway.broker, name: "stranger") {
            $0.username = "stranger"
            $0.password = "stranger"
        }
        try await client.connect()
        return client
    }

    /// Waits until no retained message is held on `topic`.
    static func waitUntilCleared(_ topic: String, as account: Account) async throws {
        try await eventually("'\(topic)' cleared") { try await account.retained(topic) == nil }
    }

    @Test(
        "strangers and guests of other homes cannot write into a home, retained or not; a member's retained command is cleared, not run",
        arguments: Protection.allCases)
    func noRetainedCommands(protection: Protection) async throws {
        try await Self.withProtectedGateway(protection) { gateway in
            let stranger = try await Self.connectStranger(gateway)
            let guest = try await Self.connect("guest", gateway)
            let owner = try await Self.connect("owner", gateway)
            // The gateway's account sees every retained message under the base topic
            let inspector = try await Account.connect(gateway.inspector ?? "homegate", to: gateway.broker)
            let before = try await owner.retained("\(Self.lamp)/Lightbulb/On")

            // When stranger plants retained junk in Main House and guest in Lake Cabin (no member),
            // the broker refuses both, retained or not
            for (client, topic) in [
                (stranger, "\(Self.lamp)/Lightbulb/On/set/stranger"), (stranger, "\(Self.lamp)/$set/stranger"),
                (guest.client, "\(Self.heater)/Switch/On/set/guest"),
                (guest.client, "homegate/Lake Cabin/$actionsets/Away/$run/guest"),
            ] {
                for retain in [true, false] {
                    let refused = await #expect(throws: MQTTError.self) {
                        try await client.publish(topic, "JUNK", qos: .atLeastOnce, retain: retain)
                    }
                    #expect(refused?.code == .publishRefused, "\(topic) was taken")
                }
            }

            // When guest, a member, retains a command and a request in its own name
            try await guest.client.subscribe(to: ["homegate/$response/guest"], qos: .atLeastOnce)
            let command = "\(Self.lamp)/Lightbulb/On/set/guest"
            let request = "homegate/$request/guest/homes"
            try await guest.client.publish(
                command, before == "true" ? "false" : "true", qos: .atLeastOnce, retain: true)
            try await guest.client.publish(request, #"{"id":"kept-1"}"#, qos: .atLeastOnce, retain: true)

            // Then the gateway clears both, runs neither, and says why, with the request's id
            try await Self.waitUntilCleared(command, as: inspector)
            try await Self.waitUntilCleared(request, as: inspector)
            let refusals = try await [command, request].asyncMap { topic in
                try JSON.parse(
                    await guest.inbox.next("the refusal of \(topic)") {
                        $0.topic == "homegate/$response/guest" && $0.payloadString?.contains(topic) == true
                    }.payload)
            }
            for refusal in refusals {
                #expect(refusal.code == "invalidParameter")
                #expect(refusal["message"]?.stringValue?.contains("must not be retained") == true)
            }
            #expect(refusals[1]["id"] == .string("kept-1"))
            #expect(try await owner.retained("\(Self.lamp)/Lightbulb/On") == before)

            // And nothing of anyone's is retained under the base topic but the gateway's
            let held = try await inspector.retainedMessages(under: "homegate/#").map(\.topic)
            #expect(held.count > 50)
            #expect(!held.contains { $0.hasSuffix("/guest") || $0.hasSuffix("/stranger") }, "\(held)")
            await stranger.disconnect()
            for account in [guest, owner, inspector] { await account.disconnect() }
        }
    }

    @Test("MQTT 3.1.1: a retained command found at connect is cleared, and the clearing coming back runs nothing")
    func retainedCommandUnderMQTT311() async throws {
        let identify = "\(Self.lamp)/$identify/guest"
        // Given a retained identify left on the broker before the gateway connects
        try await withGateway(protocolVersion: .v311) { broker in
            let guest = try makeClient(broker, name: "guest")
            try await withConnected(guest) { _ in
                try await guest.publish(identify, "now", qos: .atLeastOnce, retain: true)
            }
        } _: { gateway in
            // Then the gateway clears it (at once, and in its resync), and neither the retained
            // copy nor the empty clearing that comes back to it (3.1.1 has no "no local") identifies
            // the lamp
            let guest = try await Account.connect("guest", to: gateway.broker)
            // (read straight from the broker: Account.retained asks the gateway over a v5 response
            // topic, which a 3.1.1 gateway does not see)
            try await eventually("'\(identify)' cleared") {
                try await !retainedTopicsOnBroker(port: gateway.broker.port, account: nil, topics: gateway.topics)
                    .contains(identify)
            }
            // (a 3.1.1 gateway sees no v5 response topic: the marker's answer comes on the default topic)
            try await guest.client.subscribe(to: ["homegate/$response/guest"], qos: .atLeastOnce)
            try await guest.client.publish("homegate/$request/guest/homes", #"{"id":"marker"}"#, qos: .atLeastOnce)
            _ = try await guest.inbox.next("the marker's answer") {
                $0.topic == "homegate/$response/guest" && $0.payloadString?.contains("marker") == true
            }
            #expect(await gateway.driver.identifyCount("living-lamp") == 0)
            // while a plain identify does
            try await guest.client.publish(identify, "", qos: .atLeastOnce)
            try await eventually("the plain identify") { await gateway.driver.identifyCount("living-lamp") > 0 }
            await guest.disconnect()
        }
    }

    @Test(
        "answers go only to the account's own response topic; a command that asks otherwise is refused unrun",
        arguments: Protection.allCases)
    func answersStayHome(protection: Protection) async throws {
        try await Self.withProtectedGateway(protection) { gateway in
            let guest = try await Self.connect("guest", gateway)
            let owner = try await Self.connect("owner", gateway)
            try await guest.client.subscribe(to: ["homegate/$response/guest"], qos: .atLeastOnce)
            // A watcher with the gateway's rights sees every place an answer could be steered to
            let watcherName = protection == .aclFile ? "homegate" : "admin"
            let watcher = try await Account.connect(watcherName, to: gateway.broker)
            // (each filter alone: the plugin refuses those the gateway's role does not cover)
            for filter in ["homeassistant/#", "homegate/Main House/#", "homegate/$response/owner", "$CONTROL/#"] {
                _ = try? await watcher.client.subscribe(to: [filter], qos: .atLeastOnce)
            }
            let before = try await owner.retained("\(Self.lamp)/Lightbulb/On")
            let flipped = before == "true" ? "false" : "true"

            // When guest asks for answers on Home Assistant's discovery prefix, a value topic,
            // owner's answers and the plugin's control topic
            let evil = [
                "homeassistant/switch/evil/x/config", "\(Self.lamp)/Lightbulb/On", "homegate/$response/owner",
                "$CONTROL/dynamic-security/v1", "homegate/$response/guestbook",
            ]
            for (index, topic) in evil.enumerated() {
                try await guest.client.publish(
                    "homegate/$request/guest/homes", #"{"id":\#(index)}"#, qos: .atLeastOnce,
                    properties: MQTTProperties(responseTopic: topic, correlationData: Array("c\(index)".utf8)))
            }
            try await guest.client.publish(
                "\(Self.lamp)/Lightbulb/On/set/guest", flipped, qos: .atLeastOnce,
                properties: MQTTProperties(responseTopic: evil[0], correlationData: Array("cmd".utf8)))

            // Then each is refused on guest's own topic with its id and correlation data
            for index in evil.indices {
                let answer = try await guest.inbox.next("refusal \(index)") {
                    $0.topic == "homegate/$response/guest" && $0.properties.correlationData == Array("c\(index)".utf8)
                }
                let json = try JSON.parse(answer.payload)
                #expect(json.code == "invalidParameter", "\(json.serialized)")
                #expect(json["id"] == .integer(index))
            }
            let command = try await guest.inbox.next("the command's refusal") {
                $0.topic == "homegate/$response/guest" && $0.properties.correlationData == Array("cmd".utf8)
            }
            #expect(try JSON.parse(command.payload).code == "invalidParameter")
            // And nothing was run, nor published where guest asked
            #expect(try await guest.command("homegate/$request/guest/homes", "{}").isOK, "a marker")
            #expect(try await owner.retained("\(Self.lamp)/Lightbulb/On") == before)
            let steered = await watcher.inbox.all.filter { message in
                evil.contains(message.topic) && message.payloadString?.contains("\"ok\"") == true
            }
            #expect(steered.isEmpty, "\(steered.map(\.topic))")
            // While an answer below guest's own topic is fine
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", flipped).isOK)
            for account in [guest, owner, watcher] { await account.disconnect() }
        }
    }

    @Test("every refusal of a burst carries its request's id; a malformed body's too", arguments: Protection.allCases)
    func refusalsCarryIDs(protection: Protection) async throws {
        // A bucket of 100 that does not refill within the test: exactly 100 ok, 200 refused
        let rateLimit = RateLimit(perSecond: 0.001, burst: 100)
        try await Self.withProtectedGateway(protection, rateLimit: rateLimit) { gateway in
            let guest = try await Self.connect("guest", gateway)
            try await guest.client.subscribe(to: ["homegate/$response/guest"], qos: .atLeastOnce)

            // When guest sends 300 requests at once, past the limit of 100 at once
            for id in 1...300 {
                try guest.client.send(
                    "homegate/$request/guest/homes", payload: Array(#"{"id":\#(id)}"#.utf8), qos: .atLeastOnce)
            }
            // Then every one is answered with its id, the refusals too
            var answers: [Int: String] = [:]
            try await eventually("300 answers (\(answers.count) so far)") {
                let all = await guest.inbox.all.filter { $0.topic == "homegate/$response/guest" }
                for message in all {
                    let json = try JSON.parse(message.payload)
                    guard case .integer(let id) = json["id"] else {
                        throw TimedOut("an answer without its id: \(json.serialized)")
                    }
                    answers[id] = json.isOK ? "ok" : json.code ?? "?"
                }
                return answers.count >= 300
            }
            #expect(Set(answers.keys) == Set(1...300))
            #expect(answers.values.filter { $0 == "ok" }.count == 100)
            #expect(answers.values.filter { $0 == "tooManyRequests" }.count == 200)

            // And a malformed body still gets its id back (owner has a bucket of its own)
            let owner = try await Self.connect("owner", gateway)
            let malformed = try await owner.command("homegate/$request/owner/addRoom", #"{"id":"x-1","name": }"#)
            #expect(malformed.code == "invalidParameter")
            #expect(malformed["id"] == .string("x-1"))
            await guest.disconnect()
            await owner.disconnect()
        }
    }

    @Test(
        "addHome by an account that is no administrator is refused and reveals nothing", arguments: Protection.allCases)
    func homeCreation(protection: Protection) async throws {
        try await Self.withProtectedGateway(protection) { gateway in
            var accounts = ["guest"]
            if protection == .aclFile {
                accounts.append("stranger")
            } else {
                // With dynamic security stranger may not even send the request
                let stranger = try await Self.connectStranger(gateway)
                let refused = await #expect(throws: MQTTError.self) {
                    try await stranger.publish(
                        "homegate/$request/stranger/addHome", #"{"name":"Beach House"}"#, qos: .atLeastOnce)
                }
                #expect(refused?.code == .publishRefused)
                await stranger.disconnect()
            }
            for name in accounts {
                let account =
                    name == "stranger"
                    ? try await Account.connect(name, to: gateway.broker) : try await Self.connect(name, gateway)
                let taken = try await account.request("addHome", #"{"id":1,"name":"main house"}"#)
                let free = try await account.request("addHome", #"{"id":2,"name":"Beach House"}"#)
                #expect(taken.code == "insufficientPrivileges")
                #expect(free.code == "insufficientPrivileges")
                #expect(taken["message"] == free["message"], "the answer tells a taken name from a free one")
                #expect(taken["message"]?.stringValue?.contains("Main House") == false)
                #expect(taken["id"] == .integer(1))
                await account.disconnect()
            }
            #expect(await gateway.manager.allHomes().count == 2)
            let owner = try await Self.connect("owner", gateway)
            #expect(try await owner.request("addHome", #"{"name":"main house"}"#).code == "homeWithSimilarNameExists")
            #expect(try await owner.request("addHome", #"{"name":"Beach House"}"#).isOK)
            await owner.disconnect()
        }
    }

    @Test(
        "Home Assistant is announced only the homes its account is a user of; removing it clears that home's configs",
        arguments: Protection.allCases)
    func discoveryFollowsMembership(protection: Protection) async throws {
        try await Self.withProtectedGateway(protection, homeAssistant: true) { gateway in
            let inspector = protection == .aclFile ? "homegate" : "admin"
            func cabinConfigs() async throws -> Int {
                try await retainedTopicsOnBroker(
                    port: gateway.broker.port, account: inspector, topics: gateway.topics,
                    also: ["homeassistant/#"]
                ).filter { $0.hasPrefix("homeassistant/") && $0.contains("cabin") }.count
            }
            #expect(try await cabinConfigs() > 0)
            let owner = try await Self.connect("owner", gateway)

            // When owner removes Home Assistant from Lake Cabin
            #expect(
                try await owner.request("removeUser", #"{"home":"Lake Cabin","user":"Home Assistant"}"#).isOK)

            // Then the cabin's configs are gone, Main House's stay, and the broker holds the model's view
            try await gateway.waitUntilPublished()
            #expect(try await cabinConfigs() == 0)
            let held = try await retainedTopicsOnBroker(
                port: gateway.broker.port, account: inspector, topics: gateway.topics, also: ["homeassistant/#"])
            #expect(held.contains { $0.hasPrefix("homeassistant/light/homegate/") })

            // And adding it back announces the cabin again
            #expect(
                try await owner.request(
                    "addUser", #"{"home":"Lake Cabin","account":"homeassistant","name":"Home Assistant"}"#
                ).isOK)
            try await gateway.waitUntilPublished()
            #expect(try await cabinConfigs() > 0)
            await owner.disconnect()
        }
    }
}

extension Array {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
