import Foundation
import HomeModel
import JSON
import Testing

@testable import HomeKitBridge

struct BridgeNumberingTests {
    @Test("aids and iids stay with their ids, are never given twice, and survive being stored")
    func stable() throws {
        var numbering = BridgeNumbering()
        let lamp = AccessoryID("lamp")
        let sensor = AccessoryID("sensor")
        #expect(try numbering.aid(of: lamp) == 2)
        #expect(try numbering.aid(of: sensor) == 3)
        #expect(try numbering.aid(of: lamp) == 2)
        #expect(numbering.iid(of: "info", in: lamp, isInformation: true) == 1)
        #expect(numbering.iid(of: "info", .name, in: lamp, isInformation: true) == 2)
        let light = numbering.iid(of: "light", in: lamp)
        let on = numbering.iid(of: "light", .on, in: lamp)
        #expect(light == 16 && on == 17)
        #expect(numbering.iid(of: "light", in: sensor) == 16, "each accessory numbers its own")

        // Stored and read back (the home database keeps it as JSON), nothing moves
        var restored = try #require(BridgeNumbering(json: try JSON.parse(numbering.json.bytes)))
        #expect(restored == numbering)
        #expect(restored.iid(of: "light", .on, in: lamp) == on)

        // A service goes: its numbers are not given again; the accessory goes and comes back: a new aid
        restored.keep(only: [lamp: ["info"], sensor: ["light"]])
        #expect(restored.iid(of: "light", .on, in: lamp) == 18)
        restored.keep(only: [sensor: ["light"]])
        #expect(try restored.aid(of: lamp) == 4)
    }

    @Test("150 accessories with the bridge; the next is refused, naming the limit")
    func limit() throws {
        var numbering = BridgeNumbering()
        for index in 0..<149 { _ = try numbering.aid(of: AccessoryID("a\(index)")) }
        #expect(throws: HomeError.self) { try numbering.aid(of: "one too many") }
        do {
            _ = try numbering.aid(of: "one too many")
        } catch {
            #expect(error.code == .maximumObjectLimitReached && error.message.contains("149"))
        }
    }
}
