import Execution
import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing
import VirtualDevices

/// The publisher renders only the parts of the view a change touches. After every kind of change,
/// what the broker holds must be byte for byte what rendering the whole model gives.
@Suite(.timeLimit(.minutes(3)))
struct IncrementalPublishingTests {
    @Test func everyKindOfChangeLeavesTheBrokerExactlyAsAFullRenderingWould() async throws {
        try await withGateway(homeAssistant: true) { gateway in
            try await withAccount("owner", to: gateway.broker) { owner in
                func request(_ operation: String, _ body: String) async throws {
                    let answer = try await owner.request(operation, body)
                    #expect(answer.isOK, "\(operation) \(body): \(answer.serialized)")
                    try await expectBrokerHoldsTheFullView(gateway, owner, after: "\(operation) \(body)")
                }
                let home = #""home":"Main House""#
                try await request("addRoom", #"{\#(home),"name":"Attic"}"#)
                try await request("renameRoom", #"{\#(home),"room":"Kitchen","name":"Galley"}"#)
                try await request("assignAccessory", #"{\#(home),"accessory":"Floor Lamp","room":"Attic"}"#)
                try await request("renameAccessory", #"{\#(home),"accessory":"Hue Bridge","name":"Bridge"}"#)
                try await request("renameAccessory", #"{\#(home),"accessory":"Desk Lamp","name":"Reading Lamp"}"#)
                try await request("addZone", #"{\#(home),"name":"Roof"}"#)
                try await request("addRoomToZone", #"{\#(home),"room":"Attic","zone":"Roof"}"#)
                try await request("renameZone", #"{\#(home),"zone":"Roof","name":"Top"}"#)
                try await request("removeRoomFromZone", #"{\#(home),"room":"Attic","zone":"Top"}"#)
                try await request("removeZone", #"{\#(home),"zone":"Top"}"#)
                try await request(
                    "addActionSet",
                    #"{\#(home),"name":"Glow","actions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"Brightness","value":30}]}"#
                )
                try await request("renameActionSet", #"{\#(home),"actionSet":"Glow","name":"Soft Glow"}"#)
                try await request("removeActionSet", #"{\#(home),"actionSet":"Soft Glow"}"#)
                try await request("removeUser", #"{\#(home),"user":"Home Assistant"}"#)
                try await request("addUser", #"{\#(home),"account":"homeassistant","name":"HA"}"#)
                try await request("removeRoom", #"{\#(home),"room":"Attic"}"#)
                try await request("removeAccessory", #"{\#(home),"accessory":"Bridge"}"#)
                try await request("addAccessory", #"{\#(home),"accessory":"hue-bridge","room":"Office"}"#)
                try await request("addHome", #"{"name":"Boat"}"#)
                try await request("setPrimaryHome", #"{"home":"Boat"}"#)
                try await request("renameHome", #"{"home":"Lake Cabin","name":"Cabin"}"#)
                try await request("removeHome", #"{"home":"Boat"}"#)

                // Reachability: the accessory and its home's layout.
                await gateway.driver.setReachable(false, "coffee-outlet")
                try await expectBrokerHoldsTheFullView(gateway, owner, after: "coffee-outlet unreachable")
                await gateway.driver.setReachable(true, "coffee-outlet")
                try await expectBrokerHoldsTheFullView(gateway, owner, after: "coffee-outlet reachable")
            }
        }
    }

    @Test func flapsComeOutAtOnceAndTheirHomesLayoutOnceForAllOfThem() async throws {
        // The late `$layout` waits on this clock, so "the flaps of a second" are the flaps before the
        // test moves it, however slow the machine.
        let clock = ManualClock()
        try await withGateway(clock: AnyClock(clock)) { gateway in
            try await withAccount("owner", to: gateway.broker) { owner in
                let layout = "homegate/Main House/$layout"
                let reachable = "homegate/Main House/Living Room/Floor Lamp/$reachable"
                try await owner.client.subscribe(to: [layout, reachable])
                _ = try await owner.inbox.next { $0.topic == layout }
                try await owner.receive("true", on: reachable)
                // Nine flaps, each out on $reachable at once: the lamp ends unreachable
                for flap in 1...9 {
                    let isReachable = flap % 2 == 0
                    await gateway.driver.setReachable(isReachable, "living-lamp")
                    try await owner.receive(isReachable ? "true" : "false", on: reachable)
                }
                // Their layout is due one delay after the first flap: one rendering for all nine
                clock.advance(by: .seconds(1))
                let late = try JSON.parse(try await owner.inbox.next { $0.topic == layout }.payload)
                #expect(Self.lampIsReachable(in: late) == false)
                // A room added now renders the home's $layout at once; nothing came between
                let added = try await owner.request("addRoom", #"{"home":"Main House","name":"Marker"}"#)
                #expect(added.isOK, "\(added.serialized)")
                let next = try JSON.parse(try await owner.inbox.next { $0.topic == layout }.payload)
                guard case .array(let rooms) = next["rooms"] else { throw TimedOut("no rooms") }
                #expect(
                    rooms.contains { $0["name"] == .string("Marker") },
                    "a layout came between the flaps' and the room's")
                #expect(Self.lampIsReachable(in: next) == false)
            }
        }
    }

    private static func lampIsReachable(in layout: JSON) -> Bool? {
        guard case .array(let accessories) = layout["accessories"] else { return nil }
        guard
            case .bool(let reachable) = accessories.first(where: { $0["name"] == .string("Floor Lamp") })?["reachable"]
        else { return nil }
        return reachable
    }

    /// Waits until the broker's retained payloads under the base topic and the discovery prefix are
    /// exactly the full view of the model (rendered in one piece), or throws with the difference.
    private func expectBrokerHoldsTheFullView(
        _ gateway: RunningGateway, _ account: Account, after change: String
    ) async throws {
        var difference: [String] = []
        try await eventually(
            "after \(change), the broker to hold the full view (it differs at \(difference.prefix(10)))"
        ) {
            let snapshot = await HomeSnapshot(of: gateway.manager)
            let full = RetainedView(
                homes: snapshot.homes, discovered: snapshot.discovered, topics: gateway.topics,
                homeAssistant: gateway.homeAssistant)
            var held: [String: [UInt8]] = [:]
            for filter in ["homegate/#", "homeassistant/#"] {
                for (topic, payload) in try await account.retainedMessages(under: filter) { held[topic] = payload }
            }
            held[gateway.topics.status] = nil
            held[gateway.topics.health] = nil
            difference = Set(held.keys).union(full.topics).filter { held[$0] != full[$0] }.sorted()
            return difference.isEmpty
        }
    }
}
