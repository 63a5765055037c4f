import Foundation
import HomeModel
import Testing
import VirtualDevices

@Suite("The demo home")
struct DemoHomeTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config/demo-home.yml")

    @Test("The demo file declares one of every virtual device, and a bridge with accessories behind it")
    func devices() throws {
        let demo = try DemoHome.load(contentsOf: Self.file)
        let all = demo.devices + demo.devices.flatMap(\.bridged)
        #expect(Set(all.map(\.kind)) == Set(VirtualDeviceKind.allCases))
        #expect(demo.devices.contains { $0.kind == .bridge && $0.bridged.count >= 2 })
        #expect(all.contains { $0.battery != nil })
    }

    @Test("Seeding builds two homes with rooms, zones, the bridge, action sets, an administrator and a guest")
    func seed() async throws {
        // Given the demo devices attached to an empty manager
        let demo = try DemoHome.load(contentsOf: Self.file)
        let manager = try HomeManager(database: .inMemory())
        try await manager.attach(VirtualDriver(devices: demo.devices))
        // When the demo is seeded
        #expect(try await demo.seed(manager))
        // Then both homes exist with their layout
        let homes = await manager.allHomes()
        #expect(homes.map(\.name) == ["Main House", "Lake Cabin"])
        #expect(homes.map(\.isPrimary) == [true, false])
        let main = homes[0]
        #expect(main.rooms.count == 7)
        #expect(main.zones.map(\.name) == ["Downstairs", "Upstairs"])
        #expect(main.users.map(\.role) == [.administrator, .guest, .guest])
        #expect(main.actionSets.map(\.name) == ["Good Night", "Good Morning"])
        #expect(main.actionSets[0].actions.count == 5)
        // And the bridge is in the Office while one bridged light was moved to the Hallway
        let office = try #require(main.rooms.first { $0.name == "Office" })
        let hallway = try #require(main.rooms.first { $0.name == "Hallway" })
        #expect(main.accessory("hue-bridge")?.room == office.id)
        #expect(main.accessory("hue-desk")?.room == office.id)
        #expect(main.accessory("hue-stairs")?.room == hallway.id)
        #expect(main.accessory("porch-motion")?.room == main.defaultRoom.id)
        // And the demo accounts see what the README says: owner and homeassistant both homes,
        // guest only the main house, stranger nothing
        #expect(await manager.homes(for: "owner").map(\.name) == ["Main House", "Lake Cabin"])
        #expect(await manager.homes(for: "owner").map(\.role) == [.administrator, .administrator])
        #expect(await manager.homes(for: "homeassistant").map(\.name) == ["Main House", "Lake Cabin"])
        #expect(await manager.homes(for: "homeassistant").map(\.role) == [.guest, .guest])
        #expect(await manager.homes(for: "guest").map(\.name) == ["Main House"])
        #expect(await manager.homes(for: "stranger").isEmpty)
        #expect(await manager.discoveredAccessories().isEmpty)
        // And seeding again does nothing
        #expect(try await demo.seed(manager) == false)
    }

    @Test("A demo action set runs against the virtual devices")
    func runGoodMorning() async throws {
        let demo = try DemoHome.load(contentsOf: Self.file)
        // Not a test of timeouts: in a whole-suite run beside two busy processes the 0.2 s coffee
        // maker once missed the default 10 s.
        let manager = try HomeManager(database: .inMemory(), driverTimeout: .seconds(60))
        let driver = VirtualDriver(devices: demo.devices)
        try await manager.attach(driver)
        try await demo.seed(manager)
        let results = try await manager.executeActionSet("Good Morning", home: "Main House", account: "guest")
        #expect(results.allSatisfy { $0.succeeded }, "\(results.filter { !$0.succeeded })")
        #expect(await driver.value("living-lamp", .brightness) == .int(70))
        #expect(await driver.value("hall-thermostat", .targetTemperature) == .float(21.5))
    }

    @Test("Malformed YAML is refused")
    func malformed() {
        #expect(throws: (any Error).self) {
            try DemoHome.parse("devices: [{ id: x, kind: toaster, name: X }]\nhomes: []")
        }
        #expect(throws: (any Error).self) {
            try DemoHome.parse("devices: [{ id: x, kind: switch, name: X, failureRate: 2 }]\nhomes: []")
        }
        for duration in ["writeDelay: 1e30", "transitionTime: 3601", "writeDelay: -0.5", "transitionTime: .inf"] {
            #expect(throws: DecodingError.self, "\(duration)") {
                try DemoHome.parse("devices: [{ id: x, kind: switch, name: X, \(duration) }]\nhomes: []")
            }
        }
        #expect(throws: Never.self) {
            try DemoHome.parse(
                "devices: [{ id: x, kind: switch, name: X, writeDelay: 3600, transitionTime: 0 }]\nhomes: []")
        }
    }
}
