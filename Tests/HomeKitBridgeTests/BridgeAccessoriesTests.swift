import HAPModel
import HomeModel
import JSON
import Testing

@testable import HomeKitBridge

struct BridgeAccessoriesTests {
    static let bridge = BridgeIdentity(name: "Main House", deviceID: "AA:BB:CC:DD:EE:FF", firmware: "1.0")

    static func lamp(_ number: Int, on: Bool = false) -> Accessory {
        Accessory(
            id: AccessoryID("lamp-\(number)"), name: "Lamp \(number)", category: .lightbulb,
            services: [
                Service(
                    id: "light", type: .lightbulb, name: "Light",
                    characteristics: [.standard(.on, .bool(on)), .standard(.brightness, .int(40))])
            ])
    }

    @Test("the information service is iid 1 with its characteristics next; values are no part of the structure")
    func numbersAndStructure() throws {
        var numbering = BridgeNumbering()
        let served = BridgeAccessories(accessories: [Self.lamp(1)], bridge: Self.bridge, numbering: &numbering)
        let lamp = try #require(served.aid(of: "lamp-1"))
        #expect(lamp == 2)
        let information = served.entries.filter {
            $0.key.aid == lamp && $0.value.serviceName == "Accessory Information"
        }
        #expect(Set(information.keys.map(\.iid)) == Set(2...7), "Identify, Manufacturer, Model, Name, Serial, Firmware")
        #expect(information.values.contains { $0.hapType == "23" && $0.source == .fixed(.string("Lamp 1")) })
        let on = try #require(served.addresses[ValueKey(accessory: "lamp-1", service: "light", characteristic: .on)])
        #expect(on.aid == lamp && on.iid >= 16)
        #expect(served.entries[on]?.permissions == ["pr", "ev", "pw"])
        // The structure hashes the same whatever the values: c# moves for structure only
        var again = BridgeNumbering()
        let switchedOn = BridgeAccessories(
            accessories: [Self.lamp(1, on: true)], bridge: Self.bridge, numbering: &again)
        #expect(switchedOn.structure == served.structure)
        let json = try JSON.parse(served.json { _, _ in .bool(true) }.bytes)
        #expect(json["accessories"]?.arrayValue?.count == 2, "the bridge (aid 1) and the lamp")
    }

    @Test("over HAP's 150, the accessories numbered first are served and the others named with the limit")
    func accessoryLimit() {
        var numbering = BridgeNumbering()
        let served = BridgeAccessories(
            accessories: (1...151).map { Self.lamp($0) }, bridge: Self.bridge, numbering: &numbering)
        #expect(served.aid(of: "lamp-149") == 150)
        #expect(served.aid(of: "lamp-150") == nil && served.aid(of: "lamp-151") == nil)
        #expect(served.leftOut.count == 2)
        #expect(served.leftOut.allSatisfy { $0.contains("at most 149") }, "\(served.leftOut)")
    }

    @Test("what HAP would refuse is left out with a reason; the rest of the accessory is served; bridges are not")
    func leftOut() throws {
        var preset = CharacteristicMetadata(format: .string, permissions: [.read, .write])
        preset.validStrings = ["manual", "eco"]
        var inverted = try #require(CharacteristicMetadata.standard(for: .brightness))
        (inverted.minimumValue, inverted.maximumValue) = (100, 0)
        let valve = Accessory(
            id: "valve", name: "Valve", category: .thermostat,
            services: [
                Service(
                    id: "thermostat", type: .thermostat, name: "Thermostat",
                    characteristics: [
                        .standard(.currentTemperature, .float(20)),
                        Characteristic(type: .preset, metadata: preset, value: .string("eco")),
                        Characteristic(type: "Unheard", metadata: preset, value: nil),
                        Characteristic(type: .name, metadata: preset, value: .string("eco")),
                    ]),
                Service(
                    id: "odd", type: .lightbulb, name: "Odd",
                    characteristics: [Characteristic(type: .brightness, metadata: inverted, value: nil)]),
            ])
        let hub = Accessory(id: "hub", name: "Hub", category: .bridge, bridgedAccessories: ["valve"], services: [])
        var numbering = BridgeNumbering()
        let served = BridgeAccessories(accessories: [hub, valve], bridge: Self.bridge, numbering: &numbering)
        #expect(served.aid(of: "hub") == nil && served.aid(of: "valve") == 2)
        #expect(
            served.addresses[ValueKey(accessory: "valve", service: "thermostat", characteristic: .currentTemperature)]
                != nil)
        #expect(served.leftOut.contains { $0.contains("Preset") && $0.contains("no characteristic type") })
        #expect(served.leftOut.contains { $0.contains("Unheard") && $0.contains("no characteristic type") })
        #expect(served.leftOut.contains { $0.contains("Name") && $0.contains("valid strings") })
        #expect(served.leftOut.contains { $0.contains("Brightness") && $0.contains("above its maximum") })
        #expect(served.addresses[ValueKey(accessory: "valve", service: "odd", characteristic: .brightness)] == nil)
    }
}
