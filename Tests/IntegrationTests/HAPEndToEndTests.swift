import Broker
import Foundation
import HAP
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing

/// The HAP controller against a real HomeKit bridge: HAP-python on loopback (scripts/hap-accessory.py),
/// reached at a fixed address (no mDNS), with the gateway on a real broker.
@Suite("HomeKit accessories over HAP, end to end", .serialized, .timeLimit(.minutes(5)))
struct HAPEndToEndTests {
    static let code = "031-45-154"
    static let office = "homegate/Main House/Office"

    @Test("pair (a wrong code refused), read, write, events, the accessory restarts, unpair")
    func lifecycle() async throws {
        try await withTemporaryDirectory { folder in
            var bridge = try await HAPAccessoryProcess(setupCode: Self.code, folder: folder)
            let port = bridge.port
            // The bridge of the moment is stopped, the restarted one included.
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    let unpaired = "hap@127.0.0.1:\(port)"

                    // The unpaired bridge waits in the browser, saying it needs pairing.
                    let discovered = try await owner.retainedJSON("homegate/$discovered") {
                        $0.serialized.contains(#""id":"\#(unpaired)""#)
                    }
                    #expect(discovered.serialized.contains(#""needsPairing":true"#))
                    let adding = try await owner.request(
                        "addAccessory", #"{"home":"Main House","accessory":"\#(unpaired)"}"#)
                    #expect(adding["code"] == .string("invalidParameter"))

                    // A wrong code is refused, and nothing is added.
                    let wrong = try await owner.request(
                        "pairAccessory", #"{"id":"\#(unpaired)","setupCode":"111-22-333","home":"Main House"}"#,
                        within: .seconds(120))
                    #expect(wrong["code"] == .string("authenticationFailed"))
                    #expect(!(try await owner.retained("homegate/$discovered") ?? "").contains("Test Bridge"))

                    // The right code pairs: the bridge and its three accessories join the Office.
                    let paired = try await owner.request(
                        "pairAccessory",
                        #"{"id":"\#(unpaired)","setupCode":"\#(Self.code)","home":"Main House","room":"Office","name":"HAP Bridge"}"#,
                        within: .seconds(120))
                    #expect(paired.isOK, "\(paired)")
                    let light = "\(Self.office)/Light/Lightbulb/On"
                    let temperature = "\(Self.office)/Temperature/TemperatureSensor/CurrentTemperature"
                    #expect(try await owner.retained(light, becomes: "false", within: .seconds(60)))
                    let topics = try await owner.retainedMessages(under: "\(Self.office)/#").map(\.topic)
                    #expect(topics.contains("\(Self.office)/Switch/Switch/On"), "\(topics)")
                    #expect(try await owner.retained(temperature, becomes: "21.5"))
                    let layout = try #require(try await owner.retained("homegate/Main House/$layout"))
                    #expect(!layout.contains("ltpk") && !layout.contains(Self.code))

                    // A read goes to the device.
                    let read = try await owner.request(
                        "read",
                        #"{"home":"Main House","accessory":"Temperature","characteristic":"CurrentTemperature"}"#)
                    #expect(read.isOK && text(read).contains("21.5"), "\(text(read))")

                    // The accessory's pairings: this gateway as administrator; another controller added and removed.
                    let listed = try await owner.request(
                        "listPairings", #"{"home":"Main House","accessory":"HAP Bridge"}"#)
                    #expect(
                        text(listed).contains(#""admin":true"#) && text(listed).contains(#""thisGateway":true"#),
                        "\(text(listed))")
                    let otherKey = Data((0..<32).map { UInt8($0) }).base64EncodedString()
                    let other = "2A9A3B7C-0000-4000-8000-00000000BEEF"
                    let added = try await owner.request(
                        "addPairing",
                        #"{"home":"Main House","accessory":"HAP Bridge","controller":"\#(other)","publicKey":"\#(otherKey)","admin":false}"#
                    )
                    #expect(added.isOK, "\(added)")
                    let two = try await owner.request("listPairings", #"{"home":"Main House","accessory":"Light"}"#)
                    #expect(text(two).contains(other), "\(text(two))")
                    let guest = try await Account.connect("guest", to: gateway.broker)
                    let refused = try await guest.request(
                        "removePairing", #"{"home":"Main House","accessory":"HAP Bridge","controller":"\#(other)"}"#)
                    #expect(refused["code"] == .string("insufficientPrivileges"))
                    let dropped = try await owner.request(
                        "removePairing", #"{"home":"Main House","accessory":"HAP Bridge","controller":"\#(other)"}"#)
                    #expect(dropped.isOK, "\(dropped)")
                    #expect(
                        !text(
                            try await owner.request("listPairings", #"{"home":"Main House","accessory":"HAP Bridge"}"#)
                        )
                        .contains(other))

                    // A write reaches the accessory's own callback, and its value topic.
                    let written = try await owner.command("\(light)/set/owner", "true")
                    #expect(written.isOK, "\(written)")
                    _ = try await bridge.line("the write in the bridge's callback") {
                        $0["event"] as? String == "write" && $0["accessory"] as? String == "Light"
                            && $0["value"] as? Bool == true
                    }
                    #expect(try await owner.retained(light, becomes: "true"))

                    // An event from the accessory becomes the value topic.
                    bridge.warm()
                    #expect(try await owner.retained(temperature, becomes: "22", within: .seconds(60)))

                    // The accessory restarts: unreachable, then back, its values read again.
                    let reachable = "\(Self.office)/Temperature/$reachable"
                    await bridge.stop()
                    #expect(try await owner.retained(reachable, becomes: "false", within: .seconds(60)))
                    bridge = try await HAPAccessoryProcess(port: port, setupCode: Self.code, folder: folder, run: 1)
                    #expect(try await owner.retained(reachable, becomes: "true", within: .seconds(90)))
                    #expect(try await owner.retained(temperature, becomes: "21.5", within: .seconds(60)))
                    bridge.warm()
                    #expect(try await owner.retained(temperature, becomes: "22", within: .seconds(60)))

                    // Unpairing removes the pairing from the device and the accessories from the home.
                    let removed = try await owner.request(
                        "unpairAccessory", #"{"home":"Main House","accessory":"HAP Bridge"}"#, within: .seconds(60))
                    #expect(removed.isOK, "\(removed)")
                    try await eventually("the light's topics cleared") { try await owner.retained(light) == nil }
                    // Published after the unpairing's answer: waited for, as the topics above.
                    try await eventually("the unpaired accessory back in $discovered") {
                        try await owner.retained("homegate/$discovered")?.contains(#""id":"\#(unpaired)""#) == true
                    }
                }
            } cleanup: {
                await bridge.stop()
            }
        }
    }
}

extension HAPEndToEndTests {
    /// The accessories of Main House's `$layout` once it lists `bridge`.
    static func layoutAccessories(_ owner: Account, listing bridge: String) async throws -> [JSON] {
        let layout = try await owner.retainedJSON("homegate/Main House/$layout") { $0.serialized.contains(bridge) }
        guard case .array(let accessories)? = layout["accessories"] else {
            throw TimedOut("no accessories in \(layout.serialized)")
        }
        return accessories
    }

    /// Waits until the bridge at `port` is offered, then pairs it into Main House's Office as `name`.
    static func pairIntoOffice(_ owner: Account, port: Int, name: String) async throws {
        let unpaired = "hap@127.0.0.1:\(port)"
        try await eventually("the bridge offered") {
            try await owner.retained("homegate/$discovered")?.contains(unpaired) == true
        }
        let paired = try await owner.request(
            "pairAccessory",
            #"{"id":"\#(unpaired)","setupCode":"\#(code)","home":"Main House","room":"Office","name":"\#(name)"}"#,
            within: .seconds(120))
        #expect(paired.isOK, "\(paired)")
    }

    /// The kinds people own (issue 36): one accessory of each of 32 kinds with every optional
    /// characteristic; every type has its name, a whole-bridge read agrees with the value topics, and
    /// the types that were UUIDs take writes by name.
    @Test("32 kinds of accessory with every characteristic: all named, read as published, written by name")
    func allKinds() async throws {
        try await withTemporaryDirectory { folder in
            let bridge = try await HAPAccessoryProcess(setupCode: Self.code, folder: folder, options: ["--all-kinds"])
            let port = bridge.port
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    try await Self.pairIntoOffice(owner, port: port, name: "Kinds Bridge")
                    let accessories = try await Self.layoutAccessories(owner, listing: "Kinds Bridge")
                    let kinds = accessories.filter { $0["bridge"]?.stringValue == "Kinds Bridge" }
                    #expect(kinds.count == 3 + 32)
                    // Every service and characteristic type by its name: none left as a UUID
                    #expect(
                        !JSON.array(accessories).serialized.contains("-0000-1000-8000-0026BB765291"),
                        "a type left as a UUID")

                    // A read of the whole bridge, fresh from the device, agrees with every value topic
                    // published before it (from /accessories, and events)
                    var expected: Set<String> = []
                    for accessory in kinds {
                        guard case .array(let services)? = accessory["services"] else { continue }
                        for service in services {
                            guard case .array(let characteristics)? = service["characteristics"] else { continue }
                            for characteristic in characteristics
                            where characteristic["permissions"]?.serialized.contains("read") == true {
                                expected.insert(
                                    "\(Self.office)/\(accessory["name"]?.stringValue ?? "")/\(service["name"]?.stringValue ?? "")/\(characteristic["type"]?.stringValue ?? "")"
                                )
                            }
                        }
                    }
                    var published: [String: String] = [:]
                    try await eventually("every value of the bridge published") {
                        published = [:]
                        for message in try await owner.retainedMessages(under: "\(Self.office)/#") {
                            published[message.topic] = String(decoding: message.payload, as: UTF8.self)
                        }
                        return expected.isSubset(of: published.keys)
                    }
                    let read = try await owner.request(
                        "read", #"{"home":"Main House","accessory":"Kinds Bridge","bridged":true}"#,
                        within: .seconds(60))
                    guard case .array(let values)? = read["data"] else {
                        Issue.record("no values in \(read)")
                        return
                    }
                    #expect(values.count > 150, "\(values.count) values")
                    var disagreeing: [String] = []
                    for entry in values {
                        guard let accessory = entry["accessory"]?.stringValue, accessory != "Kinds Bridge",
                            let service = entry["service"]?.stringValue,
                            let characteristic = entry["characteristic"]?.stringValue, let value = entry["value"]
                        else { continue }
                        let topic = "\(Self.office)/\(accessory)/\(service)/\(characteristic)"
                        // As docs/mqtt.md publishes them: strings as they are, an empty one as `""`
                        let text =
                            if case .string(let string) = value, !string.isEmpty { string } else { value.serialized }
                        if published[topic] != .some(text) {
                            disagreeing.append("\(topic): read \(text), published \(published[topic] ?? "nothing")")
                        }
                    }
                    #expect(disagreeing.isEmpty, "\(disagreeing.joined(separator: "\n"))")

                    // The types that were UUIDs take writes by their names
                    for (path, payload) in [
                        ("Fanv2/Fanv2/RotationDirection", "1"),
                        ("Heater Cooler/HeaterCooler/TargetHeaterCoolerState", "1"),
                        ("Security System/SecuritySystem/SecuritySystemTargetState", "3"),
                        ("Speaker/Speaker/Mute", "true"),
                    ] {
                        let written = try await owner.command("\(Self.office)/\(path)/set/owner", payload)
                        #expect(written.isOK, "\(path): \(written)")
                    }
                }
            } cleanup: {
                await bridge.stop()
            }
        }
    }

    /// Reads are batched as aiohomekit batches them (issue 36): one `GET /characteristics` for all
    /// the values of an accessory, and one for a whole bridge when the read asks for its bridged ones.
    @Test("a read is one GET for the accessory's values, and one for the whole bridge with bridged")
    func batchedReads() async throws {
        try await withTemporaryDirectory { folder in
            let bridge = try await HAPAccessoryProcess(setupCode: Self.code, folder: folder)
            let port = bridge.port
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    try await Self.pairIntoOffice(owner, port: port, name: "HAP Bridge")
                    func reads() -> [[String]] {
                        bridge.lines().filter { $0["event"] as? String == "read" }.compactMap { $0["ids"] as? [String] }
                    }

                    let before = reads().count
                    let light = try await owner.request("read", #"{"home":"Main House","accessory":"Light"}"#)
                    #expect(light.isOK, "\(light)")
                    guard case .array(let lightValues)? = light["data"] else {
                        Issue.record("no values in \(light)")
                        return
                    }
                    _ = try await bridge.line("the light's read") { _ in reads().count > before }
                    #expect(reads().count == before + 1, "one GET for the light: \(reads().dropFirst(before))")
                    #expect(reads().last?.count == lightValues.count)

                    let all = try await owner.request(
                        "read", #"{"home":"Main House","accessory":"HAP Bridge","bridged":true}"#)
                    #expect(all.isOK, "\(all)")
                    guard case .array(let values)? = all["data"] else {
                        Issue.record("no values in \(all)")
                        return
                    }
                    let accessories = Set(values.compactMap { $0["accessory"]?.stringValue })
                    #expect(accessories == ["HAP Bridge", "Light", "Switch", "Temperature"], "\(accessories)")
                    #expect(reads().count == before + 2, "one GET for the bridge: \(reads().dropFirst(before))")
                    #expect(reads().last?.count == values.count)
                    #expect(
                        values.contains {
                            $0["accessory"]?.stringValue == "Temperature" && $0["value"] == .number(21.5)
                        }, "\(values)")
                    let refused = try await owner.request(
                        "read", #"{"home":"Main House","accessory":"Light","bridged":"yes"}"#)
                    #expect(refused["code"] == .string("invalidParameter"), "\(refused)")
                }
            } cleanup: {
                await bridge.stop()
            }
        }
    }

    /// A fixed address where nothing listens is no accessory (issue 36): it is offered only once the
    /// accessory answers there.
    @Test("an address where nothing listens is not offered; once the accessory listens there it is, and pairs")
    func silentAddress() async throws {
        try await withTemporaryDirectory { folder in
            let port = try LoopbackPort.free()
            let unpaired = "hap@127.0.0.1:\(port)"
            var bridge: HAPAccessoryProcess?
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    let before = try #require(try await owner.retained("homegate/$discovered"))
                    #expect(!before.contains(unpaired), "\(before)")
                    let refused = try await owner.request(
                        "pairAccessory", #"{"id":"\#(unpaired)","setupCode":"\#(Self.code)","home":"Main House"}"#)
                    #expect(refused["code"] == .string("notFound"), "\(refused)")

                    bridge = try await HAPAccessoryProcess(port: port, setupCode: Self.code, folder: folder)
                    try await eventually("the bridge offered once it listens") {
                        try await owner.retained("homegate/$discovered")?.contains(unpaired) == true
                    }
                    let paired = try await owner.request(
                        "pairAccessory",
                        #"{"id":"\#(unpaired)","setupCode":"\#(Self.code)","home":"Main House","room":"Office"}"#,
                        within: .seconds(120))
                    #expect(paired.isOK, "\(paired)")
                }
            } cleanup: {
                await bridge?.stop()
            }
        }
    }

    /// A bridge reconfigured while the hub is away from it (issues 36, 50): what it lists anew joins
    /// the bridge's home by itself, what it no longer lists leaves it with the action-set actions and
    /// automations that named it, each on `$events`; what it still lists goes only with the bridge.
    @Test(
        "a bridge that adds and drops an accessory: the new one joins its home, the gone one leaves it, both announced")
    func changedBridge() async throws {
        try await withTemporaryDirectory { folder in
            var bridge = try await HAPAccessoryProcess(setupCode: Self.code, folder: folder)
            let port = bridge.port
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    try await Self.pairIntoOffice(owner, port: port, name: "HAP Bridge")
                    let switchOn = "\(Self.office)/Switch/Switch/On"
                    #expect(try await owner.retained(switchOn, becomes: "false", within: .seconds(60)))
                    // An action set and an automation name the Switch
                    let night =
                        #"{"home":"Main House","name":"Office Off","actions":[{"accessory":"Switch","service":"Switch","characteristic":"On","value":false},{"accessory":"Light","service":"Lightbulb","characteristic":"On","value":false}]}"#
                    #expect(try await owner.request("addActionSet", night).isOK)
                    let watch =
                        #"{"home":"Main House","name":"Switch Watch","accessory":"Switch","service":"Switch","characteristic":"On","actionSets":["Office Off"]}"#
                    #expect(try await owner.request("addTrigger", watch).isOK)
                    try await owner.client.subscribe(to: ["homegate/Main House/$events"])

                    // The bridge restarts reconfigured while the hub is away from it: Outlet 27 added,
                    // the Switch gone
                    await bridge.stop()
                    bridge = try await HAPAccessoryProcess(
                        port: port, setupCode: Self.code, folder: folder, run: 1,
                        options: ["--extra-outlet", "--without-switch"])

                    // The new one joins the bridge's home by itself, in its default room, announced
                    let outlet = "homegate/Main House/$default/Outlet 27/Outlet/On"
                    #expect(try await owner.retained(outlet, becomes: "false", within: .seconds(90)))
                    let joined = try await owner.inbox.next("Outlet 27 announced") {
                        $0.topic == "homegate/Main House/$events"
                            && $0.payloadString?.contains(#""event":"didAddAccessory""#) == true
                    }
                    #expect(joined.payloadString?.contains(#""accessory":"Outlet 27""#) == true, "\(joined)")
                    let written = try await owner.command("\(outlet)/set/owner", "true")
                    #expect(written.isOK, "\(written)")
                    try await eventually("Outlet 27 not in $discovered") {
                        try await owner.retained("homegate/$discovered")?.contains("Outlet 27") == false
                    }

                    // The gone one leaves the home by itself, with what named it, each announced
                    try await eventually("the Switch's topics cleared") { try await owner.retained(switchOn) == nil }
                    for (event, name) in [
                        ("didRemoveAccessory", #""accessory":"Switch""#),
                        ("didUpdateActionsForActionSet", #""actionSet":"Office Off""#),
                        ("didRemoveTrigger", #""trigger":"Switch Watch""#),
                    ] {
                        let announced = try await owner.inbox.next("\(event) on $events") {
                            $0.topic == "homegate/Main House/$events"
                                && $0.payloadString?.contains(#""event":"\#(event)""#) == true
                        }
                        #expect(announced.payloadString?.contains(name) == true, "\(announced)")
                    }
                    let layout = try await owner.retainedJSON("homegate/Main House/$layout") {
                        guard case .array(let accessories)? = $0["accessories"] else { return false }
                        return !accessories.contains { $0["name"]?.stringValue == "Switch" }
                    }
                    guard case .array(let accessories)? = layout["accessories"],
                        let entry = accessories.first(where: { $0["name"]?.stringValue == "HAP Bridge" })
                    else {
                        Issue.record("no HAP Bridge in \(layout.serialized)")
                        return
                    }
                    #expect(
                        entry["bridged"] == .array([.string("Light"), .string("Temperature"), .string("Outlet 27")]))
                    #expect(!layout.serialized.contains("Switch Watch"), "\(layout.serialized)")
                    // One still listed still goes only with its bridge
                    let light = try await owner.request(
                        "removeAccessory", #"{"home":"Main House","accessory":"Light"}"#)
                    #expect(light["code"] == .string("cannotRemoveNonBridgeAccessory"), "\(light)")

                    // Unpairing the bridge takes the new one with it
                    let unpairedAgain = try await owner.request(
                        "unpairAccessory", #"{"home":"Main House","accessory":"HAP Bridge"}"#, within: .seconds(60))
                    #expect(unpairedAgain.isOK, "\(unpairedAgain)")
                    try await eventually("Outlet 27's topics cleared") { try await owner.retained(outlet) == nil }
                }
            } cleanup: {
                await bridge.stop()
            }
        }
    }

    /// People's devices are named as their makers and owners like (issue 36): the names become the
    /// home's, valid and unique, with the device's own kept; services the device names become topic
    /// levels that hold values.
    @Test("device names become the home's names, valid and unique, the device's own kept; named services get topics")
    func ownedNames() async throws {
        try await withTemporaryDirectory { folder in
            let bridge = try await HAPAccessoryProcess(setupCode: Self.code, folder: folder, ownedNames: true)
            let port = bridge.port
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    try await Self.pairIntoOffice(owner, port: port, name: "Named Bridge")

                    let accessories = try await Self.layoutAccessories(owner, listing: "Named Bridge")
                    let bridged = accessories.filter { $0["bridge"]?.stringValue == "Named Bridge" }
                    let names = Dictionary(
                        bridged.map { ($0["name"]?.stringValue ?? "", $0["deviceName"]?.stringValue) },
                        uniquingKeysWith: { first, _ in first })
                    let expected: [String: String?] = [
                        "Fan 2 Bedroom": "Fan-2 (Bedroom)", "Door Window": "Door/Window",
                        "Eve Door Window 1A2B": "Eve Door & Window 1A2B", "Nanoleaf 52 A1": "Nanoleaf 52:A1",
                        "Lamp 2": "Lamp #2", "Spot": "Spot+", "Hue Lamp 1": "Hue-Lamp 1", "Lamp": "Lamp ",
                        "Outlet": nil, "Outlet 2": "Outlet", "Floor Lamp 2": "Floor Lamp", "Panel": nil,
                    ]
                    for (name, deviceName) in expected {
                        #expect(names[name] == .some(deviceName), "\(name) (the device's \(deviceName ?? "the same"))")
                    }
                    #expect(bridged.count == 3 + expected.count, "the bridge's accessories: \(names.keys.sorted())")
                    #expect(
                        accessories.contains { $0["name"]?.stringValue == "Floor Lamp" },
                        "the demo's own Floor Lamp keeps its name")

                    // Each gets its value topics; the panel's services are topic levels made of their names
                    #expect(
                        try await owner.retained(
                            "\(Self.office)/Fan 2 Bedroom/Lightbulb/On", becomes: "false", within: .seconds(60)))
                    #expect(try await owner.retained("\(Self.office)/Outlet 2/Outlet/On", becomes: "false"))
                    #expect(try await owner.retained("\(Self.office)/Panel/Switch 1/On", becomes: "false"))
                    #expect(try await owner.retained("\(Self.office)/Panel/Main Light/On", becomes: "false"))
                    let written = try await owner.command("\(Self.office)/Panel/Main Light/On/set/owner", "true")
                    #expect(written.isOK, "\(written)")
                    _ = try await bridge.line("the write of Main/Light+") {
                        $0["event"] as? String == "write" && $0["accessory"] as? String == "Main/Light+"
                            && $0["value"] as? Bool == true
                    }
                }
            } cleanup: {
                await bridge.stop()
            }
        }
    }

    /// HAP-python's doorbell: each press reaches subscribers as an event, never as a retained state
    /// (a client that subscribes later sees no old press), the same press twice is two.
    @Test("a doorbell's press is published as it happens and never retained")
    func doorbell() async throws {
        try await withTemporaryDirectory { folder in
            let bridge = try await HAPAccessoryProcess(setupCode: Self.code, folder: folder, doorbell: true)
            try await withCleanup {
                try await withGateway(hap: [HAPEndpoint(host: "127.0.0.1", port: bridge.port)]) { gateway in
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    let paired = try await owner.request(
                        "pairAccessory",
                        #"{"id":"hap@127.0.0.1:\#(bridge.port)","setupCode":"\#(Self.code)","home":"Main House","room":"Office","name":"HAP Bridge"}"#,
                        within: .seconds(120))
                    #expect(paired.isOK, "\(paired)")
                    let press = "\(Self.office)/Doorbell/Doorbell/ProgrammableSwitchEvent"
                    _ = try await owner.retained(
                        "\(Self.office)/Doorbell/$reachable", becomes: "true", within: .seconds(60))
                    try await owner.client.subscribe(to: [press], qos: .atLeastOnce)

                    var lines = 0
                    for _ in 0..<2 {
                        bridge.ring()
                        lines += 1
                        let count = lines
                        _ = try await bridge.line("press \(count)") { _ in
                            bridge.lines().filter { $0["event"] as? String == "pressed" }.count >= count
                        }
                        let message = try await owner.inbox.next("press \(count) on \(press)") { $0.topic == press }
                        #expect(message.payloadString == "0")
                        #expect(!message.retain)
                    }
                    #expect(try await owner.retained(press) == nil)
                    let state = try await owner.retained("\(Self.office)/Doorbell/$state") ?? ""
                    #expect(!state.contains("ProgrammableSwitchEvent"), "\(state)")
                    await owner.disconnect()
                }
            } cleanup: {
                await bridge.stop()
            }
        }
    }
}

/// A JSON answer as its text.
private func text(_ json: JSON) -> String { String(decoding: json.bytes, as: UTF8.self) }
