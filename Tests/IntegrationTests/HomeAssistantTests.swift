import Broker
import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing
import VirtualDevices

/// Home Assistant MQTT discovery against a real broker: the configs the gateway retains, used the way
/// Home Assistant uses them (its payloads on the command topics, its templates on the state topics).
@Suite("Home Assistant discovery", .timeLimit(.minutes(3)))
struct HomeAssistantTests {
    /// Every entity the demo home must announce (object id → component), written out by hand from
    /// Config/demo-home.yml, so the mapping is checked against what a user expects, not against itself.
    static let demoEntities: [String: String] = {
        var entities: [String: String] = [
            "living-lamp_main": "light", "hue-stairs_main": "light", "hue-desk_main": "light",
            "kitchen-switch_main": "switch", "cabin-heater_main": "switch", "coffee-outlet_main": "switch",
            "coffee-outlet_main_in_use": "binary_sensor", "hall-thermostat_main": "climate",
            "front-lock_main": "lock", "garage-door_main": "cover", "garage-door_main_obstruction": "binary_sensor",
            "bedroom-blinds_main": "cover", "bedroom-fan_main": "fan", "bath-humidity_main": "sensor",
            "cabin-temperature_main": "sensor", "hue-sensor_main": "sensor", "porch-motion_main": "binary_sensor",
            "back-door-contact_main": "binary_sensor",
        ]
        for device in ["bath-humidity", "porch-motion", "back-door-contact", "cabin-temperature", "hue-sensor"] {
            entities["\(device)_battery"] = "sensor"
            entities["\(device)_battery_low"] = "binary_sensor"
        }
        let accessories = [
            "living-lamp", "kitchen-switch", "coffee-outlet", "hall-thermostat", "front-lock", "garage-door",
            "bedroom-blinds", "bedroom-fan", "bath-humidity", "porch-motion", "back-door-contact", "cabin-temperature",
            "cabin-heater", "hue-bridge", "hue-stairs", "hue-desk", "hue-sensor",
        ]
        for accessory in accessories { entities["\(accessory)_identify"] = "button" }
        return entities
    }()

    /// Keys each component needs to be usable in Home Assistant.
    static let requiredKeys: [String: [String]] = [
        "light": ["schema", "command_topic", "state_topic", "supported_color_modes"],
        "switch": ["command_topic", "state_topic", "value_template"],
        "lock": ["command_topic", "state_topic", "value_template"],
        "fan": ["command_topic", "state_topic", "percentage_command_topic", "percentage_state_topic"],
        "climate": [
            "modes", "mode_command_topic", "mode_state_topic", "temperature_command_topic", "current_temperature_topic",
            "action_topic", "min_temp", "max_temp", "temp_step",
        ],
        "cover": ["state_topic", "value_template"],
        "sensor": ["state_topic", "value_template", "device_class", "unit_of_measurement", "state_class"],
        "binary_sensor": ["state_topic", "value_template", "device_class"],
        "scene": ["command_topic"],
        "button": ["command_topic"],
    ]

    @Test("the broker holds exactly one valid config per mapped service of the demo homes")
    func configs() async throws {
        try await withGateway(homeAssistant: true) { gateway in
            try await withHomeAssistant(port: gateway.broker.port) { ha in
                let scenes = ha.configs.filter { $0.value["command_topic"]?.stringValue?.contains("/$run/") == true }
                let entities = ha.configs.filter { scenes[$0.key] == nil }
                #expect(Set(entities.keys) == Set(Self.demoEntities.keys))
                #expect(
                    Set(scenes.values.compactMap { $0["name"]?.stringValue }) == [
                        "Good Night", "Good Morning", "Arrive",
                    ])

                let held = try await gateway.retainedTopics()
                var uniqueIDs: Set<String> = []
                for (objectID, config) in ha.configs {
                    let component = try #require(ha.topics[objectID]?.split(separator: "/").map(String.init)[1])
                    if let expected = Self.demoEntities[objectID] { #expect(component == expected, "\(objectID)") }
                    for key in Self.requiredKeys[component] ?? [] {
                        #expect(config[key] != nil, "\(objectID) (\(component)) has no \(key)")
                    }
                    let uniqueID = try #require(config["unique_id"]?.stringValue)
                    #expect(uniqueID == "homegate_\(objectID)")
                    #expect(uniqueIDs.insert(uniqueID).inserted, "unique_id \(uniqueID) appears twice")
                    #expect(config["origin"]?["name"] == .string("homegate"))
                    #expect(config["device"]?["identifiers"] != nil, "\(objectID) has no device")

                    // Every command topic carries Home Assistant's account; every state and availability
                    // topic is one the broker holds.
                    for case (let key, .string(let topic)) in Self.members(config) where key.hasSuffix("command_topic")
                    {
                        #expect(topic.hasSuffix("/homeassistant"), "\(objectID).\(key) = \(topic)")
                    }
                    for case (let key, .string(let topic)) in Self.members(config)
                    where key.hasSuffix("_topic") && !key.contains("command") && key != "set_position_topic" {
                        let isHeld = held.contains(topic)
                        #expect(isHeld, "\(objectID).\(key) = \(topic) is not retained")
                    }
                    if component != "scene" {
                        #expect(config["availability_mode"] == .string("all"))
                        let availability = Self.array(config["availability"]).compactMap { $0["topic"]?.stringValue }
                        let allHeld = availability.allSatisfy(held.contains)
                        #expect(availability.count == 2 && allHeld, "\(availability)")
                    }
                    // No account is given away: users are display names only, and no password travels.
                    #expect(!config.serialized.contains("owner") && !config.serialized.contains("\"guest"))
                }

                let lamp = try ha.config("living-lamp_main")
                #expect(lamp["device"]?["suggested_area"] == .string("Living Room"))
                #expect(lamp["device"]?["manufacturer"] == .string("Lumen"))
                #expect(
                    try ha.config("porch-motion_main")["device"]?["suggested_area"] == nil,
                    "the default room is no area")
                #expect(try ha.config("hue-stairs_main")["device"]?["via_device"] == .string("homegate_hue-bridge"))
                #expect(try ha.config("bath-humidity_main")["unit_of_measurement"] == .string("%"))
                #expect(try ha.config("hue-sensor_main")["device_class"] == .string("temperature"))
                let climate = try ha.config("hall-thermostat_main")
                #expect(climate["min_temp"] == .integer(10) && climate["max_temp"] == .integer(38))
                #expect(climate["temp_step"] == .number(0.1))
                #expect(
                    Self.array(climate["modes"]) == [.string("off"), .string("heat"), .string("cool"), .string("auto")])
            }
        }
    }

    @Test("Home Assistant's payloads on each command topic change the accessory, and its states follow")
    func commandsAndStates() async throws {
        // The devices move only when the test advances time: on the real clock the lock finishes its
        // 2 s transition, and the covers theirs, at moments that depend on the machine's load, and a
        // transient state (UNLOCKING, opening) could be over before Home Assistant's state shows it
        try await withGateway(homeAssistant: true, tick: .seconds(86_400)) { gateway in
            try await withHomeAssistant(port: gateway.broker.port) { ha in
                try await withAccount("owner", to: gateway.broker) { owner in
                    let main = "homegate/Main House"

                    // Switch: ON / OFF.
                    try await ha.send("kitchen-switch_main", "ON")
                    try await ha.waitForState("kitchen-switch_main", .string("ON"))
                    #expect(try await owner.retained("\(main)/Kitchen/Counter Lights/Switch/On") == "true")
                    try await ha.send("kitchen-switch_main", "OFF")
                    try await ha.waitForState("kitchen-switch_main", .string("OFF"))

                    // Light (JSON schema): brightness 0–255, colour as hue/saturation, colour temperature in kelvin.
                    let lamp = "\(main)/Living Room/Floor Lamp/Lightbulb"
                    try await ha.send("living-lamp_main", #"{"state":"ON","brightness":128}"#)
                    try await eventually("the lamp's brightness 50") {
                        try await owner.retained("\(lamp)/Brightness") == "50"
                    }
                    var light = try #require(try await ha.state("living-lamp_main", template: nil))
                    #expect(light["state"] == .string("ON") && light["brightness"] == .integer(128))
                    try await ha.send("living-lamp_main", #"{"state":"ON","color":{"h":120.4,"s":80.0}}"#)
                    try await eventually("the lamp's hue 120") { try await owner.retained("\(lamp)/Hue") == "120" }
                    light = try #require(try await ha.state("living-lamp_main", template: nil))
                    #expect(light["color_mode"] == .string("hs"))
                    #expect(light["color"]?.serialized == #"{"h":120,"s":80}"#)
                    try await ha.send("living-lamp_main", #"{"color_temp":2700}"#)
                    try await eventually("the lamp's colour temperature 370") {
                        try await owner.retained("\(lamp)/ColorTemperature") == "370"
                    }
                    #expect(try await ha.state("living-lamp_main", template: nil)?["color_temp"] == .integer(2703))

                    // Lock: LOCK / UNLOCK, with UNLOCKING while the bolt moves.
                    try await ha.send("front-lock_main", "UNLOCK")
                    try await ha.waitForState("front-lock_main", .string("UNLOCKING"))
                    await gateway.driver.advance(by: .seconds(5))
                    try await ha.waitForState("front-lock_main", .string("UNLOCKED"))
                    try await ha.send("front-lock_main", "LOCK")
                    try await ha.waitForState("front-lock_main", .string("LOCKING"))
                    await gateway.driver.advance(by: .seconds(5))
                    try await ha.waitForState("front-lock_main", .string("LOCKED"))

                    // Climate: modes by name, target temperature as a number.
                    try await ha.send("hall-thermostat_main", "heat", on: "mode_command_topic")
                    try await ha.waitForState(
                        "hall-thermostat_main", topic: "mode_state_topic", template: "mode_state_template",
                        .string("heat"))
                    try await ha.send("hall-thermostat_main", "22.5", on: "temperature_command_topic")
                    try await ha.waitForState(
                        "hall-thermostat_main", topic: "temperature_state_topic",
                        template: "temperature_state_template",
                        .number(22.5))
                    let action = try await ha.state(
                        "hall-thermostat_main", topic: "action_topic", template: "action_template")
                    #expect(["heating", "idle", "cooling", "off"].map { JSON.string($0) }.contains(action ?? .null))
                    try await ha.send("hall-thermostat_main", "off", on: "mode_command_topic")
                    try await ha.waitForState(
                        "hall-thermostat_main", topic: "mode_state_topic", template: "mode_state_template",
                        .string("off"))

                    // Window covering: a position, then OPEN (it moves 10 % a second; time moves once the
                    // command reached the device).
                    try await ha.send("bedroom-blinds_main", "40", on: "set_position_topic")
                    try await eventually("the blinds' target position 40") {
                        await gateway.driver.value("bedroom-blinds", .targetPosition) == .int(40)
                    }
                    await gateway.driver.advance(by: .seconds(10))
                    try await ha.waitForState(
                        "bedroom-blinds_main", topic: "position_topic", template: "position_template", .integer(40))
                    try await ha.waitForState("bedroom-blinds_main", .string("open"))
                    try await ha.send("bedroom-blinds_main", "OPEN")
                    try await eventually("the blinds' target position 100") {
                        await gateway.driver.value("bedroom-blinds", .targetPosition) == .int(100)
                    }
                    await gateway.driver.advance(by: .seconds(1))
                    try await ha.waitForState("bedroom-blinds_main", .string("opening"))
                    await gateway.driver.advance(by: .seconds(10))
                    try await ha.waitForState(
                        "bedroom-blinds_main", topic: "position_topic", template: "position_template", .integer(100))

                    // Garage door: OPEN, seen opening and then open.
                    try await ha.send("garage-door_main", "OPEN")
                    try await ha.waitForState("garage-door_main", .string("opening"))
                    await gateway.driver.advance(by: .seconds(10))
                    try await ha.waitForState("garage-door_main", .string("open"))

                    // Fan: on, a percentage, a direction.
                    try await ha.send("bedroom-fan_main", "ON")
                    try await ha.waitForState("bedroom-fan_main", .string("ON"))
                    try await ha.send("bedroom-fan_main", "75", on: "percentage_command_topic")
                    try await ha.waitForState(
                        "bedroom-fan_main", topic: "percentage_state_topic", template: "percentage_value_template",
                        .integer(75)
                    )
                    try await ha.send("bedroom-fan_main", "reverse", on: "direction_command_topic")
                    try await ha.waitForState(
                        "bedroom-fan_main", topic: "direction_state_topic", template: "direction_value_template",
                        .string("reverse"))

                    // Sensors read their values in Home Assistant's units.
                    let humidity = try await ha.state("bath-humidity_main")
                    #expect(humidity?.isNumber == true, "humidity is \(humidity?.serialized ?? "missing")")
                    #expect(
                        try await ha.state("back-door-contact_battery_low") == .string("ON"),
                        "the back door's battery is at 15 %")
                    #expect(try await ha.state("back-door-contact_battery") == .integer(15))

                    // Scene: Good Morning turns the floor lamp on at 70 %.
                    try await ha.send("living-lamp_main", #"{"state":"OFF"}"#)
                    try await eventually("the lamp off") { try await owner.retained("\(lamp)/On") == "false" }
                    let morning = try #require(ha.configs.first { $0.value["name"] == .string("Good Morning") }?.key)
                    try await ha.send(morning, try #require(ha.config(morning)["payload_on"]?.stringValue))
                    try await eventually("the lamp's brightness 70") {
                        try await owner.retained("\(lamp)/Brightness") == "70"
                    }
                    #expect(try await ha.state("living-lamp_main", template: nil)?["state"] == .string("ON"))

                    // Identify button: PRESS.
                    let before = await gateway.driver.identifyCount("living-lamp")
                    try await ha.send("living-lamp_identify", "PRESS")
                    try await eventually("one more identify of the lamp") {
                        await gateway.driver.identifyCount("living-lamp") == before + 1
                    }
                }
            }
        }
    }

    @Test("Home Assistant's commands are checked like anyone's: a refused one changes nothing and is answered")
    func permissionChecked() async throws {
        try await withGateway(homeAssistant: true) { gateway in
            try await withHomeAssistant(port: gateway.broker.port) { ha in
                // An out-of-range brightness is refused with the model's code, on Home Assistant's answer topic.
                let answers = "homegate/$response/homeassistant"
                try await ha.account.client.subscribe(to: [answers])
                try await ha.send("living-lamp_main", #"{"brightness":300}"#)
                let answer = try await ha.account.inbox.next("answer") { $0.topic == answers }
                #expect(try JSON.parse(answer.payload).code == "valueHigherThanMaximum")
                #expect(try await ha.state("living-lamp_main", template: nil)?["brightness"] == .integer(255))
                // Words that mean nothing to a characteristic are refused the same way.
                try await ha.send("front-lock_main", "OPEN")
                let refused = try await ha.account.inbox.next("answer") { $0.topic == answers }
                #expect(try JSON.parse(refused.payload).code == "invalidValueType")
                #expect(try await ha.state("front-lock_main") == .string("LOCKED"))
            }
        }
    }

    @Test("a rename or a move keeps every unique_id and config topic; a removal clears its configs")
    func lifecycle() async throws {
        try await withGateway(homeAssistant: true) { gateway in
            try await withAccount("owner", to: gateway.broker) { owner in
                let before = try await HomeAssistantClient.connect(port: gateway.broker.port)
                await before.disconnect()

                #expect(
                    try await owner.request(
                        "renameAccessory", #"{"home":"Main House","accessory":"Floor Lamp","name":"Reading Lamp"}"#
                    ).isOK)
                #expect(
                    try await owner.request(
                        "assignAccessory", #"{"home":"Main House","accessory":"Reading Lamp","room":"Office"}"#
                    ).isOK)
                try await gateway.waitUntilPublished()
                let renamed = try await HomeAssistantClient.connect(port: gateway.broker.port)
                #expect(renamed.topics == before.topics, "config topics stay where they were")
                #expect(
                    renamed.configs.mapValues { $0["unique_id"] } == before.configs.mapValues { $0["unique_id"] })
                let lamp = try renamed.config("living-lamp_main")
                #expect(lamp["device"]?["name"] == .string("Reading Lamp"))
                #expect(lamp["device"]?["suggested_area"] == .string("Office"))
                #expect(
                    lamp["command_topic"]
                        == .string("homegate/Main House/Office/Reading Lamp/Lightbulb/$ha/set/homeassistant"))
                try await renamed.send("living-lamp_main", #"{"state":"ON"}"#)
                try await renamed.waitForState("living-lamp_main", template: nil) { $0?["state"] == .string("ON") }
                await renamed.disconnect()

                #expect(
                    try await owner.request("removeAccessory", #"{"home":"Main House","accessory":"Counter Lights"}"#)
                        .isOK)
                #expect(
                    try await owner.request("removeActionSet", #"{"home":"Main House","actionSet":"Good Night"}"#).isOK)
                try await gateway.waitUntilPublished()
                try await withHomeAssistant(port: gateway.broker.port) { removed in
                    #expect(
                        removed.configs["kitchen-switch_main"] == nil
                            && removed.configs["kitchen-switch_identify"] == nil)
                    #expect(!removed.configs.values.contains { $0["name"] == .string("Good Night") })
                    #expect(removed.configs.count == before.configs.count - 3)
                }
            }
        }
    }

    @Test("Home Assistant's birth message brings every config and state again")
    func birthMessage() async throws {
        try await withGateway(homeAssistant: true) { gateway in
            try await withHomeAssistant(port: gateway.broker.port) { ha in
                try await ha.account.client.subscribe(to: ["homeassistant/+/homegate/+/config", "homegate/+/+/+/+/$ha"])
                // The subscription's retained copies come first, before the answer to a request sent
                // after it on the same connection: once that is in, so are they; drop them.
                _ = try await ha.account.request("homes")
                while await ha.account.inbox.take() != nil {}

                try await ha.account.client.publish("homeassistant/status", "online", qos: .atLeastOnce)
                try await eventually("every config again after the birth message") {
                    Set(await ha.account.inbox.all.filter { !$0.retain && $0.topic.hasSuffix("/config") }.map(\.topic))
                        == Set(ha.topics.values)
                }
                let states = await ha.account.inbox.all.filter { $0.topic.hasSuffix("/$ha") }
                #expect(!states.isEmpty, "states are republished after the configs")
            }
        }
    }

    @Test("at start, configs of this node that the home no longer has are cleared; other nodes' are left")
    func staleConfigsCleared() async throws {
        let stale = "homeassistant/switch/homegate/gone-accessory_main/config"
        let foreign = "homeassistant/switch/othernode/thing/config"
        try await withGateway(homeAssistant: true) { broker in
            let client = try makeClient(broker, name: "seed")
            try await withConnected(client) { _ in
                try await client.publish(stale, #"{"name":null}"#, qos: .atLeastOnce, retain: true)
                try await client.publish(foreign, #"{"name":"other"}"#, qos: .atLeastOnce, retain: true)
            }
        } _: { gateway in
            try await withHomeAssistant(port: gateway.broker.port) { ha in
                #expect(ha.configs["gone-accessory_main"] == nil)
                #expect(ha.topics["thing"] == foreign, "another node's config is not this gateway's to clear")
                #expect(
                    ha.configs.count == Self.demoEntities.count + 4, "the demo's entities, 3 scenes and the foreign one"
                )
            }
        }
    }

    // MARK: Helpers

    private static func members(_ json: JSON) -> [(key: String, value: JSON)] {
        if case .object(let members) = json { return members }
        return []
    }

    private static func array(_ json: JSON?) -> [JSON] {
        if case .array(let elements)? = json { return elements }
        return []
    }
}

extension JSON {
    var isNumber: Bool {
        switch self {
        case .integer, .number: true
        default: false
        }
    }
}
