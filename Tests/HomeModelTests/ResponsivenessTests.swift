import AsyncMailbox
import HomeModel
import Synchronization
import TestSupport
import Testing
import VirtualDevices

/// The virtual devices of the fixture, counting the reads and writes the manager asks of each.
struct CountingDriver: VirtualDriverWrapper {
    let inner: VirtualDriver
    private let counts = Counts()
    var name: String { "counting" }

    private final class Counts: Sendable {
        let state = Mutex<(reads: [AccessoryID: Int], writes: [AccessoryID: Int])>(([:], [:]))
    }

    /// How many reads of `accessory` were asked for so far (answered or not).
    func reads(_ accessory: AccessoryID) -> Int { counts.state.withLock { $0.reads[accessory, default: 0] } }
    /// How many writes to `accessory` were asked for so far (answered or not).
    func writes(_ accessory: AccessoryID) -> Int { counts.state.withLock { $0.writes[accessory, default: 0] } }

    func restore(_ accessories: [Accessory]) async { await inner.restore(accessories) }
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        counts.state.withLock { $0.reads[accessory, default: 0] += 1 }
        return try await inner.read(accessory, service: service, characteristic: characteristic)
    }
    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        counts.state.withLock { $0.writes[accessory, default: 0] += 1 }
        try await inner.write(accessory, values: values)
    }
}

/// An accessory that lets a request time out is shown unreachable until a probe finds it answering
/// (docs/home-model.md, "Reachability"). The manager's timers run on a ``ManualClock``: a request
/// times out, and a probe runs, only when the test moves the clock, so a device that answers is
/// never timed out by a stalled machine.
@Suite("Accessories that stop answering", .timeLimit(.minutes(3)))
struct ResponsivenessTests {
    static let timeout = Duration.seconds(10)

    /// A fixture on `clock`; probes only when the test asks for them, as the interval is long.
    static func make(
        _ clock: ManualClock, probeInterval: Duration = .seconds(3600),
        attaching wrap: (VirtualDriver) -> any AccessoryDriver = { $0 }
    ) async throws -> Fixture {
        try await Fixture.make(driverTimeout: timeout, probeInterval: probeInterval, clock: clock, attaching: wrap)
    }

    /// Moves the clock on by the timeout, again and again, until `condition` holds: a timer armed
    /// after one move fires at a later one.
    static func advance(
        _ clock: ManualClock, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: () async throws -> Bool
    ) async throws {
        try await eventually(
            "the condition, moving the clock by \(timeout) at each look", sourceLocation: sourceLocation
        ) {
            if try await condition() { return true }
            clock.advance(by: timeout)
            return false
        }
    }

    static func isReachable(_ fixture: Fixture, _ id: AccessoryID = "lamp") async throws -> Bool? {
        try await fixture.home().accessory(id)?.isReachable
    }

    /// Runs `request`, which waits on a silent device, and moves the clock until it has timed out;
    /// returns the request's error code.
    static func timingOut(
        _ clock: ManualClock, _ request: @escaping @Sendable () async throws -> Void
    ) async throws -> HomeError.Code? {
        let code = Mutex<HomeError.Code??>(nil)
        let running = Task {
            let result = await errorCode(request)
            code.withLock { $0 = .some(result) }
        }
        try await advance(clock) { code.withLock { $0 != nil } }
        await running.value
        return code.withLock { $0 ?? nil }
    }

    /// Silences the lamp and lets a write to it time out; returns the write's error code.
    @discardableResult
    static func timeOut(_ fixture: Fixture, _ clock: ManualClock) async throws -> HomeError.Code? {
        await fixture.driver.setAnswering(false, "lamp")
        return try await timingOut(clock) {
            try await fixture.manager.writeValue(
                .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        }
    }

    @Test("a timeout shows it unreachable at once, with one event; later requests fail without waiting")
    func timeoutMarksUnreachable() async throws {
        let clock = ManualClock()
        var counting: CountingDriver?
        let fixture = try await Self.make(clock) {
            counting = CountingDriver(inner: $0)
            return counting!
        }
        let driver = try #require(counting)
        var events = await fixture.manager.events().makeAsyncIterator()
        _ = await take(1, from: &events)
        await fixture.driver.setAnswering(false, "lamp")

        let code = try await Self.timingOut(clock) {
            try await fixture.manager.writeValue(
                .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.guest)
        }
        #expect(code == .operationTimedOut)
        #expect(try await Self.isReachable(fixture) == false)
        let next = await take(1, from: &events)
        guard case .accessoryDidUpdateReachability(_, let accessory, let isReachable)? = next.first else {
            Issue.record("expected a reachability event, got \(next)")
            return
        }
        #expect(accessory == "lamp" && !isReachable)

        // Later writes are refused by the manager without asking the device (which would make each
        // wait out the timeout): the refusal is accessoryNotReachable, and the device saw one write
        #expect(driver.writes("lamp") == 1)
        for _ in 0..<3 {
            let again = await errorCode {
                try await fixture.manager.writeValue(
                    .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.guest)
            }
            #expect(again == .accessoryNotReachable)
        }
        #expect(driver.writes("lamp") == 1, "a refused write was sent to the silent device")

        // Other accessories are not touched: the thermostat is shown reachable and its write goes to
        // its device
        #expect(try await Self.isReachable(fixture, "thermostat") == true, "other accessories are not touched")
        let thermostatCode = await errorCode {
            try await fixture.manager.writeValue(
                .float(21),
                to: CharacteristicReference(
                    accessory: "Thermostat", service: "Thermostat", characteristic: .targetTemperature),
                home: Fixture.home, account: Fixture.guest)
        }
        #expect(thermostatCode == nil, "refused: \(String(describing: thermostatCode))")
        try await eventually("the thermostat's write on the device") {
            await fixture.driver.value("thermostat", .targetTemperature) == .float(21)
        }
        #expect(driver.writes("thermostat") == 1)
        await fixture.manager.shutdown()
    }

    @Test("a probe keeps it unreachable while silent and makes it reachable once it answers")
    func probeBringsItBack() async throws {
        let clock = ManualClock()
        var counting: CountingDriver?
        let fixture = try await Self.make(clock, probeInterval: .seconds(15)) {
            counting = CountingDriver(inner: $0)
            return counting!
        }
        let driver = try #require(counting)
        try await Self.timeOut(fixture, clock)
        // Several probes time out meanwhile, and it stays unreachable
        let readsBefore = driver.reads("lamp")
        try await Self.advance(clock) {
            if try await Self.isReachable(fixture) == true { return true }
            return driver.reads("lamp") >= readsBefore + 3
        }
        #expect(try await Self.isReachable(fixture) == false, "a probe that timed out made it reachable")

        // When it answers again, the next probe makes it reachable
        await fixture.driver.setAnswering(true, "lamp")
        try await Self.advance(clock) { try await Self.isReachable(fixture) == true }
        // It is served again: the write is not refused and reaches the device
        let code = await errorCode {
            try await fixture.manager.writeValue(
                .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        }
        #expect(code == nil, "refused: \(String(describing: code))")
        #expect(await fixture.driver.value("lamp", .on) == .bool(true))
        await fixture.manager.shutdown()
    }

    @Test(
        "what the driver reports wins: reported gone and back, the accessory is reachable without a probe, and a later timeout marks it again"
    )
    func driverReportWins() async throws {
        let clock = ManualClock()
        let fixture = try await Self.make(clock)
        try await Self.timeOut(fixture, clock)
        #expect(try await Self.isReachable(fixture) == false)
        await fixture.driver.setAnswering(true, "lamp")
        await fixture.driver.setReachable(false, "lamp")
        await fixture.driver.setReachable(true, "lamp")
        try await eventually("the lamp reachable as reported") { try await Self.isReachable(fixture) == true }

        // The report ended the silence: the next timeout is a new one and shows it unreachable again
        #expect(try await Self.timeOut(fixture, clock) == .operationTimedOut)
        #expect(try await Self.isReachable(fixture) == false)
        await fixture.manager.shutdown()
    }

    @Test("a silent bridge silences its bridged accessories; each is shown unreachable when it times out")
    func silentBridge() async throws {
        let clock = ManualClock()
        let fixture = try await Self.make(clock)
        try await fixture.manager.edit(.addAccessory(home: Fixture.home, id: "bridge"), account: Fixture.admin)
        await fixture.driver.setAnswering(false, "bridge")
        let stairs = CharacteristicReference(accessory: "Stairs", service: "Lightbulb", characteristic: .on)
        let code = try await Self.timingOut(clock) {
            try await fixture.manager.writeValue(.bool(true), to: stairs, home: Fixture.home, account: Fixture.admin)
        }
        #expect(code == .operationTimedOut)
        #expect(try await Self.isReachable(fixture, "stairs") == false)
        #expect(try await Self.isReachable(fixture, "lamp") == true)
        await fixture.manager.shutdown()
    }
}
