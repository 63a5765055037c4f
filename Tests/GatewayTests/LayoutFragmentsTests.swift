import Foundation
import JSON
import Schedules
import TestSupport
import Testing
import VirtualDevices

@testable import Gateway
@testable import HomeModel

/// `$layout` spliced from remembered accessory entries must be the bytes a full rendering gives, after
/// every change that alters what an entry shows: its own name, room and reachability, its room's name,
/// its bridge's name.
@Suite("The layout from remembered accessory entries")
struct LayoutFragmentsTests {
    /// Expects Main House's layout spliced from `fragments` to be the bytes of a full rendering.
    static func expectSpliced(
        _ manager: HomeManager, _ fragments: inout LayoutFragments, after change: String
    ) async throws {
        let home = try await manager.home("Main House", account: "owner")
        let spliced = String(decoding: Rendering.layoutBytes(home, fragments: &fragments), as: UTF8.self)
        #expect(spliced == Rendering.layout(home).serialized, "after \(change): the spliced layout differs")
    }

    @Test("equal to a full rendering after each change, with one cache kept throughout")
    func equalToFullRendering() async throws {
        let (manager, driver) = try await DemoFixture.seeded()
        var fragments = LayoutFragments()

        func check(_ after: String) async throws { try await Self.expectSpliced(manager, &fragments, after: after) }

        try await check("the start")
        try await check("nothing")
        await driver.setReachable(false, "living-lamp")
        // The driver's report reaches the model through its stream: wait for the state
        try await eventually("the lamp unreachable in the model") {
            try await manager.home("Main House", account: "owner").accessory("living-lamp")?.isReachable == false
        }
        try await check("a lamp unreachable")
        try await manager.edit(
            .renameAccessory(home: "Main House", accessory: "Floor Lamp", name: "Reading Lamp"), account: "owner")
        try await check("a rename")
        try await manager.edit(.renameRoom(home: "Main House", room: "Living Room", name: "Lounge"), account: "owner")
        try await check("its room renamed")
        try await manager.edit(
            .renameAccessory(home: "Main House", accessory: "Hue Bridge", name: "Philips Bridge"), account: "owner")
        try await check("a bridge renamed (its bridged accessories name it)")
        try await manager.edit(
            .assignAccessory(home: "Main House", accessory: "Reading Lamp", room: "Kitchen"), account: "owner")
        try await check("a move")
        try await manager.edit(.removeAccessory(home: "Main House", accessory: "Philips Bridge"), account: "owner")
        try await check("a bridge removed with its bridged accessories")
    }

    @Test("the automations' entries too: a next firing moved, an action set or accessory renamed, the location")
    func automations() async throws {
        let (manager, _) = try await DemoFixture.seeded()
        var fragments = LayoutFragments()
        func check(_ after: String) async throws { try await Self.expectSpliced(manager, &fragments, after: after) }
        let at = try TimeOfDay(hour: 22, minute: 30)
        for name in ["Late", "Later"] {
            try await manager.edit(
                .addScheduleTrigger(
                    home: "Main House", name: name, schedule: .timeOfDay(at, weekdays: [.monday]),
                    actionSets: ["Good Night"]), account: "owner")
        }
        let lamp = CharacteristicReference(accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on)
        try await manager.edit(
            .addTrigger(
                home: "Main House", name: "Lamp Follows", characteristic: lamp, value: .bool(true),
                actionSets: ["Good Morning"]), account: "owner")
        try await check("the start")
        let home = try await manager.home("Main House", account: "owner")
        let late = try #require(home.triggers.first { $0.name == "Late" }).id
        await manager.setNextFirings([late: Date(timeIntervalSince1970: 1_800_000_000)], home: home.id)
        try await check("a next firing planned")
        await manager.setNextFirings([late: Date(timeIntervalSince1970: 1_800_086_400)], home: home.id)
        try await check("it moved")
        let tokyo = try HomeLocation(latitude: 35.68, longitude: 139.69, timeZone: "Asia/Tokyo")
        let edits: [(HomeEdit, String)] = [
            (.setLocation(home: "Main House", location: tokyo), "the home's time zone changed"),
            (.renameActionSet(home: "Main House", actionSet: "Good Night", name: "Sleep"), "its action set renamed"),
            (
                .renameAccessory(home: "Main House", accessory: "Floor Lamp", name: "Reading Lamp"),
                "the accessory an automation waits on renamed"
            ),
            (.enableTrigger(home: "Main House", trigger: "Later", enabled: false), "one turned off"),
            (.removeTrigger(home: "Main House", trigger: "Late"), "one removed"),
        ]
        for (edit, after) in edits {
            try await manager.edit(edit, account: "owner")
            try await check(after)
        }
    }
}

extension Rendering {
    /// `$layout` rendered as one JSON tree, with no remembered entries: what the spliced bytes must equal.
    static func layout(_ home: Home) -> JSON {
        .object(
            layoutHead(home) + [("accessories", .array(home.accessories.map { accessoryLayout($0, in: home) }))]
                + layoutTail(home))
    }
}
