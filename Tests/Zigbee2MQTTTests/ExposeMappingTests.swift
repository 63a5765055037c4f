import Foundation
import HomeModel
import JSON
import Testing

@testable import Zigbee2MQTT

/// The mapping of docs/zigbee2mqtt.md, on zigbee2mqtt's own `bridge/devices` and the recorded exposes
/// of more models (Sources/Zigbee2MQTTStandIn/Recordings), never on invented devices.
struct ExposeMappingTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Zigbee2MQTTStandIn/Recordings").path

    static let devices: [DeviceDescription] = {
        let bytes = Array(FileManager.default.contents(atPath: "\(fixtures)/bridge-devices-z2m-test-startup.wire.txt")!)
        return try! DeviceDescription.list(bytes).entries
    }()

    static func device(_ name: String) -> MappedDevice {
        ExposeMapping.map(devices.first { $0.friendlyName == name }!)
    }

    /// A recorded exposes array (homebridge-z2m's fixtures) wrapped as a bridge/devices entry of
    /// the model it belongs to.
    static func model(
        _ path: String, vendor: String, model: String, description: String = "",
        editing edit: (String) -> String = { $0 }
    ) throws -> MappedDevice {
        let text = try String(contentsOfFile: "\(fixtures)/exposes/homebridge-z2m/\(path)", encoding: .utf8)
        let exposes = try JSON.parse(edit(text))
        let entry = JSON.object([
            ("ieee_address", .string("0x0000000000000001")), ("friendly_name", .string(model)),
            ("type", .string("EndDevice")), ("interview_completed", .bool(true)), ("supported", .bool(true)),
            (
                "definition",
                .object([
                    ("vendor", .string(vendor)), ("model", .string(model)), ("description", .string(description)),
                    ("exposes", exposes),
                ])
            ),
        ])
        return ExposeMapping.map(try DeviceDescription(entry))
    }

    /// The expose of zigbee2mqtt's documentation (docs-examples) in `section`.
    static func documented(_ section: String) throws -> JSON {
        let examples = try JSON.parse(
            String(contentsOfFile: "\(fixtures)/docs-examples/exposes.examples.json", encoding: .utf8))
        guard case .array(let entries) = examples,
            let expose = entries.first(where: { $0["section"]?.stringValue == section })?["expose"]
        else { throw Zigbee2MQTTPayloadError("no \(section) example") }
        return expose
    }

    /// A device of nothing but `exposes`, as a bridge/devices entry would list it.
    static func device(exposing exposes: [JSON], name: String) throws -> MappedDevice {
        let entry = JSON.object([
            ("ieee_address", .string("0x0000000000000009")), ("friendly_name", .string(name)),
            ("interview_completed", .bool(true)), ("definition", .object([("exposes", .array(exposes))])),
        ])
        return ExposeMapping.map(try DeviceDescription(entry))
    }

    static func characteristic(_ mapped: MappedDevice, _ service: String, _ type: CharacteristicType) -> Characteristic?
    {
        mapped.accessory.service(ServiceID(service))?.characteristic(type)
    }

    @Test func everyRecordedDeviceIsReadAndTheCoordinatorIsNoAccessory() {
        #expect(Self.devices.count == 10)
        #expect(Self.devices.filter(\.isAccessory).count == 9)
        #expect(Self.devices.first { $0.type == "Coordinator" }?.isAccessory == false)
    }

    @Test func colourTemperatureBulb() throws {
        let bulb = Self.device("bulb")
        #expect(bulb.accessory.id == "0x000b57fffec6a5b2")
        #expect(bulb.accessory.category == .lightbulb)
        #expect(bulb.accessory.manufacturer == "IKEA" && bulb.accessory.model == "LED1545G12")
        #expect(bulb.accessory.services.map(\.type) == [.lightbulb])
        let on = try #require(Self.characteristic(bulb, "light", .on))
        #expect(on.metadata.permissions == [.read, .write, .notify])
        let brightness = try #require(Self.characteristic(bulb, "light", .brightness))
        #expect(brightness.metadata.maximumValue == 100 && brightness.metadata.unit == .percentage)
        let temperature = try #require(Self.characteristic(bulb, "light", .colorTemperature))
        #expect(temperature.metadata.minimumValue == 250 && temperature.metadata.maximumValue == 454)
        #expect(Self.characteristic(bulb, "light", .hue) == nil)
        #expect(bulb.identify?.property == "identify")
        #expect(
            Set(bulb.accessory.unmappedFeatures).isSuperset(of: [
                "linkquality", "effect", "power_on_behavior", "color_temp_startup",
            ]))
    }

    @Test func brightnessScalesBothWaysAndClampsZigbee2MQTTs255() throws {
        let binding = try #require(Self.device("bulb").bindings(of: "light", .brightness))
        #expect(binding.read(.object([("brightness", .integer(254))])) == .value(.int(100)))
        #expect(binding.read(.object([("brightness", .integer(255))])) == .value(.int(100)))
        #expect(binding.read(.object([("brightness", .integer(50))])) == .value(.int(20)))
        #expect(binding.read(.object([("brightness", .null)])) == .absent)
        #expect(binding.deviceValue(for: .int(80)) == .integer(203))
        for percent in 0...100 {
            guard case .integer(let device)? = binding.deviceValue(for: .int(percent)) else { Issue.record(); continue }
            #expect(binding.read(.object([("brightness", .integer(device))])) == .value(.int(percent)))
        }
    }

    @Test func outOfRangeValuesAreInvalidNotClamped() throws {
        let binding = try #require(Self.device("bulb").bindings(of: "light", .colorTemperature))
        guard case .invalid = binding.read(.object([("color_temp", .integer(548))])) else {
            Issue.record("548 mired is outside 250...454")
            return
        }
        #expect(binding.read(.object([("color_temp", .integer(370))])) == .value(.int(370)))
    }

    @Test func colourBulbHasHueAndSaturationOnTheSharedColorProperty() throws {
        let bulb = Self.device("bulb_color_2")
        let hue = try #require(bulb.bindings(of: "light", .hue))
        #expect(hue.property == "color")
        #expect(hue.conversion == .color(.hue, hasHueSaturation: true))
        let temperature = try #require(Self.characteristic(bulb, "light", .colorTemperature))
        #expect(temperature.metadata.minimumValue == 150 && temperature.metadata.maximumValue == 500)
        let state = try JSON.parse(#"{"color":{"hue":120,"saturation":50},"color_mode":"hs"}"#)
        #expect(hue.read(state) == .value(.float(120)))
    }

    @Test func xyColourConvertsBothWays() {
        for (hue, saturation) in [(0.0, 100.0), (120.0, 100.0), (240.0, 100.0), (30.0, 60.0), (300.0, 80.0)] {
            let xy = ColorSpace.xy(hue: hue, saturation: saturation)
            let back = ColorSpace.hueSaturation(x: xy.x, y: xy.y)
            #expect(abs(back.hue - hue) < 2 || abs(back.hue - hue) > 358, "hue \(hue) → \(xy) → \(back)")
            #expect(abs(back.saturation - saturation) < 3, "saturation \(saturation) → \(xy) → \(back)")
        }
    }

    @Test func endpointsBecomeServicesOfOneAccessory() throws {
        let zigfred = Self.device("zigfred_plus")
        #expect(
            zigfred.accessory.services.map(\.id.rawValue) == [
                "light_l1", "light_l2", "light_l3", "light_l4", "light_l5", "cover_l6", "cover_l7", "button_1",
                "button_2", "button_3", "button_4", "service_label",
            ])
        #expect(
            zigfred.accessory.services.map(\.name) == [
                "Light 1", "Light 2", "Light 3", "Light 4", "Light 5", "Cover 1", "Cover 2", "Button 1",
                "Button 2", "Button 3", "Button 4", "Button Labels",
            ])
        #expect(zigfred.bindings(of: "light_l1", .on)?.property == "state_l1")
        #expect(zigfred.bindings(of: "light_l1", .hue)?.conversion == .color(.hue, hasHueSaturation: false))
        let cover = try #require(zigfred.accessory.service("cover_l6"))
        #expect(cover.type == .windowCovering)
        #expect(
            cover.characteristics.map(\.type) == [
                .currentPosition, .targetPosition, .holdPosition, .currentHorizontalTiltAngle,
                .targetHorizontalTiltAngle, .positionState,
            ])
        #expect(cover.characteristic(.currentPosition)?.metadata.permissions == [.read, .notify])
        #expect(zigfred.bindings(of: "cover_l6", .targetPosition)?.property == "position_l6")
        let tilt = try #require(zigfred.bindings(of: "cover_l6", .targetHorizontalTiltAngle))
        #expect(tilt.deviceValue(for: .int(0)) == .integer(50))
        #expect(tilt.read(.object([("tilt_l6", .integer(100))])) == .value(.int(90)))
        #expect(zigfred.bindings(of: "cover_l6", .holdPosition)?.deviceValue(for: .bool(true)) == .string("STOP"))
    }

    @Test("endpoints' services are named for people: named endpoints before the kind, a kind's only numbered one plain")
    func endpointNames() throws {
        func relay(_ endpoint: String) throws -> JSON {
            try JSON.parse(
                #"{"type":"switch","endpoint":"\#(endpoint)","features":[{"type":"binary","name":"state","#
                    + #""property":"state_\#(endpoint)","access":7,"value_on":"ON","value_off":"OFF"}]}"#)
        }
        let named = try Self.device(exposing: [relay("left"), relay("right"), relay("usb")], name: "wall")
        #expect(named.accessory.services.map(\.name) == ["Left Switch", "Right Switch", "USB Switch"])
        #expect(named.accessory.services.map(\.id.rawValue) == ["switch_left", "switch_right", "switch_usb"])
        // One numbered endpoint of its kind is the kind; beside a plain one, numbering starts at 2
        #expect(try Self.device(exposing: [relay("l2")], name: "one").accessory.services.map(\.name) == ["Switch"])
        let plain = try JSON.parse(
            #"{"type":"switch","features":[{"type":"binary","name":"state","property":"state","access":7,"#
                + #""value_on":"ON","value_off":"OFF"}]}"#)
        let mixed = try Self.device(exposing: [plain, relay("l1"), relay("l2")], name: "mixed")
        #expect(mixed.accessory.services.map(\.name) == ["Switch", "Switch 2", "Switch 3"])
    }

    @Test func sensorsAndBattery() throws {
        let weather = Self.device("weather_sensor")
        #expect(weather.accessory.category == .sensor)
        #expect(
            weather.accessory.services.map(\.type) == [
                .battery, .temperatureSensor, .humiditySensor, .airPressureSensor,
            ])
        let temperature = try #require(weather.bindings(of: "temperature", .currentTemperature))
        #expect(temperature.read(.object([("temperature", .number(-0.85))])) == .value(.float(-0.85)))
        #expect(weather.accessory.unmappedFeatures.contains("voltage"))
    }

    @Test func plugIsAnOutletAndSwitchesAreSwitches() throws {
        #expect(Self.device("power_plug").accessory.services.map(\.type) == [.outlet])
        #expect(Self.device("power_plug").accessory.category == .outlet)
        let relays = try Self.model("tuya/ts0115.json", vendor: "Tuya", model: "TS0115")
        #expect(
            relays.accessory.services.map(\.name) == ["Switch 1", "Switch 2", "Switch 3", "Switch 4", "Switch 5"])
        let plug = try Self.model("tuya/ts011f_plug_1.json", vendor: "Tuya", model: "TS011F_plug_1")
        #expect(plug.accessory.services.map(\.type) == [.outlet])
        #expect(plug.identify?.value == .string("identify"))
    }

    @Test func contactIsInvertedAsZigbee2MQTTDeclaresIt() throws {
        let contact = try Self.model("aqara/mccgq11lm.json", vendor: "Aqara", model: "MCCGQ11LM")
        let binding = try #require(contact.bindings(of: "contact", .contactSensorState))
        // contact true = the magnet is near = closed = HomeKit's 0 (contact detected).
        #expect(binding.read(.object([("contact", .bool(true))])) == .value(.int(0)))
        #expect(binding.read(.object([("contact", .bool(false))])) == .value(.int(1)))
    }

    @Test func occupancyLeakSmokePresenceAndLightLevel() throws {
        let motion = try Self.model("aqara/rtcgq11lm.json", vendor: "Aqara", model: "RTCGQ11LM")
        #expect(motion.accessory.services.map(\.type) == [.battery, .motionSensor, .lightSensor])
        #expect(
            motion.bindings(of: "motion", .motionDetected)?.read(.object([("occupancy", .bool(true))]))
                == .value(.bool(true)))
        let leak = try Self.model("aqara/sjcgq11lm.json", vendor: "Aqara", model: "SJCGQ11LM")
        #expect(
            leak.bindings(of: "leak", .leakDetected)?.read(.object([("water_leak", .bool(true))])) == .value(.int(1)))
        #expect(leak.accessory.service("battery")?.characteristics.map(\.type) == [.batteryLevel, .statusLowBattery])
        let smoke = try Self.model("xiaomi/jtyj-gd-01lm_bw.json", vendor: "Xiaomi", model: "JTYJ-GD-01LM/BW")
        #expect(smoke.accessory.services.map(\.type).contains(.smokeSensor))
        let presence = try Self.model("smartthings/stss-pres-001.json", vendor: "SmartThings", model: "STSS-PRES-001")
        #expect(presence.accessory.services.map(\.type).contains(.occupancySensor))
    }

    @Test func lockMapsTargetAndCurrentState() throws {
        let lock = try Self.model("danalock/v3-btzb_v3-btzbe.json", vendor: "Danalock", model: "V3-BTZB")
        #expect(lock.accessory.category == .doorLock)
        let target = try #require(lock.bindings(of: "lock", .lockTargetState))
        #expect(target.deviceValue(for: .int(1)) == .string("LOCK"))
        #expect(target.read(.object([("state", .string("UNLOCK"))])) == .value(.int(0)))
        let current = try #require(lock.bindings(of: "lock", .lockCurrentState))
        #expect(current.read(.object([("lock_state", .string("not_fully_locked"))])) == .value(.int(2)))
        #expect(lock.accessory.unmappedFeatures.contains("pin_code"))
    }

    @Test func thermostatOffersOnlyTheDevicesModes() throws {
        let valve = try Self.model("immax/07703l.json", vendor: "Immax", model: "07703L")
        let service = try #require(valve.accessory.service("climate"))
        #expect(service.type == .thermostat)
        let target = try #require(service.characteristic(.targetTemperature))
        #expect(
            target.metadata.minimumValue == 5 && target.metadata.maximumValue == 35 && target.metadata.stepValue == 0.5)
        // access 3: published and settable, not gettable.
        #expect(target.metadata.permissions == [.read, .write, .notify])
        #expect(service.characteristic(.targetHeatingCoolingState)?.metadata.validValues == [0, 1, 3])
        let mode = try #require(valve.bindings(of: "climate", .targetHeatingCoolingState))
        #expect(mode.deviceValue(for: .int(3)) == .string("auto"))
        #expect(
            valve.bindings(of: "climate", .currentHeatingCoolingState)?.read(
                .object([("running_state", .string("heat"))])) == .value(.int(1)))
    }

    @Test func tiltOnlyCoverOpensAndClosesByState() throws {
        let blind = try Self.model(
            "current_products_corp/cp180335e-01.json", vendor: "Current Products Corp", model: "CP180335E-01")
        let target = try #require(blind.bindings(of: "cover", .targetPosition))
        #expect(target.deviceValue(for: .int(100)) == .string("OPEN"))
        #expect(target.deviceValue(for: .int(0)) == .string("CLOSE"))
        #expect(blind.accessory.service("cover")?.characteristic(.targetPosition)?.metadata.stepValue == 100)
    }

    @Test func fanFromZigbee2MQTTsDocumentation() throws {
        let mapped = try Self.device(exposing: [try Self.documented("Fan")], name: "fan")
        #expect(mapped.accessory.services.map(\.type) == [.fan])
        #expect(mapped.bindings(of: "fan", .on)?.property == "fan_state")
        #expect(mapped.accessory.unmappedFeatures == ["fan_mode"])
    }

    @Test func malformedDeviceListsAreRefusedOrSkipped() throws {
        #expect(throws: Zigbee2MQTTPayloadError.self) { try DeviceDescription.list(Array("not json".utf8)) }
        #expect(throws: Zigbee2MQTTPayloadError.self) { try DeviceDescription.list(Array("{}".utf8)) }
        let mixed = try DeviceDescription.list(Array(#"[{"ieee_address":"0xzz"},{"friendly_name":"x"},7]"#.utf8))
        #expect(mixed.entries.isEmpty && mixed.problems.count == 3)
    }

    @Test func numbersNoDeviceMeansAreInvalidNotATrap() throws {
        let bulb = Self.device("bulb")
        for state in [#"{"color_temp":1e19}"#, #"{"color_temp":-1e300}"#, #"{"brightness":1e308}"#] {
            let (values, problems) = bulb.values(in: try JSON.parse(state))
            #expect(values.isEmpty && problems.count == 1, "\(state)")
        }
        let zigfred = Self.device("zigfred_plus")
        #expect(zigfred.values(in: try JSON.parse(#"{"position_l6":1e300,"tilt_l6":9e18}"#)).values.isEmpty)
    }

    @Test func rawIlluminanceIsListedNotTakenForMotion() throws {
        let entry = try JSON.parse(
            #"{"ieee_address":"0x0000000000000003","friendly_name":"lux","interview_completed":true,"definition":{"exposes":[{"type":"numeric","name":"illuminance","property":"illuminance","access":1}]}}"#
        )
        let mapped = ExposeMapping.map(try DeviceDescription(entry))
        #expect(mapped.accessory.services.isEmpty)
        #expect(mapped.accessory.unmappedFeatures == ["illuminance"])
    }

    @Test func aCompositeWithoutAccessBitsCanDoWhatItsFeaturesCan() throws {
        let light = try Self.documented("Light")
        // zigbee2mqtt's documented light: color_xy and color_hs without access of their own.
        let expose = try #require(Expose(light))
        #expect(expose.feature("color_xy")?.access == [.published, .settable, .gettable])
        let mapped = try Self.device(exposing: [light], name: "light")
        #expect(
            mapped.accessory.service("light")?.characteristic(.hue)?.metadata.permissions == [.read, .write, .notify])
    }

    @Test func aValveWithAnAwayModeSwitchIsAThermostat() throws {
        let valve = try Self.model("immax/07703l.json", vendor: "Immax", model: "07703L")
        #expect(valve.accessory.category == .thermostat)
        let away = try #require(valve.accessory.services.first { $0.type == .switch })
        #expect(away.name == "Away Mode" && away.id == "switch_away_mode")
        #expect(valve.bindings(of: away.id, .on)?.property == "away_mode")
    }

    @Test func coverMotorStateIsHAPsPositionState() throws {
        let motor = try Self.model("_manual/bosch/bmct-slz.json", vendor: "Bosch", model: "BMCT-SLZ")
        let state = try #require(motor.bindings(of: "cover", .positionState))
        #expect(state.read(.object([("motor_state", .string("closing"))])) == .value(.int(0)))
        #expect(state.read(.object([("motor_state", .string("stopped"))])) == .value(.int(2)))
        #expect(!motor.accessory.unmappedFeatures.contains("motor_state"))
        #expect(motor.bindings(of: "cover", .targetPosition)?.isTarget == true)
        #expect(motor.bindings(of: "cover", .currentPosition)?.isTarget == false)
    }

    @Test func zigbee2MQTTsErrorsNameTheRequestTheyFail() {
        let publish = Zigbee2MQTTDriver.failure(
            in: "Publish 'set' 'brightness' to 'kitchen/ceiling' failed: 'Error: Timeout'")
        #expect(publish?.kind == "set" && publish?.property == "brightness" && publish?.device == "kitchen/ceiling")
        let get = Zigbee2MQTTDriver.failure(in: "Publish 'get' 'state' to 'bulb' failed: 'Error: x'")
        #expect(get?.kind == "get")
        let converter = Zigbee2MQTTDriver.failure(in: "No converter available for 'nonsense' on 'bulb': (1)")
        #expect(converter?.property == "nonsense" && converter?.device == "bulb")
        #expect(Zigbee2MQTTDriver.failure(in: "Zigbee: allowing new devices to join.") == nil)
        #expect(Zigbee2MQTTDriver.failure(in: "Publish '") == nil)
    }

    @Test func friendlyNamesBecomeNamesTheHomeTakes() throws {
        #expect(Self.device("weather_sensor").accessory.name == "weather sensor")
        #expect(Self.device("bulb_color_2").accessory.name == "bulb color 2")
        #expect(ExposeMapping.accessoryName("kitchen/ceiling", ieee: "0x0000000000000001") == "kitchen ceiling")
        #expect(ExposeMapping.accessoryName("__", ieee: "0x00000000000000ab") == "Zigbee 00000000000000ab")
        #expect(ExposeMapping.accessoryName("Détecteur_Mouvement_Bureau", ieee: "0x1") == "Détecteur Mouvement Bureau")
        for device in Self.devices {
            #expect(throws: Never.self) { try HomeName.validate(ExposeMapping.map(device).accessory.name) }
        }
    }

    /// zigbee2mqtt's recorded `action` exposes: each button a StatelessProgrammableSwitch whose
    /// ProgrammableSwitchEvent a press sets; releases and other buttons' presses leave it alone.
    @Test func buttonsFromActions() throws {
        // Aqara WXKG11LM: single, double, triple, quadruple, hold, release
        let button = Self.device("button")
        #expect(button.accessory.category == .programmableSwitch)
        let switches = button.accessory.services.filter { $0.type == .statelessProgrammableSwitch }
        #expect(switches.map(\.name) == ["Button", "Triple"])
        #expect(!button.accessory.unmappedFeatures.contains("action"))
        let press = try #require(button.bindings(of: "button", .programmableSwitchEvent))
        #expect(press.metadata.validValues == [0, 1, 2])
        #expect(press.metadata.permissions == [.read, .notify])
        for (action, event) in [("single", 0), ("double", 1), ("hold", 2)] {
            #expect(press.read(.object([("action", .string(action))])) == .value(.int(event)))
        }
        for other in ["release", "triple", ""] {
            #expect(press.read(.object([("action", .string(other))])) == .absent, "\(other)")
        }
        #expect(press.read(.object([("action", .integer(1))])) == .invalid("action is not a string"))
        let triple = try #require(button.bindings(of: "button_triple", .programmableSwitchEvent))
        #expect(triple.read(.object([("action", .string("quadruple"))])) == .value(.int(1)))
        #expect(triple.metadata.validValues == [0, 1])

        // Philips Hue dimmer 324131092621: on_press, on_hold, on_press_release, ... for four buttons
        let remote = Self.device("remote")
        #expect(
            remote.accessory.services.filter { $0.type == .statelessProgrammableSwitch }.map(\.name)
                == ["On", "Up", "Down", "Off"])
        let up = try #require(remote.bindings(of: "button_up", .programmableSwitchEvent))
        #expect(up.read(.object([("action", .string("up_hold"))])) == .value(.int(2)))
        #expect(up.read(.object([("action", .string("up_hold_release"))])) == .absent)
        #expect(up.metadata.validValues == [0, 2])

        // zigfred plus: button_1_single ... button_4_release, beside its lights and covers
        let zigfred = Self.device("zigfred_plus")
        #expect(zigfred.accessory.category == .windowCovering)
        #expect(
            zigfred.accessory.services.filter { $0.type == .statelessProgrammableSwitch }.map(\.name)
                == ["Button 1", "Button 2", "Button 3", "Button 4"])
        #expect(
            zigfred.bindings(of: "button_3", .programmableSwitchEvent)?.read(
                .object([("action", .string("button_3_double"))])) == .value(.int(1)))
    }

    /// The buttons' numbers for Apple Home: ServiceLabelIndex on each button of a device with several,
    /// in the order of its services, and one ServiceLabel saying they are numbers (issue 50).
    @Test(
        "several buttons carry ServiceLabelIndex 1, 2, ... and the accessory a ServiceLabel of numbers; one button none"
    )
    func buttonsAreLabelled() throws {
        func labels(_ mapped: MappedDevice) -> (indexes: [CharacteristicValue?], namespace: CharacteristicValue?) {
            let buttons = mapped.accessory.services.filter { $0.type == .statelessProgrammableSwitch }
            let label = mapped.accessory.services.first { $0.type == .serviceLabel }
            return (
                buttons.map { $0.characteristic(.serviceLabelIndex)?.value },
                label?.characteristic(.serviceLabelNamespace)?.value
            )
        }
        // The MiJia wireless switch WXKG01LM of a real network (zigbee2mqtt-frontend's onConnect
        // capture, zigbee2mqtt 1.22.1): Button, Triple and Many
        let mijia = try Self.device(
            exposing: [
                try JSON.parse(
                    #"{"access": 1, "name": "action", "property": "action", "type": "enum", "values": ["single", "double", "triple", "quadruple", "hold", "release", "many"]}"#
                )
            ], name: "MI button")
        #expect(
            mijia.accessory.services.map(\.name) == ["Button", "Triple", "Many", "Button Labels"])
        #expect(labels(mijia).indexes == [.int(1), .int(2), .int(3)])
        #expect(labels(mijia).namespace == .int(1))
        let index = try #require(mijia.accessory.services.first?.characteristic(.serviceLabelIndex))
        #expect(index.metadata.permissions == [.read] && index.metadata.format == .uint8)
        #expect(mijia.accessory.category == .programmableSwitch)
        // No binding reads or writes them: they are the mapping's, not the device's
        #expect(!mijia.bindings.contains { [.serviceLabelIndex, .serviceLabelNamespace].contains($0.characteristic) })

        #expect(labels(Self.device("remote")).indexes == [.int(1), .int(2), .int(3), .int(4)])
        #expect(labels(Self.device("button")).indexes == [.int(1), .int(2)])
        // A device with one button has nothing to order
        let single = try Self.device(
            exposing: [
                try JSON.parse(
                    #"{"access": 1, "name": "action", "property": "action", "type": "enum", "values": ["single"]}"#)
            ], name: "Doorbell")
        #expect(labels(single).indexes == [nil])
        #expect(labels(single).namespace == nil)
    }

    /// Aqara's vibration sensor DJT11LM as a real network publishes it (zigbee2mqtt-frontend's
    /// onConnect capture, zigbee2mqtt 1.25.0-dev, `work/nur/jopa`): a binary `vibration` beside the
    /// `action` vibration/tilt/drop.
    @Test("a vibration sensor is a sensor (MotionSensor) and keeps its presses as buttons")
    func vibrationSensor() throws {
        let exposes = try JSON.parse(
            #"""
            [{"access": 1, "name": "battery", "property": "battery", "type": "numeric", "unit": "%", "value_max": 100, "value_min": 0},
             {"access": 1, "name": "vibration", "property": "vibration", "type": "binary", "value_off": false, "value_on": true},
             {"access": 1, "name": "action", "property": "action", "type": "enum", "values": ["vibration", "tilt", "drop"]},
             {"access": 1, "name": "strength", "property": "strength", "type": "numeric"},
             {"access": 3, "name": "sensitivity", "property": "sensitivity", "type": "enum", "values": ["low", "medium", "high"]},
             {"access": 1, "name": "angle_x", "property": "angle_x", "type": "numeric", "unit": "°", "value_max": 90, "value_min": -90},
             {"access": 1, "name": "voltage", "property": "voltage", "type": "numeric", "unit": "mV"},
             {"access": 1, "name": "linkquality", "property": "linkquality", "type": "numeric", "unit": "lqi", "value_max": 255, "value_min": 0}]
            """#)
        guard case .array(let entries) = exposes else { throw Zigbee2MQTTPayloadError("not an array") }
        let sensor = try Self.device(exposing: entries, name: "work/nur/jopa")
        #expect(sensor.accessory.category == .sensor)
        let vibration = try #require(sensor.accessory.services.first { $0.type == .motionSensor })
        #expect(vibration.name == "Vibration Sensor")
        let detected = try #require(sensor.bindings(of: vibration.id, .motionDetected))
        #expect(detected.property == "vibration")
        #expect(detected.metadata.permissions == [.read, .notify])
        #expect(!sensor.accessory.unmappedFeatures.contains("vibration"))
        // The state the same network recorded for it (states.jsonl) says it vibrates
        let (values, problems) = sensor.values(
            in: try JSON.parse(#"{"angle_x": -6, "battery": 100, "strength": 30, "vibration": true}"#))
        #expect(problems.isEmpty)
        #expect(values.contains { $0.characteristic == .motionDetected && $0.value == .bool(true) })
        // And the presses stay, numbered for Apple Home
        #expect(
            sensor.accessory.services.filter { $0.type == .statelessProgrammableSwitch }.map(\.name)
                == ["Vibration", "Tilt", "Drop"])
        #expect(sensor.accessory.services.contains { $0.type == .serviceLabel })
        let tilt = try #require(sensor.bindings(of: "button_tilt", .programmableSwitchEvent))
        #expect(tilt.read(.object([("action", .string("tilt"))])) == .value(.int(0)))
    }

    /// The TuYa radiator valves of a real network (TS0601_thermostat, zigbee2mqtt-frontend's onConnect
    /// capture, zigbee2mqtt 1.22.1) offer their child lock as a `lock` expose: `state` on the property
    /// `child_lock`, LOCK/UNLOCK, and no `lock_state`.
    @Test(
        "a child lock offered as a lock expose is LockPhysicalControls, not a door lock; a lock with lock_state stays a lock"
    )
    func childLockAsALockExpose() throws {
        let tuyaLock = #"""
            {"type": "lock", "features": [{"access": 3, "description": "Enables/disables physical input on the device", "name": "state", "property": "child_lock", "type": "binary", "value_off": "UNLOCK", "value_on": "LOCK"}]}
            """#
        // The Immax valve's recorded exposes with its binary child lock given as the TuYa valves give it
        let valve = try Self.model(
            "immax/07703l.json", vendor: "TuYa", model: "TS0601_thermostat",
            editing: { text in
                let start = text.range(of: #"  {\#n    "name": "child_lock""#)!.lowerBound
                let end = text.index(after: text.range(of: "},", range: start..<text.endIndex)!.lowerBound)
                return text.replacingCharacters(in: start..<end, with: tuyaLock)
            })
        #expect(!valve.accessory.services.contains { $0.type == .lockMechanism })
        #expect(valve.accessory.category == .thermostat)
        let childLock = try #require(valve.bindings(of: "climate", .lockPhysicalControls))
        #expect(childLock.property == "child_lock")
        #expect(childLock.metadata.permissions.contains(.write))
        // The valve's recorded state (states.jsonl: "child_lock": "LOCK") and a write back
        #expect(childLock.read(.object([("child_lock", .string("LOCK"))])) == .value(.int(1)))
        #expect(childLock.deviceValue(for: .int(0)) == .string("UNLOCK"))
        #expect(!valve.accessory.unmappedFeatures.contains { $0.contains("child") || $0 == "state" })

        // A door lock with lock_state (Danalock V3) is still a lock
        let door = try Self.model("danalock/v3-btzb_v3-btzbe.json", vendor: "Danalock", model: "V3-BTZB")
        #expect(door.accessory.category == .doorLock)
        #expect(door.accessory.services.contains { $0.type == .lockMechanism })
    }

    /// Recorded exposes of a smoke detector, a gas detector, a plug, a radiator valve and a cover:
    /// tamper, power, energy and child lock join the service they belong to.
    @Test func tamperPowerAndChildLock() throws {
        let smoke = try Self.model("xiaomi/jtyj-gd-01lm_bw.json", vendor: "Xiaomi", model: "JTYJ-GD-01LM/BW")
        let tampered = try #require(smoke.bindings(of: "smoke", .statusTampered))
        #expect(tampered.read(.object([("tamper", .bool(true))])) == .value(.int(1)))
        #expect(tampered.metadata.permissions == [.read, .notify])
        #expect(!smoke.accessory.unmappedFeatures.contains("tamper"))
        // A gas and CO detector: no sensor service of ours to carry it, so it is listed
        let gas = try Self.model("oujiabao/cr701-yz.json", vendor: "Oujiabao", model: "CR701-YZ")
        #expect(gas.accessory.unmappedFeatures.contains("tamper"))

        let plug = try Self.model("tuya/ts011f_plug_1.json", vendor: "TuYa", model: "TS011F_plug_1")
        let outlet = try #require(plug.accessory.service("outlet"))
        #expect(
            outlet.characteristics.map(\.type) == [
                .on, .outletInUse, .currentConsumption, .totalConsumption, .lockPhysicalControls,
            ])
        let inUse = try #require(plug.bindings(of: "outlet", .outletInUse))
        #expect(inUse.read(.object([("power", .integer(60))])) == .value(.bool(true)))
        #expect(inUse.read(.object([("power", .number(0.4))])) == .value(.bool(false)))
        #expect(
            plug.bindings(of: "outlet", .currentConsumption)?.read(.object([("power", .number(60.5))]))
                == .value(.float(60.5)))
        #expect(
            plug.bindings(of: "outlet", .totalConsumption)?.read(.object([("energy", .number(1.25))]))
                == .value(.float(1.25)))
        let childLock = try #require(plug.bindings(of: "outlet", .lockPhysicalControls))
        #expect(childLock.metadata.permissions.contains(.write))
        #expect(childLock.read(.object([("child_lock", .string("LOCK"))])) == .value(.int(1)))
        #expect(childLock.deviceValue(for: .int(0)) == .string("UNLOCK"))
        for mapped in ["power", "energy", "child_lock"] { #expect(!plug.accessory.unmappedFeatures.contains(mapped)) }

        let valve = try Self.model("immax/07703l.json", vendor: "Immax", model: "07703L")
        #expect(valve.bindings(of: "climate", .lockPhysicalControls)?.property == "child_lock")
        let cover = try Self.model("_manual/bosch/bmct-slz.json", vendor: "Bosch", model: "BMCT-SLZ")
        #expect(cover.bindings(of: "cover", .lockPhysicalControls)?.property == "child_lock")
    }

    /// A thermostat has the two characteristics HomeKit requires: what it is doing (derived from
    /// its mode and temperatures where it has no `running_state`) and its display unit.
    @Test func thermostatStateAndUnits() throws {
        let valve = try Self.model("immax/07703l.json", vendor: "Immax", model: "07703L")
        let units = try #require(valve.accessory.service("climate")?.characteristic(.temperatureDisplayUnits))
        #expect(units.value == .int(0))
        #expect(units.metadata.permissions == [.read])
        #expect(valve.bindings(of: "climate", .currentHeatingCoolingState)?.property == "running_state")

        // The Immax valve's recorded exposes without its running_state, as the TuYa valves of a
        // real network (zigbee2mqtt-frontend's onConnect capture) publish none
        let derivedValve = try Self.model(
            "immax/07703l.json", vendor: "Immax", model: "07703L",
            editing: { $0.replacingOccurrences(of: #""name": "running_state""#, with: #""name": "x""#) })
        let derived = try #require(derivedValve.bindings(of: "climate", .currentHeatingCoolingState))
        #expect(derived.metadata.validValues == [0, 1])
        let recorded = try String(contentsOfFile: "\(Self.fixtures)/states.jsonl", encoding: .utf8)
            .split(separator: "\n").compactMap { try? JSON.parse(String($0)) }
            .filter { $0["device"]?.stringValue?.hasSuffix("valve with thermostat") == true }
            .compactMap { $0["payload"] }
        #expect(recorded.count >= 4)
        for state in recorded {
            guard let temperature = state["local_temperature"]?.numberValue,
                let setpoint = state["current_heating_setpoint"]?.numberValue
            else { continue }
            // auto on a valve: heating below the setpoint, idle at or above it (it cannot cool); off: off
            let heating = state["system_mode"] == .string("auto") && temperature < setpoint
            #expect(derived.read(state) == .value(.int(heating ? 1 : 0)), "\(state.serialized)")
        }
    }

    /// A thermostat's `preset` (zigbee2mqtt's documented climate expose: `hold`, `program`) is the
    /// string characteristic Preset with the device's own words as its only values.
    @Test func preset() throws {
        let mapped = try Self.device(exposing: [try Self.documented("Climate")], name: "thermostat")
        let preset = try #require(mapped.accessory.service("climate")?.characteristic(.preset))
        #expect(preset.metadata.format == .string)
        #expect(preset.metadata.validStrings == ["hold", "program"])
        #expect(preset.metadata.permissions == [.read, .write, .notify])
        #expect(!mapped.accessory.unmappedFeatures.contains("preset"))
        let binding = try #require(mapped.bindings(of: "climate", .preset))
        #expect(binding.read(try JSON.parse(#"{"preset":"program"}"#)) == .value(.string("program")))
        guard case .invalid = binding.read(try JSON.parse(#"{"preset":"eco"}"#)) else {
            Issue.record("a preset the device does not list is not a value")
            return
        }
        #expect(binding.deviceValue(for: .string("hold")) == .string("hold"))
        // The model takes any case and keeps the device's spelling; it refuses another word
        #expect(try preset.metadata.validate(.string("PROGRAM")) == .string("program"))
        #expect(throws: HomeError.self) { try preset.metadata.validate(.string("eco")) }
    }

    /// A cover without `motor_state` (the zigfred's) still has the PositionState HomeKit requires:
    /// stopped until it is sent somewhere, then opening or closing until it gets there.
    @Test func positionStateWithoutMotorState() throws {
        let zigfred = Self.device("zigfred_plus")
        let state = try #require(zigfred.accessory.service("cover_l6")?.characteristic(.positionState))
        #expect(state.value == .int(2))
        #expect(state.metadata.permissions == [.read, .notify])
        #expect(zigfred.bindings(of: "cover_l6", .positionState) == nil)
        #expect(Zigbee2MQTTDriver.positionState(current: 20, target: 80) == 1)
        #expect(Zigbee2MQTTDriver.positionState(current: 80, target: 20) == 0)
        #expect(Zigbee2MQTTDriver.positionState(current: 80, target: 80) == 2)
        #expect(Zigbee2MQTTDriver.positionState(current: 80, target: nil) == 2)
        #expect(Zigbee2MQTTDriver.positionState(current: nil, target: 80) == 2)
    }

    /// The derivation's arithmetic for a device that heats and cools with a setpoint for each.
    @Test func heatingCoolingWithTwoSetpoints() {
        let derived = Binding(
            service: "climate", characteristic: .currentHeatingCoolingState,
            metadata: CharacteristicMetadata.standard(for: .currentHeatingCoolingState)!, property: "local_temperature",
            conversion: .heatingCooling(
                mode: "system_mode", setpoint: "occupied_heating_setpoint",
                coolingSetpoint: "occupied_cooling_setpoint", canCool: true),
            isPublished: true, isGettable: false, isTarget: false)
        func state(_ temperature: Double, _ mode: String) -> JSON {
            .object([
                ("local_temperature", .number(temperature)), ("occupied_heating_setpoint", .number(20)),
                ("occupied_cooling_setpoint", .number(26)), ("system_mode", .string(mode)),
            ])
        }
        #expect(derived.read(state(23, "auto")) == .value(.int(0)))
        #expect(derived.read(state(19, "auto")) == .value(.int(1)))
        #expect(derived.read(state(27, "auto")) == .value(.int(2)))
        #expect(derived.read(state(27, "heat")) == .value(.int(0)))
        #expect(derived.read(state(19, "cool")) == .value(.int(0)))
        #expect(derived.read(state(27, "off")) == .value(.int(0)))
    }

    /// Values without a press word are buttons of their own; a wildcard names no value.
    @Test func buttonLayout() {
        let dimmer = ButtonLayout(actions: ["on", "off", "brightness_move_up", "brightness_stop"])
        #expect(dimmer.buttons.map(\.key) == ["on", "off", "brightness_move_up", "brightness_stop"])
        #expect(dimmer.buttons.allSatisfy { $0.presses.values.elementsEqual([0]) })
        let twoKeys = ButtonLayout(
            actions: ["single_left", "double_left", "hold_left", "single_right", "single_both", "release_left"])
        #expect(twoKeys.buttons.map(\.key) == ["left", "right", "both"])
        #expect(twoKeys.buttons[0].presses == ["single_left": 0, "double_left": 1, "hold_left": 2])
        // `on` after `on_press`: the On button has its single press already, so `on` is listed
        let onTwice = ButtonLayout(actions: ["on_press", "on"])
        #expect(onTwice.buttons.map(\.key) == ["on"])
        #expect(onTwice.unusable == ["on"])
        let sameTwice = ButtonLayout(actions: ["press", "single", "scene_*"])
        #expect(sameTwice.buttons.map(\.key) == ["", "single"])
        #expect(sameTwice.unusable == ["scene_*"])
    }

    @Test func availabilityInBothForms() {
        #expect(Zigbee2MQTTDriver.onlineState(Array(#"{"state":"online"}"#.utf8)) == true)
        #expect(Zigbee2MQTTDriver.onlineState(Array("offline".utf8)) == false)
        #expect(Zigbee2MQTTDriver.onlineState(Array("maybe".utf8)) == nil)
        #expect(Zigbee2MQTTDriver.onlineState([]) == nil)
    }

    /// Every availability payload in the captures (1.x text, 2.x JSON, `{"state":"Offline"}` from
    /// zigbee2mqtt-frontend's recorded websocket messages) says online or offline.
    @Test func recordedAvailability() throws {
        var count = 0
        for line in try String(contentsOfFile: "\(Self.fixtures)/states.jsonl", encoding: .utf8).split(separator: "\n")
        {
            let record = try JSON.parse(String(line))
            guard record["kind"]?.stringValue == "availability" else { continue }
            let payload: String
            switch record["payload"] {
            case .string(let text): payload = text
            case let json?: payload = json.serialized
            case nil: continue
            }
            guard !payload.isEmpty else { continue }  // a cleared retained topic
            count += 1
            let expected = payload.lowercased().contains("online")
            #expect(Zigbee2MQTTDriver.onlineState(Array(payload.utf8)) == expected, "\(payload)")
        }
        #expect(count > 30)
    }
}
