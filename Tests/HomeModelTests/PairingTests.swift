import Foundation
import HomeModel
import Synchronization
import TestSupport
import Testing

@Suite("Pairing accessories")
struct PairingTests {
    private func manager() async throws -> (HomeManager, ScriptedPairingDriver) {
        let manager = try HomeManager(database: .inMemory())
        let driver = ScriptedPairingDriver()
        try await manager.attach(driver)
        try await manager.edit(.addHome(name: "Home", userName: "Alice"), account: "alice")
        try await manager.edit(.addUser(home: "Home", account: "bob", name: "Bob"), account: "alice")
        try await manager.edit(.addRoom(home: "Home", name: "Hall"), account: "alice")
        return (manager, driver)
    }

    @Test("a guest may not pair, a wrong code is authenticationFailed, and neither adds anything")
    func refusals() async throws {
        let (manager, _) = try await manager()
        #expect(
            await errorCode {
                try await manager.pairAccessory("new-bridge", setupCode: "111-22-333", home: "Home", account: "bob")
            } == .insufficientPrivileges)
        #expect(
            await errorCode {
                try await manager.pairAccessory("new-bridge", setupCode: "999-99-999", home: "Home", account: "alice")
            } == .authenticationFailed)
        #expect(
            await errorCode {
                try await manager.pairAccessory("nothing", setupCode: "111-22-333", home: "Home", account: "alice")
            } == .notFound)
        #expect(try await manager.home("Home", account: "alice").accessories.isEmpty)
        #expect(await manager.discoveredAccessories().map(\.id) == ["new-bridge"])
        await manager.shutdown()
    }

    @Test("pairing adds the bridge and its bridged accessory to the room asked for; unpairing removes them")
    func pairAndUnpair() async throws {
        let (manager, driver) = try await manager()
        let added = try await manager.pairAccessory(
            "new-bridge", setupCode: "111-22-333", home: "Home", room: "Hall", name: "Hall Bridge", account: "alice")
        #expect(added == "Hall Bridge")
        let home = try await manager.home("Home", account: "alice")
        let hall = try #require(home.rooms.first { $0.name == "Hall" })
        #expect(Set(home.accessories.map(\.id)) == ["AA:BB", "AA:BB:2"])
        #expect(home.accessories.allSatisfy { $0.room == hall.id })
        #expect(
            await errorCode { try await manager.unpairAccessory("Lamp", home: "Home", account: "bob") }
                == .insufficientPrivileges)
        // A bridged accessory's pairing is its bridge's: refused, and the device is not asked
        #expect(
            await errorCode { try await manager.unpairAccessory("Lamp", home: "Home", account: "alice") }
                == .cannotRemoveNonBridgeAccessory)
        #expect(await driver.unpaired.isEmpty)
        #expect(try await manager.home("Home", account: "alice").accessories.count == 2)
        try await manager.unpairAccessory("Hall Bridge", home: "Home", account: "alice")
        #expect(await driver.unpaired == ["AA:BB"])
        #expect(try await manager.home("Home", account: "alice").accessories.isEmpty)
        await manager.shutdown()
    }

    @Test("a pairing the home cannot take (a name it refuses) is removed from the device again")
    func allOrNothing() async throws {
        let (manager, driver) = try await manager()
        let refused = await errorCode {
            try await manager.pairAccessory(
                "new-bridge", setupCode: "111-22-333", home: "Home", name: "Fan-2 (Bedroom)", account: "alice")
        }
        #expect(refused == .nameContainsProhibitedCharacters)
        #expect(await driver.unpaired == ["AA:BB"])
        #expect(try await manager.home("Home", account: "alice").accessories.isEmpty)
        await manager.shutdown()
    }

    @Test("driver secrets survive a reopen of the database file and stay apart per driver")
    func secrets() async throws {
        try await withTemporaryDirectory { folder in
            let path = "\(folder)/home.sqlite"
            do {
                let database = try HomeDatabase.open(atPath: path)
                try database.secrets(for: "hap").set("controller.key", [1, 2, 3])
                try database.secrets(for: "other").set("controller.key", [9])
                try database.secrets(for: "hap").set("gone", [4])
                try database.secrets(for: "hap").remove("gone")
            }
            let reopened = try HomeDatabase.open(atPath: path)
            #expect(try reopened.secrets(for: "hap").all() == ["controller.key": [1, 2, 3]])
            #expect(try reopened.secrets(for: "other").value("controller.key") == [9])
        }
    }
}
