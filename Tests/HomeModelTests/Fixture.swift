import AsyncMailbox
import Foundation
import HomeModel
import Testing
import VirtualDevices

/// A home with virtual devices: "Home", administered by alice, with bob as a guest; eve is no member.
/// The lamp and thermostat are added to the home; the bridge (Bridge with Stairs and Desk behind it)
/// and the lock stay in the browser unless a test adds them.
struct Fixture {
    let manager: HomeManager
    let driver: VirtualDriver

    static let home = "Home"
    static let admin = "alice"
    static let guest = "bob"
    static let stranger = "eve"

    static let devices: [VirtualDeviceConfiguration] = [
        .init(id: "lamp", name: "Lamp", kind: .lightbulb),
        .init(id: "thermostat", name: "Thermostat", kind: .thermostat),
        .init(id: "lock", name: "Lock", kind: .lock),
        .init(
            id: "bridge", name: "Bridge", kind: .bridge,
            bridged: [
                .init(id: "stairs", name: "Stairs", kind: .lightbulb),
                .init(id: "desk", name: "Desk", kind: .lightbulb),
            ]),
    ]

    static let lampOn = CharacteristicReference(accessory: "Lamp", service: "Lightbulb", characteristic: .on)
    static let lampBrightness = CharacteristicReference(
        accessory: "Lamp", service: "Lightbulb", characteristic: .brightness)

    /// A manager over `database` (in memory by default) with the devices attached and the home built.
    /// `wrap` may put a driver of the test's own around the virtual devices (to count calls, say).
    static func make(
        database: HomeDatabase? = nil, driverTimeout: Duration = .seconds(10), probeInterval: Duration = .seconds(15),
        homeCreators: HomeCreators = .administrators, clock: some Clock<Duration> = ContinuousClock(),
        attaching wrap: (VirtualDriver) -> any AccessoryDriver = { $0 }
    ) async throws -> Fixture {
        let manager = try HomeManager(
            database: database ?? HomeDatabase.inMemory(), driverTimeout: driverTimeout, probeInterval: probeInterval,
            homeCreators: homeCreators, clock: clock)
        // Simulated time moves only when a test calls `advance(by:)`: a loop ticking on the real clock
        // would move the lock, thermostat and sensors at moments that depend on the machine's load.
        let driver = VirtualDriver(devices: devices, tick: .seconds(86_400))
        try await manager.attach(wrap(driver))
        try await manager.edit(.addHome(name: home, userName: "Alice"), account: admin)
        try await manager.edit(.addUser(home: home, account: guest, name: "Bob"), account: admin)
        try await manager.edit(.addAccessory(home: home, id: "lamp"), account: admin)
        try await manager.edit(.addAccessory(home: home, id: "thermostat"), account: admin)
        return Fixture(manager: manager, driver: driver)
    }

    /// ``make(database:driverTimeout:probeInterval:homeCreators:clock:attaching:)`` with an action
    /// set "Night" (the lamp off), for the automations' tests.
    static func withNight(database: HomeDatabase? = nil) async throws -> Fixture {
        let f = try await make(database: database)
        try await f.manager.edit(
            .addActionSet(home: home, name: "Night", actions: [ActionRequest(lampOn, .bool(false))]), account: admin)
        return f
    }

    func home(_ account: String = admin) async throws -> Home {
        try await manager.home(Self.home, account: account)
    }

    func value(_ accessory: AccessoryID, _ type: CharacteristicType) async throws -> CharacteristicValue? {
        try await home().accessory(accessory)?.services.first?.characteristic(type)?.value
    }
}

/// Runs `body` and returns the code of the `HomeError` it threw, or `nil` if it did not throw.
func errorCode(_ body: () async throws -> Void) async -> HomeError.Code? {
    await thrownError(body)?.code
}

/// Runs `body` and returns the `HomeError` it threw, or `nil` if it did not throw.
func thrownError(_ body: () async throws -> Void) async -> HomeError? {
    do {
        try await body()
        return nil
    } catch let error as HomeError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// Takes the next `count` events from an iterator.
func take<Events: AsyncIteratorProtocol<HomeEvent, Never>>(
    isolation: isolated (any Actor)? = #isolation,
    _ count: Int, from iterator: inout Events
) async -> [HomeEvent] {
    var events: [HomeEvent] = []
    while events.count < count, let event = await iterator.next(isolation: #isolation) { events.append(event) }
    return events
}

/// The code of the `HomeError` a synchronous body threw, or `nil` if it did not throw.
func thrownCode(_ body: () throws -> Void) -> HomeError.Code? {
    do {
        try body()
        return nil
    } catch let error as HomeError {
        return error.code
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
