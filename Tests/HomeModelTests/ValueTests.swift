import AsyncMailbox
import Foundation
import HomeModel
import TestSupport
import Testing
import VirtualDevices

@Suite("Characteristic values: metadata, permissions, reachability")
struct ValueTests {
    let percent = CharacteristicMetadata.standard(for: .brightness)!
    let temperature = CharacteristicMetadata.standard(for: .targetTemperature)!

    @Test("Integers at the edges of their range")
    func integerRange() throws {
        #expect(try percent.validate(.int(0)) == .int(0))
        #expect(try percent.validate(.int(100)) == .int(100))
        #expect(thrownCode { _ = try percent.validate(.int(-1)) } == .valueLowerThanMinimum)
        #expect(thrownCode { _ = try percent.validate(.int(101)) } == .valueHigherThanMaximum)
        #expect(try percent.validate(.float(40)) == .int(40))
        #expect(thrownCode { _ = try percent.validate(.float(40.5)) } == .invalidValueType)
    }

    @Test("Floats at the edges and off the step")
    func floatStep() throws {
        #expect(try temperature.validate(.float(10)) == .float(10))
        #expect(try temperature.validate(.float(38)) == .float(38))
        #expect(try temperature.validate(.float(21.5)) == .float(21.5))
        #expect(try temperature.validate(.int(21)) == .float(21))
        #expect(thrownCode { _ = try temperature.validate(.float(9.9)) } == .valueLowerThanMinimum)
        #expect(thrownCode { _ = try temperature.validate(.float(38.1)) } == .valueHigherThanMaximum)
        #expect(thrownCode { _ = try temperature.validate(.float(21.55)) } == .invalidParameter)
        #expect(thrownCode { _ = try temperature.validate(.float(.nan)) } == .invalidValueType)
    }

    @Test("Wrong kinds of value")
    func wrongType() throws {
        let on = CharacteristicMetadata.standard(for: .on)!
        #expect(try on.validate(.int(1)) == .bool(true))
        #expect(thrownCode { _ = try on.validate(.string("yes")) } == .invalidValueType)
        #expect(thrownCode { _ = try on.validate(.int(2)) } == .invalidValueType)
        #expect(thrownCode { _ = try percent.validate(.bool(true)) } == .invalidValueType)
        #expect(thrownCode { _ = try temperature.validate(.string("21")) } == .invalidValueType)
    }

    @Test("Strings and data longer than the maximum length")
    func length() throws {
        let name = CharacteristicMetadata(format: .string, maxLength: 8, permissions: [.read, .write])
        #expect(try name.validate(.string("12345678")) == .string("12345678"))
        #expect(thrownCode { _ = try name.validate(.string("123456789")) } == .stringLongerThanMaximum)
        #expect(thrownCode { _ = try name.validate(.string("ééééé")) } == .stringLongerThanMaximum)
        let unlimited = CharacteristicMetadata(format: .string, permissions: [.read])
        #expect(
            thrownCode { _ = try unlimited.validate(.string(String(repeating: "a", count: 65))) }
                == .stringLongerThanMaximum)
        let blob = CharacteristicMetadata(format: .data, maxLength: 2, permissions: [.write])
        #expect(thrownCode { _ = try blob.validate(.data(Data([1, 2, 3]))) } == .stringLongerThanMaximum)
    }

    @Test("Valid values and the natural range of the format")
    func validValues() throws {
        let mode = CharacteristicMetadata(format: .uint8, validValues: [0, 2], permissions: [.write])
        #expect(try mode.validate(.int(2)) == .int(2))
        #expect(thrownCode { _ = try mode.validate(.int(1)) } == .invalidParameter)
        #expect(thrownCode { _ = try mode.validate(.int(256)) } == .valueHigherThanMaximum)
        #expect(thrownCode { _ = try mode.validate(.int(-1)) } == .valueLowerThanMinimum)
    }

    @Test("Writes through the manager are validated and a refused write changes nothing")
    func managerValidates() async throws {
        let f = try await Fixture.make()
        let (m, home, bob) = (f.manager, Fixture.home, Fixture.guest)
        #expect(
            await errorCode { try await m.writeValue(.int(101), to: Fixture.lampBrightness, home: home, account: bob) }
                == .valueHigherThanMaximum)
        let current = CharacteristicReference(
            accessory: "Thermostat", service: "Thermostat", characteristic: .currentTemperature)
        #expect(
            await errorCode { try await m.writeValue(.float(25), to: current, home: home, account: bob) }
                == .readOnlyCharacteristic)
        let missing = CharacteristicReference(accessory: "Lamp", service: "Lightbulb", characteristic: .targetPosition)
        #expect(await errorCode { try await m.writeValue(.int(1), to: missing, home: home, account: bob) } == .notFound)
        #expect(try await f.value("lamp", .brightness) == .int(100))
        #expect(await f.driver.value("lamp", .brightness) == .int(100))
    }

    @Test("A write is recorded once the driver confirms it")
    func writeIsRecorded() async throws {
        let f = try await Fixture.make()
        try await f.manager.writeValue(.int(40), to: Fixture.lampBrightness, home: "home", account: Fixture.guest)
        #expect(await f.driver.value("lamp", .brightness) == .int(40))
        #expect(try await f.value("lamp", .brightness) == .int(40))
    }

    @Test("Values written together are all applied, or none when one is invalid")
    func writeTogether() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        let bad = [ActionRequest(Fixture.lampOn, .bool(true)), ActionRequest(Fixture.lampBrightness, .int(-5))]
        #expect(
            await errorCode { try await m.writeValues(bad, home: Fixture.home, account: Fixture.admin) }
                == .valueLowerThanMinimum)
        #expect(await f.driver.value("lamp", .on) == .bool(false))
        let good = [ActionRequest(Fixture.lampOn, .bool(true)), ActionRequest(Fixture.lampBrightness, .int(30))]
        try await m.writeValues(good, home: Fixture.home, account: Fixture.admin)
        #expect(try await f.value("lamp", .on) == .bool(true))
        #expect(try await f.value("lamp", .brightness) == .int(30))
    }

    /// Whether `event` is about an accessory's reachability.
    static func isReachabilityEvent(_ event: HomeEvent) -> Bool {
        if case .accessoryDidUpdateReachability = event { true } else { false }
    }

    @Test("Writes to an unreachable accessory are refused")
    func unreachable() async throws {
        // Given the lamp switched off the network
        let f = try await Fixture.make()
        var events = await f.manager.events().makeAsyncIterator()
        _ = await events.next()
        await f.driver.setReachable(false, "lamp")
        let home = try await f.home()
        // (the reachability event, whatever else the manager announces first)
        #expect(
            await events.next(where: Self.isReachabilityEvent)
                == .accessoryDidUpdateReachability(home: home.id, accessory: "lamp", isReachable: false))
        #expect(try await f.home().accessory("lamp")?.isReachable == false)
        // When a value is written, read or the lamp identified
        let m = f.manager
        #expect(
            await errorCode {
                try await m.writeValue(.bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
            } == .accessoryNotReachable)
        #expect(
            await errorCode {
                _ = try await m.readValues(accessory: "Lamp", home: Fixture.home, account: Fixture.admin)
            } == .accessoryNotReachable)
        #expect(
            await errorCode { try await m.identify(accessory: "Lamp", home: Fixture.home, account: Fixture.admin) }
                == .accessoryNotReachable)
        // Then nothing changed
        #expect(try await f.value("lamp", .on) == .bool(false))
        // And once it is back, the write goes through
        await f.driver.setReachable(true, "lamp")
        #expect(
            await events.next(where: Self.isReachabilityEvent)
                == .accessoryDidUpdateReachability(home: home.id, accessory: "lamp", isReachable: true))
        try await m.writeValue(.bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        #expect(try await f.value("lamp", .on) == .bool(true))
    }

    @Test("A write the device does not confirm changes nothing")
    func failedWrite() async throws {
        let f = try await Fixture.make()
        await f.driver.setFailureRate(1, "lamp")
        let code = await errorCode {
            try await f.manager.writeValue(.bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        }
        #expect(code == .communicationFailure)
        #expect(try await f.value("lamp", .on) == .bool(false))
    }

    @Test("A device that does not answer in time fails with operationTimedOut")
    func timeout() async throws {
        // Given a manager that waits 50 ms and a lamp that takes an hour
        let f = try await Fixture.make(driverTimeout: .milliseconds(50))
        await f.driver.setWriteDelay(.seconds(3600), "lamp")
        // When a value is written
        let code = await errorCode {
            try await f.manager.writeValue(.bool(true), to: Fixture.lampOn, home: Fixture.home, account: Fixture.admin)
        }
        // Then the write times out and nothing is recorded
        #expect(code == .operationTimedOut)
        #expect(try await f.value("lamp", .on) == .bool(false))
    }

    @Test("Reads come fresh from the device; identify reaches it")
    func readAndIdentify() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        let reads = try await m.readValues(
            accessory: "Lamp", service: "Lightbulb", home: Fixture.home, account: Fixture.guest)
        #expect(reads.map(\.characteristic) == [.on, .brightness, .hue, .saturation, .colorTemperature])
        let one = try await m.readValues(
            accessory: "lamp", characteristic: .brightness, home: Fixture.home, account: Fixture.guest)
        #expect(one.map(\.value) == [.int(100)])
        try await m.identify(accessory: "Lamp", home: Fixture.home, account: Fixture.guest)
        #expect(await f.driver.identifyCount("lamp") == 1)
    }
}
