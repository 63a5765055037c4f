import Foundation
import JSON
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
    @Test("equal to a full rendering after each change, with one cache kept throughout")
    func equalToFullRendering() async throws {
        let (manager, driver) = try await DemoFixture.seeded()
        var fragments = LayoutFragments()

        func check(_ after: String) async throws {
            let home = try await manager.home("Main House", account: "owner")
            let spliced = String(decoding: Rendering.layoutBytes(home, fragments: &fragments), as: UTF8.self)
            let full = Rendering.layout(home).serialized
            let same = spliced == full
            #expect(same, "after \(after): the spliced layout differs from the full rendering")
        }

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
}

extension Rendering {
    /// `$layout` rendered as one JSON tree, with no remembered entries: what the spliced bytes must equal.
    static func layout(_ home: Home) -> JSON {
        .object(
            layoutHead(home) + [("accessories", .array(home.accessories.map { accessoryLayout($0, in: home) }))]
                + layoutTail(home))
    }
}
