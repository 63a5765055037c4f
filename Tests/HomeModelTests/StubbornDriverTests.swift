import Foundation
import HomeModel
import Synchronization
import TestSupport
import Testing
import VirtualDevices

/// The virtual devices of the fixture, except that a write blocks until the test opens `gate`,
/// whatever happens: a driver stuck in a call that ignores cancellation (a blocking socket, a hung
/// serial port).
struct StubbornDriver: VirtualDriverWrapper {
    let inner: VirtualDriver
    let gate = Gate()
    var name: String { "stubborn" }

    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        await gate.pass()
        try await inner.write(accessory, values: values)
    }
}

/// Holds callers until it is opened; ignores cancellation, as a blocking call does.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// How many callers are held now.
    var held: Int { state.withLock { $0.waiting.count } }

    func pass() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

@Suite("A driver that ignores cancellation", .timeLimit(.minutes(3)))
struct StubbornDriverTests {
    @Test("the command fails with operationTimedOut at the timeout, while the driver is still stuck")
    func timeoutIsKept() async throws {
        // Given a lamp whose driver hangs on every write until the test lets it go, and a timeout of 0.3 s
        let manager = try HomeManager(database: .inMemory(), driverTimeout: .milliseconds(300))
        let driver = StubbornDriver(inner: VirtualDriver(devices: Fixture.devices, tick: .seconds(86_400)))
        defer { driver.gate.open() }
        try await manager.attach(driver)
        try await manager.edit(.addHome(name: "Home", userName: "Alice"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "lamp"), account: "alice")

        // When alice switches it on
        let started = ContinuousClock.now
        let code = await errorCode {
            try await manager.writeValue(.bool(true), to: Fixture.lampOn, home: "Home", account: "alice")
        }
        let waited = ContinuousClock.now - started

        // Then she hears operationTimedOut while the driver still hangs (had the manager waited for
        // it, this test would hang until its time limit), not before the timeout, and nothing was
        // recorded. No upper bound on the wait: the test shares two threads with every other test.
        #expect(code == .operationTimedOut)
        #expect(driver.gate.held == 1, "the answer waited for the driver to give up")
        #expect(waited >= .milliseconds(300), "answered after \(waited), before the 0.3 s timeout")
        let home = try await manager.home("Home", account: "alice")
        #expect(home.accessories.first?.services.first?.characteristic(.on)?.value == .bool(false))
        driver.gate.open()
        await manager.shutdown()
    }
}
