import Broker
import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing
import VirtualDevices

@Suite("The gateway on a real mosquitto", .timeLimit(.minutes(3)))
struct GatewayIntegrationTests {
    static let lamp = "homegate/Main House/Living Room/Floor Lamp"

    @Test("a fresh subscriber sees every value, reachability and layout topic, retained, and nothing else")
    func retainedView() async throws {
        try await withGateway { gateway in
            // The fixture waited until the broker's retained topics equal the model's; look at them
            let held = try await gateway.retainedTopics()
            #expect(held == (await gateway.expectedRetainedTopics()))
            #expect(held.contains("homegate/$homes"))
            #expect(held.contains("homegate/Main House/$layout"))
            #expect(held.contains("homegate/Lake Cabin/$layout"))
            #expect(held.contains("\(Self.lamp)/Lightbulb/Brightness"))
            #expect(held.contains("\(Self.lamp)/$reachable"))
            #expect(held.contains("homegate/Main House/$default/Porch Motion/$state"))

            // and the payloads are the model's
            let owner = try await Account.connect("owner", to: gateway.broker)
            #expect(try await owner.retained("\(Self.lamp)/Lightbulb/Brightness") == "100")
            #expect(try await owner.retained("\(Self.lamp)/$reachable") == "true")
            let layout = try JSON.parse(try #require(try await owner.retained("homegate/Main House/$layout")))
            #expect(layout["name"] == .string("Main House"))
            guard case .array(let users) = layout["users"] else { throw TimedOut("no users in the layout") }
            #expect(users.map { $0["role"] } == [.string("administrator"), .string("guest"), .string("guest")])
            #expect(!layout.serialized.contains("\"owner\""), "accounts never appear in the layout")
            await owner.disconnect()
        }
    }

    @Test(
        "$events go at the configured QoS: at 1 a persistent session gets those made while it was away, at 0 not",
        arguments: [MQTTQoS.atMostOnce, .atLeastOnce])
    func eventsQoS(qos: MQTTQoS) async throws {
        try await withGateway(eventsQoS: qos) { gateway in
            let events = "homegate/Main House/$events"
            let follower = "follower-\(UUID().uuidString.prefix(8))"
            let persistent: (inout MQTTConfiguration) -> Void = {
                $0.clientID = follower
                $0.cleanSession = false
            }
            let owner = try await Account.connect("owner", to: gateway.broker)
            func lampEvent(_ value: Bool) -> @Sendable (MQTTMessage) -> Bool {
                {
                    $0.topic == events && (try? JSON.parse($0.payload))?["accessory"] == .string("Floor Lamp")
                        && (try? JSON.parse($0.payload))?["value"] == .bool(value)
                }
            }
            // Given a follower on a persistent session, subscribed at QoS 1, that sees an event
            let away = try await Account.connect("owner", port: gateway.broker.port, configure: persistent)
            try await away.client.subscribe(to: [events], qos: .atLeastOnce)
            #expect(try await owner.command("\(Self.lamp)/Lightbulb/On/set/owner", "true").isOK)
            #expect(try await away.inbox.next("the first event", where: lampEvent(true)).qos == qos)
            await away.disconnect()

            // When the lamp changes while it is away, and again once it is back
            try await owner.client.subscribe(to: [events], qos: .atLeastOnce)
            #expect(try await owner.command("\(Self.lamp)/Lightbulb/On/set/owner", "false").isOK)
            _ = try await owner.inbox.next("the event made while the follower is away", where: lampEvent(false))
            let back = try await Account.connect("owner", port: gateway.broker.port, configure: persistent)
            #expect(try await owner.command("\(Self.lamp)/Lightbulb/On/set/owner", "true").isOK)

            // Then at QoS 1 the event made while it was away comes first; at QoS 0 it never comes
            let (off, on) = (lampEvent(false), lampEvent(true))
            let first = try await back.inbox.next("the first lamp event after the return") { off($0) || on($0) }
            #expect((try JSON.parse(first.payload))["value"] == .bool(qos == .atLeastOnce ? false : true))
            await back.disconnect()
            await owner.disconnect()
        }
    }

    @Test("guest writes a characteristic and runs an action set: values move, events go out, answers are ok")
    func guestUsesTheHome() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            try await guest.client.subscribe(to: ["\(Self.lamp)/Lightbulb/On", "homegate/Main House/$events"])
            _ = try await guest.inbox.next { $0.topic == "\(Self.lamp)/Lightbulb/On" && $0.payloadString == "false" }

            // When guest switches the lamp on
            let answer = try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true")

            // Then the answer is ok, the value topic moves and the event names what changed
            #expect(answer.isOK, "\(answer.serialized)")
            #expect(answer["topic"] == .string("\(Self.lamp)/Lightbulb/On/set/guest"))
            let value = try await guest.inbox.next { $0.topic == "\(Self.lamp)/Lightbulb/On" }
            #expect(value.payloadString == "true")
            #expect(value.retain == false, "a live update, not the retained copy")
            // (other events, a sensor's reading say, may come first: wait for the lamp's)
            let event = try JSON.parse(
                try await guest.inbox.next("the lamp's value event") {
                    $0.topic == "homegate/Main House/$events" && Self.event(in: $0) == "didUpdateValueForCharacteristic"
                        && (try? JSON.parse($0.payload))?["accessory"] == .string("Floor Lamp")
                        && (try? JSON.parse($0.payload))?["characteristic"] == .string("On")
                }.payload)
            #expect(event["value"] == .bool(true))

            // When guest runs Good Night (names matched as the model compares them)
            let run = try await guest.command("homegate/main house/$actionsets/goodnight/$run/guest")

            // Then every action succeeded and the lamp is off again
            #expect(run.isOK, "\(run.serialized)")
            guard case .array(let results) = run["data"] else { throw TimedOut("no results: \(run.serialized)") }
            #expect(results.count == 5)
            #expect(results.allSatisfy { $0["ok"] == .bool(true) })
            #expect(try await guest.inbox.next { $0.topic == "\(Self.lamp)/Lightbulb/On" }.payloadString == "false")
            _ = try await guest.inbox.next("didExecuteActionSet") {
                $0.topic == "homegate/Main House/$events" && Self.event(in: $0) == "didExecuteActionSet"
            }
            await guest.disconnect()
        }
    }

    @Test("guest may not change the layout: insufficientPrivileges, and nothing changes")
    func guestCannotChangeLayout() async throws {
        try await withGateway { gateway in
            let before = try await gateway.retainedTopics()
            let guest = try await Account.connect("guest", to: gateway.broker)

            let answer = try await guest.request("addRoom", #"{"id":"r1","home":"Main House","name":"Attic"}"#)

            #expect(answer["ok"] == .bool(false))
            #expect(answer.code == "insufficientPrivileges")
            #expect(answer["id"] == .string("r1"))
            #expect(
                try await gateway.manager.home("Main House", account: "owner").rooms.contains { $0.name == "Attic" }
                    == false)
            #expect(try await gateway.retainedTopics() == before)
            await guest.disconnect()
        }
    }

    @Test(
        "bad commands are answered with their code and move no value topic",
        arguments: [
            ("Lightbulb/Brightness/set/guest", "150", "valueHigherThanMaximum", "Lightbulb/Brightness"),
            ("Lightbulb/Brightness/set/guest", "-1", "valueLowerThanMinimum", "Lightbulb/Brightness"),
            ("Lightbulb/Brightness/set/guest", "bright", "invalidValueType", "Lightbulb/Brightness"),
            ("Lightbulb/Brightness/set/guest", "NaN", "invalidValueType", "Lightbulb/Brightness"),
            ("Lightbulb/On/set/guest", "maybe", "invalidValueType", "Lightbulb/On"),
            ("Lightbulb/Dimness/set/guest", "1", "notFound", "Lightbulb/Brightness"),
            ("Lightbulb/On/set/guest", "", "missingParameter", "Lightbulb/On"),
        ])
    func badCommands(command: String, payload: String, code: String, watched: String) async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            let before = try await guest.retained("\(Self.lamp)/\(watched)")

            let answer = try await guest.command("\(Self.lamp)/\(command)", payload)

            #expect(answer["ok"] == .bool(false))
            #expect(answer.code == code, "\(answer.serialized)")
            #expect(answer["message"]?.stringValue?.isEmpty == false)
            #expect(try await guest.retained("\(Self.lamp)/\(watched)") == before)
            await guest.disconnect()
        }
    }

    @Test("read-only, unknown and unreachable targets are refused with their codes")
    func refusedTargets() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            let thermostat = "homegate/Main House/Hallway/Thermostat/Thermostat"

            let readOnly = try await guest.command("\(thermostat)/CurrentTemperature/set/guest", "30")
            #expect(readOnly.code == "readOnlyCharacteristic", "\(readOnly.serialized)")

            let unknown = try await guest.command(
                "homegate/Main House/Living Room/Ghost Lamp/Lightbulb/On/set/guest", "true")
            #expect(unknown.code == "notFound")
            let wrongRoom = try await guest.command(
                "homegate/Main House/Kitchen/Floor Lamp/Lightbulb/On/set/guest", "true")
            #expect(wrongRoom.code == "notFound")
            // A home guest is no member of: refused as if there were no such home
            let heater = "homegate/Lake Cabin/Cabin Living Room/Cabin Heater/Switch/On/set/guest"
            let foreign = try await guest.command(heater, "true")
            #expect(foreign.code == "notFound")
            #expect(foreign["message"] == .string("There is no home named 'Lake Cabin'."))
            let cabin = try await gateway.manager.home("Lake Cabin", account: "owner")
            let heaterOn = cabin.accessories.first { $0.name == "Cabin Heater" }?.services.first?
                .characteristics.first { $0.type == .on }?.value
            #expect(heaterOn == .bool(false))

            // An accessory that goes out of reach: its $reachable topic says so, and writes are refused
            await gateway.driver.setReachable(false, "living-lamp")
            try await guest.client.subscribe(to: ["\(Self.lamp)/$reachable"])
            _ = try await guest.inbox.next { $0.topic == "\(Self.lamp)/$reachable" && $0.payloadString == "false" }
            let unreachable = try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true")
            #expect(unreachable.code == "accessoryNotReachable")
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/On") == "false")
            await guest.disconnect()
        }
    }

    @Test("renames, moves and removals leave no stale retained topic")
    func layoutChangesClearOldTopics() async throws {
        try await withGateway { gateway in
            let owner = try await Account.connect("owner", to: gateway.broker)

            for (operation, body) in [
                ("renameAccessory", #"{"home":"Main House","accessory":"Floor Lamp","name":"Reading Lamp"}"#),
                ("assignAccessory", #"{"home":"Main House","accessory":"Reading Lamp","room":"Bedroom"}"#),
                ("renameRoom", #"{"home":"Main House","room":"Kitchen","name":"Cookhouse"}"#),
                ("removeAccessory", #"{"home":"Main House","accessory":"Back Door"}"#),
                ("renameHome", #"{"home":"Lake Cabin","name":"Lake House"}"#),
            ] {
                let answer = try await owner.request(operation, body)
                #expect(answer.isOK, "\(operation): \(answer.serialized)")
            }

            // The broker holds exactly the new layout: no topic under an old name survives
            try await gateway.waitUntilPublished()
            let held = try await gateway.retainedTopics()
            #expect(
                !held.contains { $0.contains("Floor Lamp") || $0.contains("/Kitchen/") || $0.contains("Lake Cabin") })
            #expect(!held.contains { $0.contains("Back Door") })
            #expect(held.contains("homegate/Main House/Bedroom/Reading Lamp/Lightbulb/On"))
            #expect(held.contains("homegate/Main House/Cookhouse/Counter Lights/$state"))
            #expect(held.contains("homegate/Lake House/$layout"))
            await owner.disconnect()
        }
    }

    @Test("requests: answered always, with data, id, and a code for every mistake")
    func requests() async throws {
        try await withGateway { gateway in
            let owner = try await Account.connect("owner", to: gateway.broker)
            try await owner.client.subscribe(to: ["homegate/Main House/$events"])

            let homes = try await owner.request("homes")
            #expect(homes.isOK)
            #expect(
                homes["data"]
                    == .array([
                        .object([
                            ("name", .string("Main House")), ("primary", .bool(true)),
                            ("role", .string("administrator")),
                        ]),
                        .object([
                            ("name", .string("Lake Cabin")), ("primary", .bool(false)),
                            ("role", .string("administrator")),
                        ]),
                    ]))

            let added = try await owner.request("addRoom", #"{"id":42,"home":"main house","name":"Attic"}"#)
            #expect(added.isOK && added["id"] == .integer(42), "\(added.serialized)")
            // (other events, a sensor's reading say, may come first: wait for this one)
            let event = try await owner.inbox.next("didAddRoom") {
                $0.topic == "homegate/Main House/$events" && Self.event(in: $0) == "didAddRoom"
            }
            #expect(try JSON.parse(event.payload)["room"] == .string("Attic"), "\(event.payloadString ?? "")")

            let similar = try await owner.request("addRoom", #"{"home":"Main House","name":"at tic"}"#)
            #expect(similar.code == "objectWithSimilarNameExistsInHome")
            #expect(
                try await owner.request("addRoom", #"{"home":"Main House","name":"'Attic"}"#).code
                    == "nameDoesNotStartWithValidCharacters")
            #expect(
                try await owner.request("addRoom", #"{"home":"Main House","name":"At#tic"}"#).code
                    == "nameContainsProhibitedCharacters")
            #expect(try await owner.request("addRoom", #"{"home":"Main House"}"#).code == "missingParameter")
            #expect(try await owner.request("addRoom", #"{"home":"Main House","name":7}"#).code == "invalidParameter")
            #expect(try await owner.request("addRoom", #"{"home":"Main House","#).code == "invalidParameter")
            #expect(
                try await owner.request("addRoom", #"{"home":"A","home":"B","name":"X"}"#).code == "invalidParameter")
            #expect(try await owner.request("teleport").code == "invalidParameter")

            let read = try await owner.request(
                "read", #"{"home":"Main House","accessory":"Floor Lamp","characteristic":"Brightness"}"#)
            #expect(
                read["data"]
                    == .array([
                        .object([
                            ("accessory", .string("Floor Lamp")), ("service", .string("Lightbulb")),
                            ("characteristic", .string("Brightness")), ("value", .integer(100)),
                        ])
                    ]))
            await owner.disconnect()
        }
    }

    @Test("v3.1.1 and v5 clients get their answers where the contract (docs/mqtt.md) says")
    func answerRouting() async throws {
        try await withGateway { gateway in
            // A v3.1.1 client: answers on B/$response/<account>
            let old = try await Account.connect("guest", to: gateway.broker, version: .v311)
            try await old.client.subscribe(to: ["homegate/$response/guest"])
            try await old.client.publish("\(Self.lamp)/Lightbulb/Brightness/set/guest", "150", qos: .atLeastOnce)
            let oldAnswer = try JSON.parse(try await old.inbox.next { $0.topic == "homegate/$response/guest" }.payload)
            #expect(oldAnswer.code == "valueHigherThanMaximum")
            // and a successful command sends it nothing
            try await old.client.publish("\(Self.lamp)/Lightbulb/Brightness/set/guest", "40", qos: .atLeastOnce)
            try await old.client.publish("homegate/$request/guest/homes", "{}", qos: .atLeastOnce)
            let next = try JSON.parse(try await old.inbox.next { $0.topic == "homegate/$response/guest" }.payload)
            #expect(next["topic"] == .string("homegate/$request/guest/homes"), "the ok write was not answered")

            // A v5 client with a response topic: answered there, correlation data echoed (Account.command checks)
            let new = try await Account.connect("guest", to: gateway.broker)
            #expect(try await new.command("\(Self.lamp)/Lightbulb/Brightness/set/guest", "50").isOK)

            // A v5 client may not steer answers into the gateway's tree: refused unrun, on its own topic
            try await new.client.subscribe(to: ["homegate/Main House/#"])
            try await new.client.publish(
                "\(Self.lamp)/Lightbulb/Brightness/set/guest", "150", qos: .atLeastOnce,
                properties: MQTTProperties(responseTopic: "\(Self.lamp)/Lightbulb/Brightness"))
            let redirected = try JSON.parse(try await old.inbox.next { $0.topic == "homegate/$response/guest" }.payload)
            #expect(redirected.code == "invalidParameter")
            #expect(redirected["message"]?.stringValue?.contains("Answers go only to homegate/$response/guest") == true)
            #expect(
                await new.inbox.all.filter {
                    $0.topic == "\(Self.lamp)/Lightbulb/Brightness" && $0.payloadString?.contains("ok") == true
                }.isEmpty)
            await old.disconnect()
            await new.disconnect()
        }
    }

    @Test("$health reports the version, memory and commands answered by code")
    func health() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            #expect(
                try await guest.command("\(Self.lamp)/Lightbulb/Brightness/set/guest", "150").code
                    == "valueHigherThanMaximum")
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/Brightness/set/guest", "60").isOK)
            try await guest.client.subscribe(to: ["homegate/$health"])
            let report = try await guest.inbox.next("health with both commands counted") { message in
                guard let health = try? JSON.parse(message.payload) else { return false }
                return health["commands"]?["failed"]?["valueHigherThanMaximum"] == .integer(1)
                    && health["commands"]?["ok"] == .integer(1)
            }
            let health = try JSON.parse(report.payload)
            #expect(health["version"] == .string(HealthService.version))
            #expect(health["commands"]?["ok"] == .integer(1))
            guard case .integer(let resident) = health["memory"]?["residentBytes"] else {
                throw TimedOut("no resident memory in \(health.serialized)")
            }
            #expect(resident > 1_000_000)
            await guest.disconnect()
        }
    }

    @Test("with dynamic security, a guest added over MQTT can use the home at once, and not after removal")
    func dynamicSecurity() async throws {
        let broker = MosquittoBroker.Configuration(
            allowAnonymous: false, dynamicSecurity: .init(adminPassword: "admin"))
        try await withGateway(broker, gatewayAccount: "admin", dynamicSecurity: true) { broker in
            // Accounts exist in the broker (with passwords); which homes they may use is the gateway's to say
            for account in ["owner", "visitor"] {
                try broker.dynamicSecurity(["createClient", account, "-p", account])
            }
        } _: { gateway in
            let topic = "\(Self.lamp)/Lightbulb/On"
            let owner = try await Self.connectWhenAllowed("owner", to: gateway.broker)

            // visitor is no member yet: the broker refuses it the home
            let visitor = try makeClient(gateway.broker, name: "visitor") {
                $0.username = "visitor"
                $0.password = "visitor"
            }
            try await withConnected(visitor) { _ in
                await #expect(throws: MQTTError.self) { try await visitor.subscribe(to: [topic]) }
            }

            // When owner adds visitor as a guest
            let added = try await owner.request(
                "addUser", #"{"home":"Main House","account":"visitor","name":"Visitor"}"#)
            #expect(added.isOK, "\(added.serialized)")

            // Then visitor may read the home and command it
            let guest = try await Self.connectWhenAllowed("visitor", to: gateway.broker)
            try await guest.client.subscribe(to: [topic])
            #expect(try await guest.command("\(topic)/set/visitor", "true").isOK)
            #expect(
                try await guest.inbox.next { $0.topic == topic && $0.payloadString == "true" }.payloadString == "true")
            await guest.disconnect()

            // And after removal it may not
            #expect(try await owner.request("removeUser", #"{"home":"Main House","user":"Visitor"}"#).isOK)
            try await eventually("the removed visitor refused") {
                let former = try makeClient(gateway.broker, name: "visitor") {
                    $0.username = "visitor"
                    $0.password = "visitor"
                }
                return try await withConnected(former) { _ in (try? await former.subscribe(to: [topic])) == nil }
            }
            await owner.disconnect()
        }
    }

    /// The kind of an `$events` message (its `event` field), nil if it is not one.
    static func event(in message: MQTTMessage) -> String? {
        (try? JSON.parse(message.payload))?["event"]?.stringValue
    }

    /// Connects as `account` once the gateway's roles let it read its home (the sync runs after the
    /// change is acknowledged, and dynamic security disconnects clients whose roles change).
    static func connectWhenAllowed(_ account: String, to broker: MosquittoBroker) async throws -> Account {
        try await eventuallyValue("\(account) getting its roles") { () -> Account? in
            guard let candidate = try? await Account.connect(account, to: broker) else { return nil }
            if (try? await candidate.client.subscribe(to: ["homegate/Main House/$layout"])) != nil {
                try await candidate.client.unsubscribe(from: ["homegate/Main House/$layout"])
                return candidate
            }
            await candidate.disconnect()
            return nil
        }
    }

    @Test("after a broker restart without persistence the gateway republishes everything and commands work")
    func brokerRestart() async throws {
        try await withGateway { gateway in
            await gateway.broker.stop()
            try await gateway.broker.start()
            try await gateway.waitUntilPublished()
            let guest = try await Account.connect("guest", to: gateway.broker)
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").isOK)
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/On", becomes: "true"))
            await guest.disconnect()
        }
    }
}
