import AsyncMailbox
import HomeModel
import Synchronization
import TestSupport
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
        try await m.edit(.addHome(name: "Home"), account: "alice")
        try await m.edit(.addRoom(home: "Home", name: "Den"), account: "alice")
        try await m.edit(.renameRoom(home: "Home", room: "Den", name: "Study"), account: "alice")
        try await m.edit(.addZone(home: "Home", name: "Upstairs"), account: "alice")
        try await m.edit(.addRoomToZone(home: "Home", room: "Study", zone: "Upstairs"), account: "alice")
        try await m.edit(.addUser(home: "Home", account: "bob", name: "Bob"), account: "alice")
        try await m.edit(.addActionSet(home: "Home", name: "Night", actions: []), account: "alice")
        let home = try await m.home("Home", account: "alice")
        let (room, zone, actionSet) = (home.rooms[0], home.zones[0], home.actionSets[0])
        let user = try #require(home.users.first { $0.name == "Bob" })
        try await m.edit(.renameActionSet(home: "Home", actionSet: "Night", name: "Late"), account: "alice")
        _ = await errorCode { try await m.edit(.addRoom(home: "Home", name: "study"), account: "alice") }
        try await m.edit(.removeRoom(home: "Home", room: "Study"), account: "alice")
        try await m.edit(.removeZone(home: "Home", zone: "Upstairs"), account: "alice")
        try await m.edit(.removeActionSet(home: "Home", actionSet: "Late"), account: "alice")
        try await m.edit(.removeUser(home: "Home", user: "Bob"), account: "alice")
        try await m.edit(.renameHome(home: "Home", name: "House"), account: "alice")
        try await m.edit(.removeHome(home: "House"), account: "alice")
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

    @Test("A listener with a test gets the first change and then only those it wants, in order")
    func filteredChanges() async throws {
        let m = try HomeManager(database: .inMemory())
        var rooms = await m.changes(where: { if case .didAddRoom = $0.event { true } else { false } })
            .map(\.event).makeAsyncIterator()
        var all = await m.events().makeAsyncIterator()
        try await m.edit(.addHome(name: "Home"), account: "alice")
        try await m.edit(.addRoom(home: "Home", name: "Den"), account: "alice")
        try await m.edit(.addZone(home: "Home", name: "Upstairs"), account: "alice")
        try await m.edit(.addRoom(home: "Home", name: "Study"), account: "alice")
        let home = try await m.home("Home", account: "alice")
        // The unfiltered listener saw everything up to the last room, so the filtered one has had
        // every chance to see the home and the zone.
        let everything = await take(6, from: &all)
        #expect(everything.last == .didAddRoom(home: home.id, room: home.rooms[1].id, name: "Study"))
        #expect(
            await take(3, from: &rooms) == [
                .homeManagerDidUpdateHomes,
                .didAddRoom(home: home.id, room: home.rooms[0].id, name: "Den"),
                .didAddRoom(home: home.id, room: home.rooms[1].id, name: "Study"),
            ])
    }

    @Test(
        "A transforming listener gets what it makes of each change, as committed; an undone build starts a tested one over"
    )
    func transformedChanges() async throws {
        let m = try HomeManager(database: .inMemory())
        let roomNames = await m.changes(transform: { change -> String? in
            if case .didAddRoom(_, _, let name) = change.event { name } else { nil }
        })
        var names = roomNames.makeAsyncIterator()
        var nothingWanted = await m.changes(where: { _ in false }).makeAsyncIterator()
        try await m.edit(.addHome(name: "Home"), account: "alice")
        try await m.edit(.addRoom(home: "Home", name: "Den"), account: "alice")
        struct Undone: Error {}
        await #expect(throws: Undone.self) {
            try await m.building { m in
                try await m.edit(.addRoom(home: "Home", name: "Attic"), account: "alice")
                throw Undone()
            }
        }
        try await m.edit(.addRoom(home: "Home", name: "Study"), account: "alice")
        // The transform ran as each room was added, so the names are there without waiting for it
        #expect(names.nextQueued() == "Den")
        #expect(names.nextQueued() == "Attic")
        #expect(names.nextQueued() == "Study")
        #expect(names.nextQueued() == nil)
        // A listener whose test takes nothing still hears the first change and the undoing
        #expect(nothingWanted.nextQueued()?.event == .homeManagerDidUpdateHomes)
        #expect(nothingWanted.nextQueued()?.event == .homeManagerDidUpdateHomes)
        #expect(nothingWanted.nextQueued() == nil)
    }

    @Test("Listeners are handed each change in the order they came, those first in line before the rest")
    func handingOrder() async throws {
        let m = try HomeManager(database: .inMemory())
        let handed = Mutex<[String]>([])
        func listener(_ name: String, firstInLine: Bool = false) async -> Mailbox<HomeChange> {
            await m.changes(
                where: { change in
                    if case .didAddHome = change.event { handed.withLock { $0.append(name) } }
                    return true
                }, firstInLine: firstInLine)
        }
        // Kept, so that none of them goes away before the change is handed out.
        let listeners = [
            await listener("publisher"), await listener("bridge", firstInLine: true), await listener("recorder"),
            await listener("second bridge", firstInLine: true),
        ]
        try await m.edit(.addHome(name: "Home"), account: "alice")
        #expect(handed.withLock { $0 } == ["bridge", "second bridge", "publisher", "recorder"])
        #expect(listeners.count == 4)
    }

    @Test("Accessory changes and driver reports are announced")
    func accessoryEvents() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addRoom(home: Fixture.home, name: "Den"), account: Fixture.admin)
        var events = await m.events().makeAsyncIterator()
        _ = await events.next()
        let home = try await f.home()
        let den = home.rooms[0].id
        // When the lamp is renamed, moved and written, and the lock leaves the browser for the home
        try await m.edit(
            .renameAccessory(home: Fixture.home, accessory: "Lamp", name: "Reading Lamp"), account: Fixture.admin)
        try await m.edit(
            .assignAccessory(home: Fixture.home, accessory: "Reading Lamp", room: "Den"), account: Fixture.admin)
        try await m.writeValue(
            .bool(true),
            to: CharacteristicReference(accessory: "Reading Lamp", service: "Lightbulb", characteristic: .on),
            home: Fixture.home, account: Fixture.guest)
        try await m.edit(.addAccessory(home: Fixture.home, id: "lock"), account: Fixture.admin)
        try await m.edit(.removeAccessory(home: Fixture.home, accessory: "Lock"), account: Fixture.admin)
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
        try await f.manager.edit(.addAccessory(home: Fixture.home, id: "lock"), account: Fixture.admin)
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
