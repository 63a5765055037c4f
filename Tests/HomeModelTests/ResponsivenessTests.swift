import Accessories
import HomeModel
import Testing

/// An accessory that lets a request time out is shown unreachable until a probe finds it answering
/// (docs/home-model.md, "Reachability").
@Suite("Accessories that stop answering", .timeLimit(.minutes(1)))
struct ResponsivenessTests {
    static func isReachable(_ fixture: Fixture, _ id: AccessoryID = "lamp") async throws -> Bool? {
        try await fixture.home().accessory(id)?.isReachable
    }

    /// Waits up to `timeout` for the lamp's reachability to become `expected`.
    static func waitUntil(
        _ fixture: Fixture, reachable expected: Bool, within timeout: Duration = .seconds(5)
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await isReachable(fixture) == expected { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Silences the lamp and lets a write to it time out; returns the write's error code.
    @discardableResult
    static func timeOut(_ fixture: Fixture) async -> HomeError.Code? {
        await fixture.driver.setAnswering(false, "lamp")
        return await errorCode {
            try await fixture.manager.writeValue(
                .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        }
    }

    @Test("a timeout shows it unreachable at once, with one event; later requests fail without waiting")
    func timeoutMarksUnreachable() async throws {
        let fixture = try await Fixture.make(driverTimeout: .milliseconds(200), probeInterval: .seconds(3600))
        var events = await fixture.manager.events().makeAsyncIterator()
        _ = await take(1, from: &events)
        await fixture.driver.setAnswering(false, "lamp")

        let code = await errorCode {
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

        let started = ContinuousClock.now
        for _ in 0..<3 {
            let again = await errorCode {
                try await fixture.manager.writeValue(
                    .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.guest)
            }
            #expect(again == .accessoryNotReachable)
        }
        #expect(ContinuousClock.now - started < .milliseconds(200))
        #expect(try await Self.isReachable(fixture, "thermostat") == true, "other accessories are not touched")
        try await fixture.manager.writeValue(
            .float(21),
            to: CharacteristicReference(
                accessory: "Thermostat", service: "Thermostat", characteristic: .targetTemperature),
            home: Fixture.home, account: Fixture.guest)
        await fixture.manager.shutdown()
    }

    @Test("a probe keeps it unreachable while silent and makes it reachable once it answers")
    func probeBringsItBack() async throws {
        let fixture = try await Fixture.make(driverTimeout: .milliseconds(200), probeInterval: .milliseconds(100))
        await Self.timeOut(fixture)
        // Several probes time out meanwhile
        #expect(try await Self.waitUntil(fixture, reachable: true, within: .seconds(1)) == false)

        await fixture.driver.setAnswering(true, "lamp")
        #expect(try await Self.waitUntil(fixture, reachable: true))
        try await fixture.manager.writeValue(
            .bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        #expect(try await fixture.value("lamp", .on) == .bool(true))
        await fixture.manager.shutdown()
    }

    @Test(
        "what the driver reports wins: reported gone and back, the accessory is reachable without a probe, and a later timeout marks it again"
    )
    func driverReportWins() async throws {
        let fixture = try await Fixture.make(driverTimeout: .milliseconds(200), probeInterval: .seconds(3600))
        await Self.timeOut(fixture)
        #expect(try await Self.isReachable(fixture) == false)
        await fixture.driver.setAnswering(true, "lamp")
        await fixture.driver.setReachable(false, "lamp")
        await fixture.driver.setReachable(true, "lamp")
        #expect(try await Self.waitUntil(fixture, reachable: true))

        // The report ended the silence: the next timeout is a new one and shows it unreachable again
        #expect(await Self.timeOut(fixture) == .operationTimedOut)
        #expect(try await Self.isReachable(fixture) == false)
        await fixture.manager.shutdown()
    }

    @Test("a reload keeps a silent accessory unreachable")
    func reloadKeepsIt() async throws {
        let fixture = try await Fixture.make(driverTimeout: .milliseconds(200), probeInterval: .seconds(3600))
        await Self.timeOut(fixture)
        try await fixture.manager.reload()
        #expect(try await Self.isReachable(fixture) == false)
        #expect(try await Self.isReachable(fixture, "thermostat") == true)
        await fixture.manager.shutdown()
    }

    @Test("a silent bridge silences its bridged accessories; each is shown unreachable when it times out")
    func silentBridge() async throws {
        let fixture = try await Fixture.make(driverTimeout: .milliseconds(200), probeInterval: .seconds(3600))
        try await fixture.manager.addAccessory("bridge", home: Fixture.home, account: Fixture.admin)
        await fixture.driver.setAnswering(false, "bridge")
        let stairs = CharacteristicReference(accessory: "Stairs", service: "Lightbulb", characteristic: .on)
        let code = await errorCode {
            try await fixture.manager.writeValue(.bool(true), to: stairs, home: Fixture.home, account: Fixture.admin)
        }
        #expect(code == .operationTimedOut)
        #expect(try await Self.isReachable(fixture, "stairs") == false)
        #expect(try await Self.isReachable(fixture, "lamp") == true)
        await fixture.manager.shutdown()
    }
}
