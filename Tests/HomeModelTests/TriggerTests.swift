import AsyncMailbox
import Foundation
import HomeModel
import Schedules
import TestSupport
import Testing
import VirtualDevices

/// Automations in the model: their rules, what removing their objects does to them, and the file.
@Suite("Automations in the model")
struct TriggerTests {
    let home = Fixture.home
    let admin = Fixture.admin

    /// The fixture with an action set "Night" (lamp off) and an automation "Lamp Watch" that runs
    /// it when the lamp turns on.
    func make(database: HomeDatabase? = nil) async throws -> Fixture {
        let f = try await Fixture.make(database: database)
        try await f.manager.edit(
            .addActionSet(home: home, name: "Night", actions: [ActionRequest(Fixture.lampOn, .bool(false))]),
            account: admin)
        try await f.manager.edit(
            .addTrigger(
                home: home, name: "Lamp Watch", characteristic: Fixture.lampOn, value: .int(1), actionSets: ["night"]),
            account: admin)
        return f
    }

    @Test("an automation is added by the administrator only, checked, and announced")
    func rules() async throws {
        let f = try await make()
        let m = f.manager
        let trigger = try #require(try await f.home().triggers.first)
        #expect(trigger.name == "Lamp Watch")
        #expect(trigger.isEnabled)
        // The value is kept in the characteristic's format (1 is true for a bool)
        #expect(trigger.value == .bool(true))
        #expect(trigger.actionSets == [try #require(try await f.home().actionSets.first?.id)])

        func add(
            _ name: String, _ target: CharacteristicReference = Fixture.lampOn, value: CharacteristicValue? = nil,
            running actionSets: [String] = ["Night"], as account: String = Fixture.admin
        ) async -> HomeError.Code? {
            await errorCode {
                try await m.edit(
                    .addTrigger(
                        home: home, name: name, characteristic: target, value: value, actionSets: actionSets),
                    account: account)
            }
        }
        #expect(await add("Guest Watch", as: Fixture.guest) == .insufficientPrivileges)
        #expect(await add("Stranger Watch", as: Fixture.stranger) == .insufficientPrivileges)
        // One namespace with rooms, accessories and action sets
        #expect(await add("lamp watch") == .objectWithSimilarNameExistsInHome)
        #expect(await add("Night") == .objectWithSimilarNameExistsInHome)
        #expect(await add("Bad/Name") != nil)
        #expect(await add("No Sets", value: .bool(true), running: []) == .missingParameter)
        #expect(await add("Twice", running: ["Night", "night"]) == .invalidParameter)
        #expect(await add("Unknown Set", running: ["Morning"]) == .notFound)
        #expect(await add("Brightness 200", Fixture.lampBrightness, value: .int(200)) == .valueHigherThanMaximum)
        let missing = CharacteristicReference(
            accessory: "Lamp", service: "Lightbulb", characteristic: .lockCurrentState)
        #expect(await add("Nothing", missing) == .notFound)
        #expect(try await f.home().triggers.count == 1)

        // Renamed, turned off and on, removed, each announced
        let events = await m.events()
        var iterator = events.makeAsyncIterator()
        try await m.edit(.renameTrigger(home: home, trigger: "lamp watch", name: "Lamp Guard"), account: admin)
        try await m.edit(.enableTrigger(home: home, trigger: "Lamp Guard", enabled: false), account: admin)
        try await m.edit(.enableTrigger(home: home, trigger: "Lamp Guard", enabled: false), account: admin)
        #expect(try await f.home().triggers.first?.isEnabled == false)
        #expect(
            await errorCode {
                try await m.edit(
                    .enableTrigger(home: home, trigger: "Lamp Guard", enabled: true), account: Fixture.guest)
            } == .insufficientPrivileges)
        try await m.edit(.removeTrigger(home: home, trigger: "Lamp Guard"), account: admin)
        let homeID = try await f.home().id
        #expect(
            await take(4, from: &iterator) == [
                .homeManagerDidUpdateHomes,
                .didUpdateNameForTrigger(home: homeID, trigger: trigger.id, oldName: "Lamp Watch", name: "Lamp Guard"),
                .didUpdateTrigger(home: homeID, trigger: trigger.id, change: .enabled),
                .didRemoveTrigger(home: homeID, trigger: trigger.id, name: "Lamp Guard"),
            ])
        #expect(
            await errorCode { try await m.edit(.removeTrigger(home: home, trigger: "Lamp Guard"), account: admin) }
                == .notFound)
    }

    @Test("removing its action set leaves the automation with the rest; removing its accessory removes it")
    func cascades() async throws {
        let f = try await make()
        let m = f.manager
        let homeID = try await f.home().id
        let trigger = try #require(try await f.home().triggers.first)
        let events = await m.events()
        var iterator = events.makeAsyncIterator()
        try await m.edit(.removeActionSet(home: home, actionSet: "Night"), account: admin)
        #expect(try await f.home().triggers.first?.actionSets == [])
        try await m.edit(.removeAccessory(home: home, accessory: "Lamp"), account: admin)
        #expect(try await f.home().triggers.isEmpty)
        let seen = await take(5, from: &iterator)
        #expect(seen.contains(.didUpdateTrigger(home: homeID, trigger: trigger.id, change: .actionSets)))
        #expect(seen.contains(.didRemoveTrigger(home: homeID, trigger: trigger.id, name: "Lamp Watch")))
    }

    @Test(
        "updateTrigger gives an automation that lost its action sets new ones, or another event; checked as a new one, administrator only"
    )
    func update() async throws {
        let f = try await make()
        let m = f.manager
        let homeID = try await f.home().id
        let trigger = try #require(try await f.home().triggers.first)
        try await m.edit(.removeActionSet(home: home, actionSet: "Night"), account: admin)
        #expect(try await f.home().triggers.first?.isActive == false)
        try await m.edit(
            .addActionSet(home: home, name: "Dim", actions: [ActionRequest(Fixture.lampBrightness, .int(10))]),
            account: admin)
        var events = await m.events().makeAsyncIterator()
        func definition(_ actionSets: [String], value: CharacteristicValue? = .bool(false)) -> HomeEdit {
            .addTrigger(
                home: home, name: "ignored", characteristic: Fixture.lampOn, value: value, actionSets: actionSets)
        }
        try await m.edit(
            .updateTrigger(home: home, trigger: "lamp watch", definition: definition(["Dim"])), account: admin)
        let updated = try #require(try await f.home().triggers.first)
        #expect(updated.id == trigger.id && updated.name == "Lamp Watch" && updated.isEnabled && updated.isActive)
        #expect(updated.value == .bool(false))
        #expect(updated.actionSets == [try #require(try await f.home().actionSets.first { $0.name == "Dim" }?.id)])
        let seen = await take(2, from: &events)
        #expect(seen.contains(.didUpdateTrigger(home: homeID, trigger: trigger.id, change: .definition)), "\(seen)")

        // Checked as a new automation, and nothing changes when it is refused
        func update(_ edit: HomeEdit, as account: String = Fixture.admin) async -> HomeError.Code? {
            await errorCode {
                try await m.edit(.updateTrigger(home: home, trigger: "Lamp Watch", definition: edit), account: account)
            }
        }
        #expect(await update(definition([])) == .missingParameter)
        #expect(await update(definition(["Morning"])) == .notFound)
        #expect(await update(definition(["Dim"]), as: Fixture.guest) == .insufficientPrivileges)
        #expect(await update(.renameRoom(home: home, room: "Kitchen", name: "Cuisine")) == .invalidParameter)
        #expect(
            await errorCode {
                try await m.edit(
                    .updateTrigger(home: home, trigger: "Nobody", definition: definition(["Dim"])), account: admin)
            } == .notFound)
        #expect(try await f.home().triggers.first == updated)

        // Another kind of event: a time of day
        let morning = try TimeOfDay(hour: 7, minute: 30)
        try await m.edit(
            .updateTrigger(
                home: home, trigger: "Lamp Watch",
                definition: .addScheduleTrigger(
                    home: home, name: "ignored", schedule: .timeOfDay(morning, weekdays: Set(Weekday.allCases)),
                    actionSets: ["Dim"])), account: admin)
        #expect(
            try await f.home().triggers.first?.event == .schedule(.timeOfDay(morning, weekdays: Set(Weekday.allCases))))
        #expect(try await f.home().triggers.first?.id == trigger.id)
    }

    @Test("automations are on disk: after a restart they are as they were, and one with no value stays so")
    func persisted() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await make(database: HomeDatabase.open(atPath: path))
            let m = f.manager
            try await m.edit(
                .addActionSet(
                    home: home, name: "Morning", actions: [ActionRequest(Fixture.lampBrightness, .int(80))]),
                account: admin)
            try await m.edit(
                .addTrigger(
                    home: home, name: "Any Change", characteristic: Fixture.lampBrightness, value: nil,
                    actionSets: ["Morning", "Night"]), account: admin)
            try await m.edit(.enableTrigger(home: home, trigger: "Lamp Watch", enabled: false), account: admin)
            let before = try await f.home().triggers
            await m.shutdown()

            let reloaded = try HomeManager(database: HomeDatabase.open(atPath: path))
            let after = try await reloaded.home(home, account: admin).triggers
            #expect(after == before)
            #expect(after.map(\.value) == [.bool(true), nil])
            #expect(after.map(\.isEnabled) == [false, true])
            #expect(after.last?.actionSets.count == 2)
        }
    }
}

extension Trigger {
    /// A characteristic event's value, as the tests read it.
    var value: CharacteristicValue? {
        guard case .characteristic(_, let value) = event else { return nil }
        return value
    }
}
