import HomeModel
import Testing
import VirtualDevices

@Suite("Events")
struct EventTests {
    @Test("Every change is announced once, in the order it was made")
    func order() async throws {
        // Given a listener on an empty manager
        let m = try HomeManager(database: .inMemory())
        var events = await m.events().makeAsyncIterator()
        #expect(await events.next() == .homeManagerDidUpdateHomes)
        // When a home is built, changed and removed
        let home = try await m.addHome(named: "Home", account: "alice")
        let room = try await m.addRoom(named: "Den", home: "Home", account: "alice")
        try await m.renameRoom("Den", to: "Study", home: "Home", account: "alice")
        let zone = try await m.addZone(named: "Upstairs", home: "Home", account: "alice")
        try await m.addRoom("Study", toZone: "Upstairs", home: "Home", account: "alice")
        let user = try await m.addUser(account: "bob", name: "Bob", home: "Home", account: "alice")
        let actionSet = try await m.addActionSet(named: "Night", actions: [], home: "Home", account: "alice")
        try await m.renameActionSet("Night", to: "Late", home: "Home", account: "alice")
        _ = await errorCode { try await m.addRoom(named: "study", home: "Home", account: "alice") }
        try await m.removeRoom("Study", home: "Home", account: "alice")
        try await m.removeZone("Upstairs", home: "Home", account: "alice")
        try await m.removeActionSet("Late", home: "Home", account: "alice")
        try await m.removeUser(named: "Bob", home: "Home", account: "alice")
        try await m.renameHome("Home", to: "House", account: "alice")
        try await m.removeHome("House", account: "alice")
        // Then the listener saw exactly these messages, in this order (the refused add is not there)
        let h = home.id
        let expected: [HomeEvent] = [
            .didAddHome(home: h, name: "Home"),
            .didUpdatePrimaryHome(home: h),
            .didAddRoom(home: h, room: room.id, name: "Den"),
            .didUpdateNameForRoom(home: h, room: room.id, oldName: "Den", name: "Study"),
            .didAddZone(home: h, zone: zone.id, name: "Upstairs"),
            .didAddRoomToZone(home: h, room: room.id, zone: zone.id),
            .didAddUser(home: h, user: user.id, name: "Bob"),
            .didAddActionSet(home: h, actionSet: actionSet.id, name: "Night"),
            .didUpdateNameForActionSet(home: h, actionSet: actionSet.id, oldName: "Night", name: "Late"),
            .didRemoveRoomFromZone(home: h, room: room.id, zone: zone.id),
            .didRemoveRoom(home: h, room: room.id, name: "Study"),
            .didRemoveZone(home: h, zone: zone.id, name: "Upstairs"),
            .didRemoveActionSet(home: h, actionSet: actionSet.id, name: "Late"),
            .didRemoveUser(home: h, user: user.id, name: "Bob"),
            .didUpdateNameForHome(home: h, oldName: "Home", name: "House"),
            .didRemoveHome(home: h, name: "House"),
            .didUpdatePrimaryHome(home: nil),
        ]
        #expect(await take(expected.count, from: &events) == expected)
    }

    @Test("Accessory changes and driver reports are announced")
    func accessoryEvents() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.addRoom(named: "Den", home: Fixture.home, account: Fixture.admin)
        var events = await m.events().makeAsyncIterator()
        _ = await events.next()
        let home = try await f.home()
        let den = home.rooms[0].id
        // When the lamp is renamed, moved and written, and the lock leaves the browser for the home
        try await m.renameAccessory("Lamp", to: "Reading Lamp", home: Fixture.home, account: Fixture.admin)
        try await m.assignAccessory("Reading Lamp", toRoom: "Den", home: Fixture.home, account: Fixture.admin)
        try await m.writeValue(
            .bool(true),
            to: CharacteristicReference(accessory: "Reading Lamp", service: "Lightbulb", characteristic: .on),
            home: Fixture.home, account: Fixture.guest)
        try await m.addAccessory("lock", home: Fixture.home, account: Fixture.admin)
        try await m.removeAccessory("Lock", home: Fixture.home, account: Fixture.admin)
        // Then
        let expected: [HomeEvent] = [
            .didUpdateNameForAccessory(home: home.id, accessory: "lamp", oldName: "Lamp", name: "Reading Lamp"),
            .didUpdateRoomForAccessory(home: home.id, accessory: "lamp", oldRoom: home.defaultRoom.id, room: den),
            .didUpdateValueForCharacteristic(
                home: home.id, accessory: "lamp", service: "main", characteristic: .on, value: .bool(true)),
            .didAddAccessory(home: home.id, accessory: "lock", name: "Lock", room: home.defaultRoom.id),
            .didRemoveNewAccessory(accessory: "lock"),
            .didRemoveAccessory(home: home.id, accessory: "lock", name: "Lock", room: home.defaultRoom.id),
            .didFindNewAccessory(accessory: "lock"),
        ]
        #expect(await take(expected.count, from: &events) == expected)
    }

    @Test("Values a driver reports on its own reach the model and its listeners")
    func driverReportedValues() async throws {
        // Given the lock in the home and a listener
        let f = try await Fixture.make()
        try await f.manager.addAccessory("lock", home: Fixture.home, account: Fixture.admin)
        let home = try await f.home()
        var events = await f.manager.events().makeAsyncIterator()
        _ = await events.next()
        // When the lock is told to unlock and its transition time passes
        try await f.manager.writeValue(
            .int(0),
            to: CharacteristicReference(accessory: "Lock", service: "LockMechanism", characteristic: .lockTargetState),
            home: Fixture.home, account: Fixture.guest)
        await f.driver.advance(by: .seconds(2))
        // Then the model announces the target, then the current state the lock reported
        let expected: [HomeEvent] = [
            .didUpdateValueForCharacteristic(
                home: home.id, accessory: "lock", service: "main", characteristic: .lockTargetState, value: .int(0)),
            .didUpdateValueForCharacteristic(
                home: home.id, accessory: "lock", service: "main", characteristic: .lockCurrentState, value: .int(0)),
        ]
        var lockEvents: [HomeEvent] = []
        while lockEvents.count < 2, let event = await events.next() {
            if case .didUpdateValueForCharacteristic(_, "lock", _, _, _) = event { lockEvents.append(event) }
        }
        #expect(lockEvents == expected)
        #expect(try await f.value("lock", .lockCurrentState) == .int(0))
    }
}
