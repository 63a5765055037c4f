import AsyncMailbox
import Foundation
import HomeModel
import TestSupport
import Testing

/// A bridge in a home that changes while the hub is away (issue 50): when it next answers, what it
/// lists anew joins its home and what it no longer lists leaves the home, as HomeKit keeps a bridge;
/// a bridge that is only offline changes nothing.
@Suite("A bridge followed as it changes", .timeLimit(.minutes(5)))
struct ChangedBridgeTests {
    static let admin = "alice"

    static func outlet(_ id: AccessoryID, _ name: String) -> Accessory {
        Accessory(
            id: id, name: name, category: .outlet, bridge: "bridge",
            services: [
                Service(id: "outlet", type: .outlet, name: "Outlet", characteristics: [.standard(.on, .bool(false))])
            ])
    }

    static func bridge(listing: [AccessoryID], isReachable: Bool = true) -> Accessory {
        Accessory(
            id: "bridge", name: "Bridge", category: .bridge, bridgedAccessories: listing, services: [],
            isReachable: isReachable)
    }

    static let kitchen = outlet("kitchen", "Kitchen Outlet")
    static let desk = outlet("desk", "Desk Outlet")
    static let heater = outlet("heater", "Heater Outlet")

    /// A hub over the file at `path` with the home "Home", to which the administrator added a bridge
    /// of `bridged` (its driver reports the bridge and then them), running.
    static func homeWithBridge(at path: String, of bridged: [Accessory]) async throws -> HomeManager {
        let manager = try HomeManager(database: try HomeDatabase.open(atPath: path))
        let driver = ReportingDriver(Self.bridge(listing: bridged.map(\.id)))
        try await manager.attach(driver)
        for accessory in bridged { driver.send(.found(accessory)) }
        try await manager.edit(.addHome(name: "Home"), account: Self.admin)
        try await eventually("the bridge's accessories found") {
            await manager.discoveredAccessories().count == bridged.count + 1
        }
        try await manager.edit(.addAccessory(home: "Home", id: "bridge"), account: Self.admin)
        return manager
    }

    /// The next `count` events that change a home's layout (not values, reachability or the browser).
    static func layoutEvents(_ count: Int, from iterator: inout Mailbox<HomeEvent>.Iterator) async -> [HomeEvent] {
        var events: [HomeEvent] = []
        while events.count < count, let event = await iterator.next() {
            switch event {
            case .homeManagerDidUpdateHomes, .accessoryDidUpdateReachability, .didUpdateValueForCharacteristic,
                .didFindNewAccessory, .didRemoveNewAccessory:
                continue
            default: events.append(event)
            }
        }
        return events
    }

    @Test("after a restart the bridge's new accessory joins its home and the one it lost leaves, with what named it")
    func changedWhileAway() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            // Given a bridge of two outlets in a home, the desk's in an action set and an automation
            let first = try await Self.homeWithBridge(at: path, of: [Self.kitchen, Self.desk])
            let deskOn = CharacteristicReference(accessory: "Desk Outlet", service: "Outlet", characteristic: .on)
            let kitchenOn = CharacteristicReference(accessory: "Kitchen Outlet", service: "Outlet", characteristic: .on)
            try await first.edit(
                .addActionSet(
                    home: "Home", name: "Night",
                    actions: [ActionRequest(deskOn, .bool(false)), ActionRequest(kitchenOn, .bool(false))]),
                account: Self.admin)
            try await first.edit(
                .addTrigger(
                    home: "Home", name: "Desk Watch", characteristic: deskOn, value: nil, actionSets: ["Night"]),
                account: Self.admin)
            await first.shutdown()

            // When the hub starts again and the bridge now lists the kitchen's and a heater's outlet
            let manager = try HomeManager(database: try HomeDatabase.open(atPath: path))
            var events = await manager.events().makeAsyncIterator()
            let driver = ReportingDriver(Self.bridge(listing: ["kitchen", "heater"]))
            try await manager.attach(driver)
            driver.send(.found(Self.kitchen))
            driver.send(.found(Self.heater))

            // Then the desk's outlet left the home with its action and automation, each announced
            let home = try await manager.home("Home", account: Self.admin)
            let homeID = home.id
            let layout = await Self.layoutEvents(4, from: &events)
            #expect(
                layout.map(\.name) == [
                    "didRemoveAccessory", "didUpdateActionsForActionSet", "didRemoveTrigger", "didAddAccessory",
                ])
            guard case .didRemoveAccessory(homeID, "desk", "Desk Outlet", _)? = layout.first else {
                Issue.record("\(layout)")
                return
            }
            // And the heater's joined the bridge's home in its default room, announced
            guard case .didAddAccessory(homeID, "heater", "Heater Outlet", let room)? = layout.last else {
                Issue.record("\(layout)")
                return
            }
            let now = try await manager.home("Home", account: Self.admin)
            #expect(room == now.defaultRoom.id)
            #expect(now.accessories.map(\.id) == ["bridge", "kitchen", "heater"])
            #expect(now.accessory("bridge")?.bridgedAccessories == ["kitchen", "heater"])
            #expect(now.actionSets.first?.actions.map(\.accessory) == ["kitchen"])
            #expect(now.triggers.isEmpty)
            #expect(await manager.discoveredAccessories().isEmpty)
            await manager.shutdown()

            // And it was saved: a third start has the same home without the bridge answering at all
            let third = try HomeManager(database: try HomeDatabase.open(atPath: path))
            #expect(
                try await third.home("Home", account: Self.admin).accessories.map(\.id) == [
                    "bridge", "kitchen", "heater",
                ])
            await third.shutdown()
        }
    }

    /// A HomeKit bridge that lost its last bridged accessory may answer as a plain accessory, with
    /// no list at all: what the home has behind it is gone all the same.
    @Test("a bridge that answers as a plain accessory, listing nothing, loses what the home had behind it")
    func lastAccessoryGone() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let first = try await Self.homeWithBridge(at: path, of: [Self.kitchen])
            await first.shutdown()

            let manager = try HomeManager(database: try HomeDatabase.open(atPath: path))
            let plain = Accessory(
                id: "bridge", name: "Bridge", category: .other,
                services: [Service(id: "info", type: "AccessoryInformation", name: "Bridge", characteristics: [])])
            try await manager.attach(ReportingDriver(plain))
            #expect(try await manager.home("Home", account: Self.admin).accessories.map(\.id) == ["bridge"])
            await manager.shutdown()
        }
    }

    @Test("a bridge that is offline, or still lists an accessory it does not report yet, changes nothing")
    func offlineChangesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let first = try await Self.homeWithBridge(at: path, of: [Self.kitchen, Self.desk])
            await first.shutdown()

            // The bridge is reported unreachable with no list, then answers listing both, the desk's
            // outlet not reported yet
            let manager = try HomeManager(database: try HomeDatabase.open(atPath: path))
            let driver = ReportingDriver(Self.bridge(listing: [], isReachable: false))
            try await manager.attach(driver)
            driver.send(.found(Self.bridge(listing: ["kitchen", "desk"])))
            driver.send(.found(Self.kitchen))
            // A marker the manager takes after both: a value of the kitchen's outlet
            driver.send(.value("kitchen", service: "outlet", characteristic: .on, .bool(true)))
            try await eventually("the kitchen's outlet on") {
                try await manager.home("Home", account: Self.admin).accessory("kitchen")?.services.first?
                    .characteristic(.on)?.value == .bool(true)
            }
            #expect(
                try await manager.home("Home", account: Self.admin).accessories.map(\.id) == [
                    "bridge", "kitchen", "desk",
                ])
            await manager.shutdown()
        }
    }
}
