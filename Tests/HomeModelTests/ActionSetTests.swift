import AsyncMailbox
import HomeModel
import Testing
import VirtualDevices

@Suite("Action sets")
struct ActionSetTests {
    let home = Fixture.home
    let admin = Fixture.admin
    let thermostatMode = CharacteristicReference(
        accessory: "Thermostat", service: "Thermostat", characteristic: .targetHeatingCoolingState)

    @Test("Executing writes every action and records the values")
    func execute() async throws {
        // Given an action set that turns the lamp on at 30% and heats
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(
            .addActionSet(
                home: home, name: "Evening",
                actions: [
                    ActionRequest(Fixture.lampOn, .bool(true)), ActionRequest(Fixture.lampBrightness, .int(30)),
                    ActionRequest(thermostatMode, .int(1)),
                ]), account: admin)
        // When a guest executes it
        let results = try await m.executeActionSet("evening", home: home, account: Fixture.guest)
        // Then every action succeeded and the values are recorded
        #expect(results.count == 3)
        #expect(results.allSatisfy { $0.succeeded })
        #expect(try await f.value("lamp", .on) == .bool(true))
        #expect(try await f.value("lamp", .brightness) == .int(30))
        #expect(try await f.value("thermostat", .targetHeatingCoolingState) == .int(1))
    }

    @Test("An unreachable accessory fails its action only, and the result says which")
    func partialFailure() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(
            .addActionSet(
                home: home, name: "Evening",
                actions: [ActionRequest(Fixture.lampOn, .bool(true)), ActionRequest(thermostatMode, .int(2))]),
            account: admin)
        var events = await m.events().makeAsyncIterator()
        _ = await events.next()
        await f.driver.setReachable(false, "lamp")
        _ = await events.next()
        // When it runs with the lamp unreachable
        let results = try await m.executeActionSet("Evening", home: home, account: admin)
        // Then the lamp's action failed with accessoryNotReachable and the thermostat's succeeded
        #expect(results.map(\.action.accessory) == ["lamp", "thermostat"])
        #expect(results.map(\.error?.code) == [.accessoryNotReachable, nil])
        #expect(try await f.value("lamp", .on) == .bool(false))
        #expect(try await f.value("thermostat", .targetHeatingCoolingState) == .int(2))
        // And the execution was announced after the value change, with one failure
        let snapshot = try await f.home()
        let actionSet = try #require(snapshot.actionSets.first)
        let after = await take(2, from: &events)
        #expect(
            after == [
                .didUpdateValueForCharacteristic(
                    home: snapshot.id, accessory: "thermostat", service: "main",
                    characteristic: .targetHeatingCoolingState,
                    value: .int(2)),
                .didExecuteActionSet(home: snapshot.id, actionSet: actionSet.id, failedActions: 1),
            ])
    }

    @Test("Actions must name writable characteristics and valid values")
    func validation() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        let current = CharacteristicReference(
            accessory: "Thermostat", service: "Thermostat", characteristic: .currentTemperature)
        #expect(
            await errorCode {
                try await m.edit(
                    .addActionSet(home: home, name: "A", actions: [ActionRequest(current, .float(20))]), account: admin)
            } == .readOnlyCharacteristic)
        #expect(
            await errorCode {
                try await m.edit(
                    .addActionSet(home: home, name: "A", actions: [ActionRequest(thermostatMode, .int(7))]),
                    account: admin)
            } == .valueHigherThanMaximum)
        #expect(
            await errorCode {
                try await m.edit(
                    .addActionSet(home: home, name: "A", actions: [ActionRequest(Fixture.lampOn, .string("on"))]),
                    account: admin)
            } == .invalidValueType)
        let twice = [ActionRequest(Fixture.lampOn, .bool(true)), ActionRequest(Fixture.lampOn, .bool(false))]
        #expect(
            await errorCode { try await m.edit(.addActionSet(home: home, name: "A", actions: twice), account: admin) }
                == .invalidParameter)
        #expect(try await f.home().actionSets.isEmpty)
    }

    @Test("Action sets are renamed and removed by name")
    func renameAndRemove() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addActionSet(home: home, name: "Night", actions: []), account: admin)
        try await m.edit(.renameActionSet(home: home, actionSet: "night", name: "Late Night"), account: admin)
        #expect(try await f.home().actionSets.map(\.name) == ["Late Night"])
        #expect(await errorCode { _ = try await m.executeActionSet("Night", home: home, account: admin) } == .notFound)
        try await m.edit(.removeActionSet(home: home, actionSet: "late night"), account: admin)
        #expect(try await f.home().actionSets.isEmpty)
    }
}
