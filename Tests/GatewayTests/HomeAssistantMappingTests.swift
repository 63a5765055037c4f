import Foundation
import JSON
import Testing
import VirtualDevices

@testable import Gateway
@testable import HomeModel

/// Home Assistant discovery without a broker: the states in Home Assistant's words, the unit
/// conversions, the words `/set` takes, and what a rename does to the configs.
@Suite("Home Assistant mapping")
struct HomeAssistantMappingTests {
    static let discovery = HomeAssistantDiscovery(
        discoveryPrefix: "homeassistant", nodeID: "hub", account: "homeassistant", topics: Topics(), version: "1.0")

    private static func service(_ type: ServiceType, _ values: [(CharacteristicType, CharacteristicValue)]) -> Service {
        Service(id: "main", type: type, name: type.rawValue, characteristics: values.map { .standard($0.0, $0.1) })
    }

    private static func state(_ type: ServiceType, _ values: [(CharacteristicType, CharacteristicValue)]) -> JSON? {
        HomeAssistantState.state(of: service(type, values))
    }

    @Test(
        "a lock is LOCKING or UNLOCKING while its current state differs from its target, JAMMED when jammed",
        arguments: [
            (1, 1, "LOCKED"), (0, 0, "UNLOCKED"), (0, 1, "LOCKING"), (1, 0, "UNLOCKING"), (2, 1, "JAMMED"),
        ])
    func lock(current: Int, target: Int, expected: String) {
        let state = Self.state(.lockMechanism, [(.lockCurrentState, .int(current)), (.lockTargetState, .int(target))])
        #expect(state?["state"] == .string(expected))
    }

    @Test("HAP's unknown lock state is Home Assistant's unknown (null), not a guess")
    func unknownLock() {
        #expect(
            Self.state(.lockMechanism, [(.lockCurrentState, .int(3)), (.lockTargetState, .int(1))])?["state"] == .null)
    }

    @Test(
        "a covering is opening or closing from its position state, else open or closed from its position",
        arguments: [(1, 40, "opening"), (0, 40, "closing"), (2, 40, "open"), (2, 0, "closed")])
    func covering(positionState: Int, position: Int, expected: String) {
        let state = Self.state(
            .windowCovering,
            [
                (.currentPosition, .int(position)), (.targetPosition, .int(position)),
                (.positionState, .int(positionState)),
            ])
        #expect(state?["state"] == .string(expected))
        #expect(state?["position"] == .integer(position))
    }

    @Test("a thermostat shows its mode by name and what it is doing (idle when on but not running)")
    func climate() {
        let heating = Self.state(
            .thermostat,
            [
                (.targetHeatingCoolingState, .int(1)), (.currentHeatingCoolingState, .int(1)),
                (.targetTemperature, .float(21.5)), (.currentTemperature, .float(19)),
            ])
        #expect(
            heating?.serialized == #"{"mode":"heat","action":"heating","temperature":21.5,"current_temperature":19}"#)
        let idle = Self.state(
            .thermostat, [(.targetHeatingCoolingState, .int(3)), (.currentHeatingCoolingState, .int(0))])
        #expect(idle?["mode"] == .string("auto") && idle?["action"] == .string("idle"))
        let off = Self.state(
            .thermostat, [(.targetHeatingCoolingState, .int(0)), (.currentHeatingCoolingState, .int(0))])
        #expect(off?["action"] == .string("off"))
    }

    @Test("a thermostat's presets are Home Assistant's preset modes (without its own 'none'), null while unknown")
    func climatePresets() throws {
        var service = Self.service(
            .thermostat, [(.targetHeatingCoolingState, .int(1)), (.targetTemperature, .float(20))])
        service.characteristics.append(
            Characteristic(
                type: .preset,
                metadata: CharacteristicMetadata(
                    format: .string, validStrings: ["none", "manual", "eco"], permissions: [.read, .write, .notify]),
                value: nil))
        #expect(HomeAssistantState.state(of: service)?["preset"] == .null)
        service.characteristics[2].value = .string("eco")
        #expect(HomeAssistantState.state(of: service)?["preset"] == .string("eco"))
        var accessory = Accessory(id: "valve", name: "Valve", category: .thermostat, services: [service])
        let room = Room(id: "room", name: HomeName.defaultRoom, isDefault: true)
        accessory.room = room.id
        let home = Home(
            id: "home", name: "Home", isPrimary: true, defaultRoom: room, rooms: [], zones: [],
            accessories: [accessory],
            actionSets: [],
            users: [User(id: "ha", name: "Home Assistant", role: .guest, account: "homeassistant")])
        let configs = Self.discovery.configs(for: home)
        let climate = try #require(configs.first { $0.component == "climate" }?.payload, "\(configs.map(\.topic))")
        #expect(climate["preset_modes"] == .array([.string("manual"), .string("eco")]))
        #expect(climate["preset_mode_value_template"] == .string("{{ value_json.preset }}"))
        #expect(
            climate["preset_mode_command_topic"]?.stringValue?.hasSuffix("/Thermostat/Preset/set/homeassistant") == true
        )
    }

    @Test("a light reports brightness 0–255, colour temperature in kelvin, and its colour mode")
    func lightState() {
        let white = Self.state(
            .lightbulb,
            [
                (.on, .bool(true)), (.brightness, .int(50)), (.hue, .float(30)), (.saturation, .float(0)),
                (.colorTemperature, .int(370)),
            ])
        #expect(
            white?.serialized
                == #"{"state":"ON","brightness":128,"color_mode":"color_temp","color":{"h":30,"s":0},"color_temp":2703}"#
        )
        let coloured = Self.state(
            .lightbulb,
            [(.on, .bool(false)), (.hue, .float(200)), (.saturation, .float(60)), (.colorTemperature, .int(300))])
        #expect(coloured?["color_mode"] == .string("hs") && coloured?["state"] == .string("OFF"))
        #expect(Self.state(.lightbulb, [(.on, .bool(true))])?["color_mode"] == .string("onoff"))
    }

    @Test("contact, leak and battery states use Home Assistant's ON/OFF the right way round")
    func binaryStates() {
        // ContactSensorState 0 means contact: the door is closed, so the opening sensor is OFF.
        #expect(Self.state(.contactSensor, [(.contactSensorState, .int(0))])?["state"] == .string("OFF"))
        #expect(Self.state(.contactSensor, [(.contactSensorState, .int(1))])?["state"] == .string("ON"))
        #expect(Self.state(.leakSensor, [(.leakDetected, .int(1))])?["state"] == .string("ON"))
        let battery = Self.state(
            .battery, [(.batteryLevel, .int(12)), (.statusLowBattery, .int(1)), (.chargingState, .int(1))])
        #expect(battery?.serialized == #"{"level":12,"low":"ON","charging":"ON"}"#)
    }

    @Test("a light command becomes the characteristic writes, converted to HomeKit's units")
    func lightCommand() throws {
        let lamp = Self.service(
            .lightbulb,
            [
                (.on, .bool(false)), (.brightness, .int(0)), (.hue, .float(0)), (.saturation, .float(0)),
                (.colorTemperature, .int(300)),
            ])
        let accessory = Accessory(id: "lamp", name: "Lamp", category: .lightbulb, services: [lamp])
        let writes = try HomeAssistantLightCommand.writes(
            try JSON.parse(#"{"state":"ON","brightness":255,"color":{"h":30.4,"s":79.6},"color_temp":2000}"#),
            to: lamp, of: accessory)
        #expect(
            writes.map { "\($0.target.characteristic.rawValue)=\($0.value.plainText)" } == [
                "On=true", "Brightness=100", "Hue=30", "Saturation=80", "ColorTemperature=500",
            ])
        let warmest = try HomeAssistantLightCommand.writes(
            try JSON.parse(#"{"color_temp":1000}"#), to: lamp, of: accessory)
        #expect(warmest.first?.value == .int(500), "kelvin below the range reaches the warm end, not an error")
        #expect(
            try HomeAssistantLightCommand.writes(try JSON.parse(#"{"brightness":1}"#), to: lamp, of: accessory).first?
                .value
                == .int(0))
    }

    @Test(
        "a malformed light command is refused with the model's code",
        arguments: [
            (#"{"brightness":256}"#, HomeError.Code.valueHigherThanMaximum),
            (#"{"brightness":-1}"#, .valueLowerThanMinimum),
            (#"{"brightness":"high"}"#, .invalidValueType), (#"{"state":"MAYBE"}"#, .invalidValueType),
            (#"{"effect":"rainbow"}"#, .invalidParameter), (#"{}"#, .missingParameter), (#"[1]"#, .invalidParameter),
            (#"{"color":{"h":10}}"#, .missingParameter),
        ])
    func badLightCommand(payload: String, code: HomeError.Code) throws {
        let lamp = Self.service(.lightbulb, [(.on, .bool(false)), (.brightness, .int(0))])
        let accessory = Accessory(id: "lamp", name: "Lamp", category: .lightbulb, services: [lamp])
        #expect {
            try HomeAssistantLightCommand.writes(try JSON.parse(payload), to: lamp, of: accessory)
        } throws: {
            ($0 as? HomeError)?.code == code
        }
    }

    @Test("/set takes Home Assistant's words where a characteristic has them, and says which when not")
    func words() throws {
        func decode(_ text: String, _ type: CharacteristicType) throws -> CharacteristicValue {
            try ValueDecoding.value(
                fromPayload: Array(text.utf8), for: try #require(CharacteristicMetadata.standard(for: type)), type: type
            )
        }
        #expect(try decode("heat", .targetHeatingCoolingState) == .int(1))
        #expect(try decode("OFF", .targetHeatingCoolingState) == .int(0))
        #expect(try decode("LOCK", .lockTargetState) == .int(1))
        #expect(try decode("unlock", .lockTargetState) == .int(0))
        #expect(try decode("OPEN", .targetDoorState) == .int(0))
        #expect(try decode("CLOSE", .targetPosition) == .int(0))
        #expect(try decode("OPEN", .targetPosition) == .int(100))
        #expect(try decode("reverse", .rotationDirection) == .int(1))
        #expect(try decode("ON", .on) == .bool(true))
        #expect(try decode("2", .targetHeatingCoolingState) == .int(2), "numbers still work")
        do {
            _ = try decode("warm", .targetHeatingCoolingState)
            Issue.record("'warm' was taken")
        } catch let error as HomeError {
            #expect(error.code == .invalidValueType)
            #expect(error.message.contains("off, heat, cool, auto"))
        }
        #expect(throws: HomeError.self) { try decode("heat", .brightness) }
    }

    @Test("a rename or a move keeps object ids and unique ids, and changes the device and the topics")
    func renameKeepsIDs() async throws {
        let (manager, home) = try await Self.demo()
        let before = Self.discovery.configs(for: home)
        try await manager.edit(
            .renameAccessory(home: "Main House", accessory: "Floor Lamp", name: "Reading Lamp"), account: "owner")
        try await manager.edit(
            .assignAccessory(home: "Main House", accessory: "Reading Lamp", room: "Office"), account: "owner")
        let after = Self.discovery.configs(for: try await manager.home("Main House", account: "owner"))
        #expect(after.map(\.topic) == before.map(\.topic))
        #expect(after.map(\.uniqueID) == before.map(\.uniqueID))
        let lamp = try #require(after.first { $0.objectID == "living-lamp_main" })
        #expect(lamp.payload["device"]?["name"] == .string("Reading Lamp"))
        #expect(lamp.payload["device"]?["suggested_area"] == .string("Office"))
        #expect(lamp.payload["state_topic"] == .string("homegate/Main House/Office/Reading Lamp/Lightbulb/$ha"))
        await manager.shutdown()
    }

    @Test("a home whose users do not include Home Assistant's account is not announced at all")
    func onlyHomesOfHomeAssistant() async throws {
        let (manager, home) = try await Self.demo()
        #expect(Self.discovery.announces(home))
        #expect(!Self.discovery.configs(for: home).isEmpty)
        try await manager.edit(.removeUser(home: "Main House", user: "Home Assistant"), account: "owner")
        let without = try await manager.home("Main House", account: "owner")
        #expect(!Self.discovery.announces(without))
        #expect(Self.discovery.configs(for: without).isEmpty)
        #expect(without.accessories.allSatisfy { Self.discovery.statePayloads(for: $0, in: without).isEmpty })
        await manager.shutdown()
    }

    @Test("an automation is a switch when Home Assistant's account administers the home, and none for a guest")
    func automationSwitches() async throws {
        // Given an automation in the demo home, and Home Assistant as the owner's account
        let (manager, _) = try await Self.demo()
        try await manager.edit(
            .addTrigger(
                home: "Main House", name: "Bob's Watch",
                characteristic: CharacteristicReference(
                    accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on),
                value: .bool(true), actionSets: ["Good Night"]), account: "owner")
        let home = try await DemoFixture.mainHouse(in: manager)
        let trigger = try #require(home.triggers.first)
        let asOwner = HomeAssistantDiscovery(
            discoveryPrefix: "homeassistant", nodeID: "hub", account: "owner", topics: Topics(), version: "1.0")

        // Then its switch reads `$layout` and sends enableTrigger as that account
        let switches = asOwner.configs(for: home).filter { $0.objectID.contains("_trigger_") }
        let objectID = "\(home.id.rawValue)_trigger_\(trigger.id.rawValue)"
        #expect(switches.map(\.topic) == ["homeassistant/switch/hub/\(objectID)/config"])
        let config = try #require(switches.first).payload
        #expect(config["name"] == .string("Bob's Watch"))
        #expect(config["unique_id"] == .string("hub_\(objectID)"))
        #expect(config["state_topic"] == .string("homegate/Main House/$layout"))
        #expect(
            config["value_template"]
                == .string(
                    #"{{ 'ON' if value_json.triggers | selectattr('name', 'eq', "Bob's Watch") | selectattr('enabled') | list else 'OFF' }}"#
                ))
        #expect(config["command_topic"] == .string("homegate/$request/owner/enableTrigger"))
        #expect(config["device"]?["name"] == .string("Main House"))
        // The state it reads: the automation's entry in $layout, by name, with enabled
        #expect(Rendering.layout(home).serialized.contains(#"{"name":"Bob's Watch","enabled":true,"#))
        // The command Home Assistant renders for OFF is the enableTrigger request that turns it off
        let template = try #require(config["command_template"]?.stringValue)
        let off = template.replacingOccurrences(of: "{{ 'true' if value == 'ON' else 'false' }}", with: "false")
        #expect(
            try Command.Request(operation: "enableTrigger", body: JSON.parse(off))
                == .edit(.enableTrigger(home: "Main House", trigger: "Bob's Watch", enabled: false)))

        // A rename keeps the entity; a guest's discovery (the demo's Home Assistant) has no switch
        try await manager.edit(
            .renameTrigger(home: "Main House", trigger: "Bob's Watch", name: "Lamp Watch"), account: "owner")
        let renamed = asOwner.configs(for: try await DemoFixture.mainHouse(in: manager))
        #expect(renamed.filter { $0.component == "switch" }.map(\.uniqueID).contains("hub_\(objectID)"))
        #expect(Self.discovery.announces(home))
        #expect(!Self.discovery.configs(for: home).contains { $0.objectID.contains("_trigger_") })
        await manager.shutdown()
    }

    @Test("a service no component fits is not announced, and is listed as unmapped")
    func unmappedService() {
        let odd = Service(
            id: "air", type: "AirPurifier", name: "Purifier", characteristics: [.standard(.on, .bool(false))])
        var home = Self.emptyHome()
        home.accessories = [Accessory(id: "purifier", name: "Purifier", category: .other, services: [odd])]
        let configs = Self.discovery.configs(for: home)
        #expect(configs.map(\.objectID) == ["purifier_identify"])
        #expect(Self.discovery.unmappedServices(in: home).map(\.service.id) == ["air"])
    }

    @Test("a plug's power and energy readings are sensors of their own beside its switch")
    func plugMeters() {
        let outlet = Service(
            id: "outlet", type: .outlet, name: "Outlet",
            characteristics: [
                .standard(.on, .bool(true)), .standard(.outletInUse, .bool(true)),
                Characteristic(
                    type: .currentConsumption,
                    metadata: CharacteristicMetadata(format: .float, permissions: [.read, .notify]), value: .float(60.5)
                ),
                Characteristic(
                    type: .totalConsumption,
                    metadata: CharacteristicMetadata(format: .float, permissions: [.read, .notify]), value: .float(1.25)
                ),
            ])
        var home = Self.emptyHome()
        home.accessories = [Accessory(id: "plug", name: "Plug", category: .outlet, services: [outlet])]
        let configs = Self.discovery.configs(for: home)
        let power = configs.first { $0.objectID == "plug_outlet_power" }?.payload
        #expect(power?["device_class"] == .string("power"))
        #expect(power?["unit_of_measurement"] == .string("W"))
        let energy = configs.first { $0.objectID == "plug_outlet_energy" }?.payload
        #expect(energy?["state_class"] == .string("total_increasing"))
        let state = HomeAssistantState.state(of: outlet)
        #expect(state?["power"] == .number(60.5))
        #expect(state?["energy"] == .number(1.25))
    }

    @Test("a button's presses are device triggers on its press topic, one for each press it knows")
    func pressTriggers() throws {
        var metadata = CharacteristicMetadata.standard(for: .programmableSwitchEvent)!
        metadata.validValues = [0, 2]
        let button = Service(
            id: "button_up", type: .statelessProgrammableSwitch, name: "Up",
            characteristics: [Characteristic(type: .programmableSwitchEvent, metadata: metadata, value: nil)])
        var home = Self.emptyHome()
        home.accessories = [Accessory(id: "dimmer", name: "Dimmer", category: .programmableSwitch, services: [button])]
        let triggers = Self.discovery.configs(for: home).filter { $0.component == "device_automation" }
        #expect(triggers.map(\.objectID) == ["dimmer_button_up_press_0", "dimmer_button_up_press_2"])
        let long = try #require(triggers.last?.payload)
        #expect(long["automation_type"] == .string("trigger"))
        #expect(long["type"] == .string("button_long_press"))
        #expect(long["subtype"] == .string("Up"))
        #expect(long["payload"] == .string("2"))
        let topic = try #require(long["topic"]?.stringValue)
        #expect(topic.hasSuffix("/Dimmer/Up/ProgrammableSwitchEvent"), "\(topic)")
        #expect(long["device"]?["identifiers"] == .array([.string("hub_dimmer")]))
        #expect(Self.discovery.unmappedServices(in: home).isEmpty)
    }

    @Test("a press an older gateway stored is neither a retained value topic nor in $state")
    func storedPressNotRetained() {
        let doorbell = Service(
            id: "bell", type: "Doorbell", name: "Doorbell",
            characteristics: [.standard(.programmableSwitchEvent, .int(0))])
        var home = Self.emptyHome()
        let accessory = Accessory(id: "door", name: "Door", category: .other, services: [doorbell])
        home.accessories = [accessory]
        let payloads = RetainedView.accessoryPayloads(accessory, in: home, topics: Topics())
        #expect(!payloads.keys.contains { $0.hasSuffix("/ProgrammableSwitchEvent") }, "\(payloads.keys)")
        let state = RetainedView.statePayloads(of: accessory, in: home, topics: Topics())
        #expect(state.allSatisfy { !String(decoding: $0.payload, as: UTF8.self).contains("ProgrammableSwitchEvent") })
    }

    @Test("object ids keep to Home Assistant's characters; ids that need cleaning stay distinct")
    func objectIDs() {
        #expect(Self.discovery.objectID("living-lamp", "main") == "living-lamp_main")
        let a = Self.discovery.objectID("lamp/1", "main")
        let b = Self.discovery.objectID("lamp 1", "main")
        #expect(a.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        #expect(a.hasPrefix("lamp_1_main_") && a != b)
    }

    @Test("Home Assistant's light command topic is parsed with its account")
    func lightCommandTopic() throws {
        let command = try Topics().parse("homegate/Main House/Living Room/Floor Lamp/Lightbulb/$ha/set/ha")
        #expect(
            command
                == .setHomeAssistant(
                    AccessoryPath(home: "Main House", room: "Living Room", accessory: "Floor Lamp"),
                    service: "Lightbulb",
                    account: "ha"))
    }

    // MARK: Fixtures

    private static func demo() async throws -> (HomeManager, Home) {
        let manager = try await DemoFixture.seeded().manager
        return (manager, try await DemoFixture.mainHouse(in: manager))
    }

    private static func emptyHome() -> Home {
        Home(
            id: "home", name: "Home", isPrimary: true,
            defaultRoom: Room(id: "default", name: "$default", isDefault: true),
            rooms: [], zones: [], accessories: [], actionSets: [],
            users: [User(id: "ha", name: "Home Assistant", role: .guest, account: "homeassistant")])
    }
}

extension HomeAssistantDiscovery {
    /// The discovery configs of one home, as the publisher announces them: its accessories' and its
    /// own (none for a home Home Assistant's account is no user of).
    func configs(for home: Home) -> [DiscoveryConfig] {
        home.accessories.flatMap { accessoryConfigs(for: $0, in: home) } + homeConfigs(for: home)
    }
}

extension DiscoveryConfig {
    /// The levels of the config's topic, `<prefix>/<component>/<node id>/<object id>/config`.
    var component: String { String(topic.split(separator: "/").dropLast(3).last ?? "") }
    var objectID: String { String(topic.split(separator: "/").dropLast().last ?? "") }
    /// The `unique_id` of the config (a device trigger has none: its node id and object id).
    var uniqueID: String {
        payload["unique_id"]?.stringValue
            ?? topic.split(separator: "/").dropLast().suffix(2).joined(separator: "_")
    }
}
