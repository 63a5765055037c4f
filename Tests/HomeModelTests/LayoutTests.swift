import AsyncMailbox
import Testing
import VirtualDevices

@testable import HomeModel

@Suite("Homes, the default room, zones and bridges")
struct LayoutTests {
    let home = Fixture.home
    let admin = Fixture.admin

    @Test("The first home becomes primary; removing it makes the next one primary")
    func primaryHome() async throws {
        // Given a manager with no homes
        let m = try HomeManager(database: .inMemory())
        #expect(await m.primaryHome == nil)
        // When two homes are added
        try await m.edit(.addHome(name: "First"), account: admin)
        try await m.edit(.addHome(name: "Second"), account: admin)
        let first = try await m.home("First", account: admin)
        // Then the first is primary
        #expect(await m.primaryHome == first.id)
        try await m.edit(.setPrimaryHome(home: "second"), account: admin)
        #expect(await m.homes(for: admin).map(\.isPrimary) == [false, true])
        // And removing the primary one hands primacy to what is left
        try await m.edit(.removeHome(home: "Second"), account: admin)
        #expect(await m.primaryHome == first.id)
        #expect(await m.homes(for: admin).map(\.isPrimary) == [true])
        try await m.edit(.removeHome(home: "First"), account: admin)
        #expect(await m.primaryHome == nil)
    }

    @Test("New accessories land in the default room")
    func accessoriesLandInTheDefaultRoom() async throws {
        let f = try await Fixture.make()
        let snapshot = try await f.home()
        #expect(snapshot.defaultRoom.name == HomeName.defaultRoom)
        #expect(snapshot.defaultRoom.isDefault)
        #expect(snapshot.accessories.allSatisfy { $0.room == snapshot.defaultRoom.id })
    }

    @Test("The default room cannot be renamed, removed or put in a zone")
    func defaultRoomIsFixed() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addZone(home: home, name: "Upstairs"), account: admin)
        #expect(
            await errorCode {
                try await m.edit(.renameRoom(home: home, room: HomeName.defaultRoom, name: "Hall"), account: admin)
            }
                == .roomForHomeCannotBeUpdated)
        #expect(
            await errorCode { try await m.edit(.removeRoom(home: home, room: HomeName.defaultRoom), account: admin) }
                == .roomForHomeCannotBeUpdated)
        #expect(
            await errorCode {
                try await m.edit(
                    .addRoomToZone(home: home, room: HomeName.defaultRoom, zone: "Upstairs"), account: admin)
            } == .roomForHomeCannotBeInZone)
        #expect(try await f.home().zones.first?.rooms == [])
    }

    @Test("Removing a room moves its accessories to the default room and takes it out of its zones")
    func removingARoom() async throws {
        // Given the lamp in the Den, which is in two zones
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addRoom(home: home, name: "Den"), account: admin)
        try await m.edit(.addZone(home: home, name: "Upstairs"), account: admin)
        try await m.edit(.addZone(home: home, name: "Quiet"), account: admin)
        try await m.edit(.addRoomToZone(home: home, room: "Den", zone: "Upstairs"), account: admin)
        try await m.edit(.addRoomToZone(home: home, room: "Den", zone: "Quiet"), account: admin)
        try await m.edit(.assignAccessory(home: home, accessory: "Lamp", room: "Den"), account: admin)
        // When the Den is removed
        try await m.edit(.removeRoom(home: home, room: "Den"), account: admin)
        // Then the lamp is in the default room and no zone lists the Den
        let snapshot = try await f.home()
        #expect(snapshot.accessory("lamp")?.room == snapshot.defaultRoom.id)
        #expect(snapshot.zones.allSatisfy { $0.rooms.isEmpty })
        // And the accessory can be moved back to the default room by its reserved name
        try await m.edit(.addRoom(home: home, name: "Study"), account: admin)
        try await m.edit(.assignAccessory(home: home, accessory: "Lamp", room: "Study"), account: admin)
        try await m.edit(.assignAccessory(home: home, accessory: "Lamp", room: "$default"), account: admin)
        #expect(try await f.home().accessory("lamp")?.room == snapshot.defaultRoom.id)
    }

    @Test("A room may be in several zones, once each")
    func zones() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addRoom(home: home, name: "Den"), account: admin)
        let den = try #require(try await f.home().rooms.first { $0.name == "Den" })
        try await m.edit(.addZone(home: home, name: "Upstairs"), account: admin)
        try await m.edit(.addZone(home: home, name: "Quiet"), account: admin)
        try await m.edit(.addRoomToZone(home: home, room: "Den", zone: "Upstairs"), account: admin)
        try await m.edit(.addRoomToZone(home: home, room: "den", zone: "quiet"), account: admin)
        #expect(try await f.home().zones.map(\.rooms) == [[den.id], [den.id]])
        #expect(
            await errorCode {
                try await m.edit(.addRoomToZone(home: home, room: "Den", zone: "Upstairs"), account: admin)
            }
                == .alreadyExists)
        try await m.edit(.removeRoomFromZone(home: home, room: "Den", zone: "Upstairs"), account: admin)
        #expect(
            await errorCode {
                try await m.edit(.removeRoomFromZone(home: home, room: "Den", zone: "Upstairs"), account: admin)
            }
                == .notFound)
        #expect(
            await errorCode {
                try await m.edit(.addRoomToZone(home: home, room: "Nowhere", zone: "Quiet"), account: admin)
            } == .notFound
        )
        try await m.edit(.renameZone(home: home, zone: "Quiet", name: "Calm"), account: admin)
        try await m.edit(.removeZone(home: home, zone: "Upstairs"), account: admin)
        let snapshot = try await f.home()
        #expect(snapshot.zones.map(\.name) == ["Calm"])
        #expect(snapshot.zones.map(\.rooms) == [[den.id]])
    }

    @Test("Adding a bridge adds its bridged accessories and announces only them")
    func addingABridge() async throws {
        // Given the bridge in the browser
        let f = try await Fixture.make()
        let m = f.manager
        #expect(await m.discoveredAccessories().map(\.id) == ["lock", "bridge", "stairs", "desk"])
        try await m.edit(.addRoom(home: home, name: "Office"), account: admin)
        var events = await m.events().makeAsyncIterator()
        _ = await events.next()
        // When the administrator adds the bridge to the Office
        try await m.edit(.addAccessory(home: home, id: "bridge", room: "Office"), account: admin)
        // Then the bridge and both bridged accessories are in the home, all in the Office
        let snapshot = try await f.home()
        let office = snapshot.rooms[0].id
        #expect(snapshot.accessories.map(\.id) == ["lamp", "thermostat", "bridge", "stairs", "desk"])
        #expect(snapshot.accessories(in: office).map(\.id) == ["bridge", "stairs", "desk"])
        #expect(snapshot.accessory("stairs")?.bridge == "bridge")
        // And the home announced each bridged accessory, never the bridge
        let added = await take(2, from: &events)
        #expect(
            added == [
                .didAddAccessory(home: snapshot.id, accessory: "stairs", name: "Stairs", room: office),
                .didAddAccessory(home: snapshot.id, accessory: "desk", name: "Desk", room: office),
            ])
        // And the browser no longer lists them
        #expect(await m.discoveredAccessories().map(\.id) == ["lock"])
    }

    @Test("A bridged accessory cannot be added or removed on its own")
    func bridgedAccessoriesGoWithTheirBridge() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        #expect(
            await errorCode { try await m.edit(.addAccessory(home: home, id: "stairs"), account: admin) }
                == .invalidParameter)
        try await m.edit(.addAccessory(home: home, id: "bridge"), account: admin)
        #expect(
            await errorCode { try await m.edit(.addAccessory(home: home, id: "bridge"), account: admin) }
                == .objectAlreadyAssociatedToHome)
        #expect(
            await errorCode { try await m.edit(.removeAccessory(home: home, accessory: "Stairs"), account: admin) }
                == .cannotRemoveNonBridgeAccessory)
        #expect(try await f.home().accessory("stairs") != nil)
        // When the bridge is removed, its bridged accessories go with it and return to the browser
        try await m.edit(.removeAccessory(home: home, accessory: "Bridge"), account: admin)
        #expect(try await f.home().accessories.map(\.id) == ["lamp", "thermostat"])
        #expect(Set(await m.discoveredAccessories().map(\.id)) == ["lock", "bridge", "stairs", "desk"])
    }

    @Test("Assigning a bridge to a room does not move its bridged accessories")
    func bridgeRoomDoesNotMoveBridged() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addRoom(home: home, name: "Office"), account: admin)
        try await m.edit(.addRoom(home: home, name: "Hall"), account: admin)
        try await m.edit(.addAccessory(home: home, id: "bridge"), account: admin)
        try await m.edit(.assignAccessory(home: home, accessory: "Stairs", room: "Hall"), account: admin)
        // When the bridge moves to the Office
        try await m.edit(.assignAccessory(home: home, accessory: "Bridge", room: "Office"), account: admin)
        // Then the bridged accessories stay where they were
        let snapshot = try await f.home()
        let (office, hall) = (snapshot.rooms[0].id, snapshot.rooms[1].id)
        #expect(snapshot.accessory("bridge")?.room == office)
        #expect(snapshot.accessory("stairs")?.room == hall)
        #expect(snapshot.accessory("desk")?.room == snapshot.defaultRoom.id)
    }

    @Test("Removing an accessory drops the actions that wrote to it")
    func removingAnAccessoryCleansActionSets() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        let thermostatMode = CharacteristicReference(
            accessory: "Thermostat", service: "Thermostat", characteristic: .targetHeatingCoolingState)
        try await m.edit(
            .addActionSet(
                home: home, name: "Night",
                actions: [ActionRequest(Fixture.lampOn, .bool(false)), ActionRequest(thermostatMode, .int(0))]),
            account: admin)
        try await m.edit(.removeAccessory(home: home, accessory: "Lamp"), account: admin)
        #expect(try await f.home().actionSets.first?.actions.map(\.accessory) == ["thermostat"])
    }
}

extension HomeManager {
    /// The primary home; `nil` while there is no home.
    var primaryHome: HomeID? { store.graph.primaryHome }
}
