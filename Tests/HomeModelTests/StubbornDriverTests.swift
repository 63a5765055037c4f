import Accessories
import Dispatch
import Foundation
import HomeModel
import Testing

/// The virtual devices of the fixture, except that a write blocks for `hang` whatever happens:
/// a driver stuck in a call that ignores cancellation (a blocking socket, a hung serial port).
struct StubbornDriver: AccessoryDriver {
    let inner: VirtualDriver
    let hang: Duration
    var name: String { "stubborn" }
    var updates: AsyncStream<DriverUpdate> { inner.updates }

    func start() async throws { try await inner.start() }
    func stop() async { await inner.stop() }
    func accessories() async -> [Accessory] { await inner.accessories() }
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        try await inner.read(accessory, service: service, characteristic: characteristic)
    }
    func identify(_ accessory: AccessoryID) async throws { try await inner.identify(accessory) }

    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        let seconds = Double(hang.components.seconds) + Double(hang.components.attoseconds) / 1e18
        await withCheckedContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.resume() }
        }
        try await inner.write(accessory, values: values)
    }
}

@Suite("A driver that ignores cancellation")
struct StubbornDriverTests {
    @Test("the command fails with operationTimedOut at the timeout, not when the driver gives up")
    func timeoutIsKept() async throws {
        // Given a lamp whose driver hangs for 10 s on every write, and a timeout of 0.3 s
        let manager = try HomeManager(database: .inMemory(), driverTimeout: .milliseconds(300))
        let driver = StubbornDriver(
            inner: VirtualDriver(devices: Fixture.devices, tick: .seconds(86_400)), hang: .seconds(10))
        try await manager.attach(driver)
        try await manager.addHome(named: "Home", account: "alice", userName: "Alice")
        try await manager.addAccessory("lamp", home: "Home", account: "alice")

        // When alice switches it on
        let started = ContinuousClock.now
        let code = await errorCode {
            try await manager.writeValue(.bool(true), to: Fixture.lampOn, home: "Home", account: "alice")
        }
        let waited = ContinuousClock.now - started

        // Then she hears operationTimedOut after the timeout, and nothing was recorded
        #expect(code == .operationTimedOut)
        #expect(waited < .seconds(5), "waited \(waited) for a 0.3 s timeout (the driver hangs 10 s)")
        let home = try await manager.home("Home", account: "alice")
        #expect(home.accessories.first?.services.first?.characteristic(.on)?.value == .bool(false))
        await manager.shutdown()
    }
}
