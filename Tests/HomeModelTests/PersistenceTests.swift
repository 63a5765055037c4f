import Foundation
import HomeModel
import TestSupport
import Testing
import VirtualDevices

@Suite("Persistence")
struct PersistenceTests {
    @Test("After a restart the manager loads exactly what was acknowledged")
    func reloadFromDisk() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            // Given a home built on a file database, with values written
            let f = try await Fixture.make(
                database: HomeDatabase.open(atPath: path), homeCreators: .accounts([Fixture.admin, "carol"]))
            let (m, home, admin) = (f.manager, Fixture.home, Fixture.admin)
            try await m.edit(.addRoom(home: home, name: "Den"), account: admin)
            try await m.edit(.addRoom(home: home, name: "Hall"), account: admin)
            try await m.edit(.addZone(home: home, name: "Upstairs"), account: admin)
            try await m.edit(.addRoomToZone(home: home, room: "Den", zone: "Upstairs"), account: admin)
            try await m.edit(.addAccessory(home: home, id: "bridge", room: "Hall"), account: admin)
            try await m.edit(.assignAccessory(home: home, accessory: "Lamp", room: "Den"), account: admin)
            try await m.edit(
                .addActionSet(home: home, name: "Night", actions: [ActionRequest(Fixture.lampOn, .bool(false))]),
                account: admin)
            try await m.edit(.addHome(name: "Cabin"), account: "carol")
            try await m.edit(.setPrimaryHome(home: "Cabin"), account: "carol")
            try await m.writeValue(.int(42), to: Fixture.lampBrightness, home: home, account: Fixture.guest)
            _ = await errorCode { try await m.edit(.addRoom(home: home, name: "den"), account: admin) }
            let before = await m.allHomes()
            await m.shutdown()

            // When a new manager opens the same file
            let database = try HomeDatabase.open(atPath: path)
            let reloaded = try HomeManager(database: database)

            // Then it holds the same homes, layout, users, action sets and last values (all unreachable
            // until a driver reports), and the same primary home
            let after = await reloaded.allHomes()
            #expect(after.map(Self.layout) == before.map(Self.layout))
            #expect(after.map(\.accessories).joined().allSatisfy { !$0.isReachable })
            #expect(await reloaded.primaryHome == before[1].id)
            #expect(
                after[0].accessory("lamp").flatMap { try? $0.service(named: "Lightbulb") }?.characteristic(.brightness)?
                    .value == .int(42))
            #expect(await reloaded.memberships().map(\.account) == ["alice", "bob", "carol"])
            #expect(try database.journalMode() == "wal")
            #expect(try database.integrityCheck() == ["ok"])
        }
    }

    @Test(
        "A device's name taken in the home is numbered when it joins, its own kept across a restart; a name an administrator gives is refused instead"
    )
    func takenDeviceNames() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await Fixture.make(database: HomeDatabase.open(atPath: path))
            let (m, home, admin) = (f.manager, Fixture.home, Fixture.admin)
            // Given a room named as the lock and its bridge's desk lamp names itself
            try await m.edit(.addRoom(home: home, name: "Lock"), account: admin)
            try await m.edit(.addRoom(home: home, name: "desk"), account: admin)
            // When an administrator names the bridge as the lamp, it is refused and nothing is added
            #expect(
                await errorCode {
                    try await m.edit(.addAccessory(home: home, id: "bridge", name: "lamp"), account: admin)
                } == .objectWithSimilarNameExistsInHome)
            #expect(try await f.home().accessory("desk") == nil)
            // When the lock and the bridge join under the names their devices gave
            try await m.edit(.addAccessory(home: home, id: "lock"), account: admin)
            try await m.edit(.addAccessory(home: home, id: "bridge"), account: admin)
            // Then the taken ones are numbered, the devices' own names kept beside them
            let added = try await f.home()
            #expect(added.accessory("lock")?.name == "Lock 2" && added.accessory("lock")?.deviceName == "Lock")
            #expect(added.accessory("desk")?.name == "Desk 2" && added.accessory("desk")?.deviceName == "Desk")
            #expect(added.accessory("stairs")?.name == "Stairs" && added.accessory("stairs")?.deviceName == nil)
            await m.shutdown()
            // And a restart keeps them
            let reloaded = try await Fixture.reopen(path: path).home()
            #expect(reloaded.accessory("lock")?.deviceName == "Lock")
            #expect(reloaded.accessory("desk")?.name == "Desk 2")
        }
    }

    @Test("Reachability returns when the driver is attached again")
    func reattach() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await Fixture.make(database: HomeDatabase.open(atPath: path))
            await f.manager.shutdown()
            let again = try await Fixture.reopen(path: path)
            #expect(try await again.home().accessories.allSatisfy { $0.isReachable })
        }
    }

    /// Everything in a home but reachability, which is not persisted.
    struct Layout: Equatable {
        let home: [String]
        let rooms: [Room]
        let zones: [Zone]
        let users: [User]
        let actionSets: [ActionSet]
        let accessories: [[String]]
        let services: [[Service]]
    }

    static func layout(_ home: Home) -> Layout {
        Layout(
            home: [home.id.rawValue, home.name, "\(home.isPrimary)"], rooms: home.allRooms, zones: home.zones,
            users: home.users, actionSets: home.actionSets,
            accessories: home.accessories.map {
                [$0.id.rawValue, $0.name, $0.room?.rawValue ?? "", $0.bridge?.rawValue ?? "", $0.category.rawValue]
            },
            services: home.accessories.map(\.services))
    }
}

extension Fixture {
    /// A manager over an existing file with the devices attached again, nothing added.
    static func reopen(path: String) async throws -> Fixture {
        let manager = try HomeManager(database: HomeDatabase.open(atPath: path))
        let driver = VirtualDriver(devices: devices)
        try await manager.attach(driver)
        return Fixture(manager: manager, driver: driver)
    }
}
