import HomeModel
import TestSupport
import Testing

@testable import VirtualDevices

@Suite("Virtual devices")
struct VirtualDeviceTests {
    let main = ServiceID("main")

    func driver(_ devices: VirtualDeviceConfiguration...) -> VirtualDriver {
        VirtualDriver(devices: devices)
    }

    func write(_ driver: VirtualDriver, _ id: AccessoryID, _ type: CharacteristicType, _ value: CharacteristicValue)
        async throws
    {
        try await driver.write(id, values: [CharacteristicWrite(service: main, characteristic: type, value: value)])
    }

    @Test("A thermostat heats toward its target and stops heating when it gets there")
    func thermostat() async throws {
        // Given a thermostat at 20 °C set to heat to 21 °C
        let d = driver(.init(id: "t", name: "T", kind: .thermostat))
        try await write(d, "t", .targetHeatingCoolingState, .int(1))
        // When ten seconds pass
        await d.advance(by: .seconds(10))
        // Then it is heating and half a degree warmer
        #expect(await d.value("t", .currentHeatingCoolingState) == .int(1))
        #expect(await d.value("t", .currentTemperature) == .float(20.5))
        // When another minute passes, it reached the target and stopped heating
        await d.advance(by: .seconds(60))
        #expect(await d.value("t", .currentTemperature) == .float(21))
        #expect(await d.value("t", .currentHeatingCoolingState) == .int(0))
        // And set to cool to 19 °C it cools
        try await write(d, "t", .targetTemperature, .float(19))
        try await write(d, "t", .targetHeatingCoolingState, .int(2))
        await d.advance(by: .seconds(2))
        #expect(await d.value("t", .currentHeatingCoolingState) == .int(2))
        #expect(await d.value("t", .currentTemperature) == .float(20.9))
    }

    @Test("A lock reaches its target state after its transition time, or jams")
    func lock() async throws {
        let d = driver(.init(id: "l", name: "L", kind: .lock, transitionTime: .seconds(3)))
        try await write(d, "l", .lockTargetState, .int(0))
        await d.advance(by: .seconds(2))
        #expect(await d.value("l", .lockCurrentState) == .int(1))
        await d.advance(by: .seconds(1))
        #expect(await d.value("l", .lockCurrentState) == .int(0))
        // Given it jams
        await d.setJammed(true, "l")
        try await write(d, "l", .lockTargetState, .int(1))
        await d.advance(by: .seconds(3))
        #expect(await d.value("l", .lockCurrentState) == .int(2))
    }

    @Test("A garage door opens and closes through its transitions and stops on an obstruction")
    func garageDoor() async throws {
        let d = driver(.init(id: "g", name: "G", kind: .garageDoor, transitionTime: .seconds(8)))
        #expect(await d.value("g", .currentDoorState) == .int(1))
        try await write(d, "g", .targetDoorState, .int(0))
        #expect(await d.value("g", .currentDoorState) == .int(2))
        await d.advance(by: .seconds(8))
        #expect(await d.value("g", .currentDoorState) == .int(0))
        // When it closes with something in the way
        try await write(d, "g", .targetDoorState, .int(1))
        #expect(await d.value("g", .currentDoorState) == .int(3))
        await d.setObstructed(true, "g")
        await d.advance(by: .seconds(1))
        // Then it stops and reports the obstruction
        #expect(await d.value("g", .currentDoorState) == .int(4))
        #expect(await d.value("g", .obstructionDetected) == .bool(true))
    }

    @Test("A garage door or a lock told to be what it is already does not move; one told back halfway turns back")
    func targetAlreadyHeld() async throws {
        let d = driver(
            .init(id: "g", name: "G", kind: .garageDoor, transitionTime: .seconds(8)),
            .init(id: "l", name: "L", kind: .lock, transitionTime: .seconds(3)))
        // A closed door told to close (each "Good Night") stays closed: no 8 s of "Closing"
        try await write(d, "g", .targetDoorState, .int(1))
        #expect(await d.value("g", .currentDoorState) == .int(1))
        await d.advance(by: .seconds(8))
        #expect(await d.value("g", .currentDoorState) == .int(1))
        // Opening, told to close again: it closes, and is closed after its transition
        try await write(d, "g", .targetDoorState, .int(0))
        #expect(await d.value("g", .currentDoorState) == .int(2))
        try await write(d, "g", .targetDoorState, .int(1))
        #expect(await d.value("g", .currentDoorState) == .int(3))
        await d.advance(by: .seconds(8))
        #expect(await d.value("g", .currentDoorState) == .int(1))
        // Told to close again while closing, it goes on closing: closed after the rest of its time
        try await write(d, "g", .targetDoorState, .int(0))
        await d.advance(by: .seconds(8))
        try await write(d, "g", .targetDoorState, .int(1))
        await d.advance(by: .seconds(5))
        try await write(d, "g", .targetDoorState, .int(1))
        await d.advance(by: .seconds(3))
        #expect(await d.value("g", .currentDoorState) == .int(1))
        // A locked lock told to lock does not start a transition that a later unlock would inherit
        try await write(d, "l", .lockTargetState, .int(1))
        await d.advance(by: .seconds(3))
        #expect(await d.value("l", .lockCurrentState) == .int(1))
        try await write(d, "l", .lockTargetState, .int(0))
        try await write(d, "l", .lockTargetState, .int(1))
        await d.advance(by: .seconds(3))
        #expect(await d.value("l", .lockCurrentState) == .int(1))
    }

    @Test("A window covering moves toward its target over time")
    func windowCovering() async throws {
        let d = driver(.init(id: "w", name: "W", kind: .windowCovering))
        try await write(d, "w", .targetPosition, .int(50))
        await d.advance(by: .seconds(2))
        #expect(await d.value("w", .currentPosition) == .int(20))
        #expect(await d.value("w", .positionState) == .int(1))
        await d.advance(by: .seconds(5))
        #expect(await d.value("w", .currentPosition) == .int(50))
        #expect(await d.value("w", .positionState) == .int(2))
        // Hold position stops it where it has got to
        try await write(d, "w", .targetPosition, .int(0))
        await d.advance(by: .seconds(1))
        #expect(await d.value("w", .currentPosition) == .int(40))
        try await write(d, "w", .holdPosition, .bool(true))
        #expect(await d.value("w", .targetPosition) == .int(40))
        #expect(await d.value("w", .positionState) == .int(2))
        await d.advance(by: .seconds(5))
        #expect(await d.value("w", .currentPosition) == .int(40))
    }

    @Test("An outlet is in use while it is on")
    func outlet() async throws {
        let d = driver(.init(id: "o", name: "O", kind: .outlet))
        try await write(d, "o", .on, .bool(true))
        #expect(await d.value("o", .outletInUse) == .bool(true))
        try await write(d, "o", .on, .bool(false))
        #expect(await d.value("o", .outletInUse) == .bool(false))
    }

    @Test("Sensors change their readings and batteries drain")
    func sensors() async throws {
        let d = driver(
            .init(id: "t", name: "T", kind: .temperatureSensor, battery: 20),
            .init(id: "h", name: "H", kind: .humiditySensor),
            .init(id: "m", name: "M", kind: .motionSensor),
            .init(id: "c", name: "C", kind: .contactSensor))
        var readings: Set<CharacteristicValue> = []
        var motion: Set<CharacteristicValue> = []
        for _ in 0..<60 {
            await d.advance(by: .seconds(5))
            if let value = await d.value("t", .currentTemperature) { readings.insert(value) }
            if let value = await d.value("m", .motionDetected) { motion.insert(value) }
        }
        #expect(readings.count > 1)
        #expect(motion == [.bool(true), .bool(false)])
        #expect(await d.value("t", .batteryLevel, service: "battery") == .int(15))
        #expect(await d.value("t", .statusLowBattery, service: "battery") == .int(1))
        let humidity = try #require(await d.value("h", .currentRelativeHumidity)?.doubleValue)
        #expect((30...70).contains(humidity))
    }

    @Test("A bridge that goes offline takes its bridged devices with it")
    func bridgeReachability() async throws {
        let d = driver(.init(id: "b", name: "B", kind: .bridge, bridged: [.init(id: "x", name: "X", kind: .switch)]))
        var updates = d.updates.makeAsyncIterator()
        await d.setReachable(false, "b")
        #expect(await updates.next() == .reachability("b", isReachable: false))
        #expect(await updates.next() == .reachability("x", isReachable: false))
        await #expect(throws: HomeError.self) { try await write(d, "x", .on, .bool(true)) }
        #expect(await d.accessories().map(\.isReachable) == [false, false])
        #expect(await d.accessories().map(\.bridge) == [nil, "b"])
        #expect(await d.accessories().first?.bridgedAccessories == ["x"])
    }

    @Test("Failures can be switched on per device")
    func failureRate() async throws {
        let d = driver(.init(id: "s", name: "S", kind: .switch, failureRate: 1))
        let error = await #expect(throws: HomeError.self) { try await write(d, "s", .on, .bool(true)) }
        #expect(error?.code == .communicationFailure)
        #expect(await d.value("s", .on) == .bool(false))
        await d.setFailureRate(0, "s")
        try await write(d, "s", .on, .bool(true))
        #expect(await d.value("s", .on) == .bool(true))
    }

    @Test("The running loop advances the simulation on the injected clock")
    func runningLoop() async throws {
        // Given a lock whose transition is one tick long on a fast clock
        let d = VirtualDriver(
            devices: [.init(id: "l", name: "L", kind: .lock, transitionTime: .milliseconds(1))],
            tick: .milliseconds(1))
        var updates = d.updates.makeAsyncIterator()
        try await d.start()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // When the driver runs (as its service would run it) and the lock is told to lock
            group.addTask { await d.run() }
            try await write(d, "l", .lockTargetState, .int(0))
            // Then the loop reports the lock's new state without the test advancing time
            let lockState = await updates.next(where: {
                if case .value("l", _, .lockCurrentState, _) = $0 { true } else { false }
            })
            #expect(lockState == .value("l", service: "main", characteristic: .lockCurrentState, .int(0)))
            group.cancelAll()
        }
        await d.stop()
    }
}

/// A jam and an obstruction that come while the device runs (a test's; the demo declares them).
extension VirtualDriver {
    func setJammed(_ isJammed: Bool, _ accessory: AccessoryID) {
        devices[accessory]?.configuration.isJammed = isJammed
    }

    func setObstructed(_ isObstructed: Bool, _ accessory: AccessoryID) {
        devices[accessory]?.configuration.isObstructed = isObstructed
    }
}
