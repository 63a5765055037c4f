import Foundation
import JSON
import Schedules
import Testing

@testable import Gateway
@testable import HomeModel

/// `$events` payloads, byte for byte: clients parse them, and one is written for every value change.
@Suite("The $events messages")
struct EventMessageTests {
    static let topics = Topics()

    @Test("each event of a home names its objects as clients know them, in a fixed order")
    func homeEvents() async throws {
        let (manager, _) = try await DemoFixture.seeded()
        try await manager.edit(
            .addTrigger(
                home: "Main House", name: "Lamp Watch",
                characteristic: CharacteristicReference(
                    accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on),
                value: .bool(true), actionSets: ["Good Night"]), account: "owner")
        let home = try await DemoFixture.mainHouse(in: manager)
        let homes = [home]
        let watch = try #require(home.triggers.first)
        let kitchen = try #require(home.rooms.first { $0.name == "Kitchen" })
        let hallway = try #require(home.rooms.first { $0.name == "Hallway" })
        let downstairs = try #require(home.zones.first { $0.name == "Downstairs" })
        let lamp = try #require(home.accessories.first { $0.name == "Floor Lamp" })
        let nowhere = AccessoryID("nowhere")
        let night = try #require(home.actionSets.first { $0.name == "Good Night" })
        let user = try #require(home.users.first)
        let service = try #require(lamp.services.first { $0.characteristics.contains { $0.type == .brightness } })
        let onService = try #require(lamp.services.first { $0.characteristics.contains { $0.type == .on } })
        let onKey = ValueKey(accessory: lamp.id, service: onService.id, characteristic: .on)
        let lampOff = Action(accessory: lamp.id, service: onService.id, characteristic: .on, value: .bool(false))
        let start = #"{"event":"#
        let cases: [(HomeEvent, String)] = [
            (
                .didAddRoom(home: home.id, room: kitchen.id, name: "Kitchen"),
                #""didAddRoom","home":"Main House","room":"Kitchen"}"#
            ),
            (
                .didUpdateNameForRoom(home: home.id, room: kitchen.id, oldName: "Cookery", name: "Kitchen"),
                #""didUpdateNameForRoom","home":"Main House","room":"Kitchen","oldName":"Cookery"}"#
            ),
            (
                .didAddRoomToZone(home: home.id, room: kitchen.id, zone: downstairs.id),
                #""didAddRoomToZone","home":"Main House","room":"Kitchen","zone":"Downstairs"}"#
            ),
            (
                .didAddAccessory(home: home.id, accessory: lamp.id, name: "Floor Lamp", room: hallway.id),
                #""didAddAccessory","home":"Main House","accessory":"Floor Lamp","room":"Hallway"}"#
            ),
            (
                .didUpdateRoomForAccessory(home: home.id, accessory: lamp.id, oldRoom: kitchen.id, room: hallway.id),
                #""didUpdateRoomForAccessory","home":"Main House","accessory":"Floor Lamp","room":"Hallway","oldRoom":"Kitchen"}"#
            ),
            // An object the home no longer has is left out, not written as null.
            (
                .accessoryDidUpdateReachability(home: home.id, accessory: nowhere, isReachable: false),
                #""accessoryDidUpdateReachability","home":"Main House","reachable":false}"#
            ),
            (
                .accessoryDidUpdateReachability(home: home.id, accessory: lamp.id, isReachable: true),
                #""accessoryDidUpdateReachability","home":"Main House","accessory":"Floor Lamp","reachable":true}"#
            ),
            (
                .didAddUser(home: home.id, user: user.id, name: "Olivia"),
                #""didAddUser","home":"Main House","user":"Olivia"}"#
            ),
            (
                .didExecuteActionSet(home: home.id, actionSet: night.id, failedActions: 2),
                #""didExecuteActionSet","home":"Main House","actionSet":"Good Night","failedActions":2}"#
            ),
            (
                .didAddTrigger(home: home.id, trigger: watch.id, name: "Lamp Watch"),
                #""didAddTrigger","home":"Main House","trigger":"Lamp Watch"}"#
            ),
            (
                .didUpdateNameForTrigger(home: home.id, trigger: watch.id, oldName: "Watch", name: "Lamp Watch"),
                #""didUpdateNameForTrigger","home":"Main House","trigger":"Lamp Watch","oldName":"Watch"}"#
            ),
            (
                .didUpdateTrigger(home: home.id, trigger: watch.id, change: .enabled),
                #""didUpdateTrigger","home":"Main House","trigger":"Lamp Watch","change":"enabled","enabled":true,"actionSets":["Good Night"],"active":true}"#
            ),
            (
                .didFireTrigger(
                    home: home.id, trigger: watch.id,
                    firing: TriggerFiring(
                        trigger: "Lamp Watch", home: "Main House", cause: .value(onKey, .bool(true)),
                        actionSets: [
                            ActionSetRun(
                                name: "Good Night",
                                outcome: .success([
                                    ActionResult(action: lampOff, error: nil),
                                    ActionResult(
                                        action: lampOff,
                                        error: HomeError(.accessoryNotReachable, "The lamp is unreachable.")),
                                ]))
                        ])),
                #""didFireTrigger","home":"Main House","trigger":"Lamp Watch","failedActions":1,"cause":{"kind":"value","accessory":"Floor Lamp","service":"\#(onService.name)","characteristic":"On","value":true},"actionSets":[{"actionSet":"Good Night","actions":[{"accessory":"Floor Lamp","service":"\#(onService.name)","characteristic":"On","value":false,"ok":true},{"accessory":"Floor Lamp","service":"\#(onService.name)","characteristic":"On","value":false,"ok":false,"code":"accessoryNotReachable","message":"The lamp is unreachable."}]}]}"#
            ),
            (
                .didUpdateValueForCharacteristic(
                    home: home.id, accessory: lamp.id, service: service.id, characteristic: .brightness,
                    value: .int(42)),
                #""didUpdateValueForCharacteristic","home":"Main House","room":"Living Room","accessory":"Floor Lamp","service":"\#(service.name)","characteristic":"Brightness","value":42}"#
            ),
            // Values as the value topics have them: floats, strings escaped, data as base64.
            (
                .didUpdateValueForCharacteristic(
                    home: home.id, accessory: lamp.id, service: service.id, characteristic: .name,
                    value: .string("say \"hi\"\n\\ \u{1}")),
                #""didUpdateValueForCharacteristic","home":"Main House","room":"Living Room","accessory":"Floor Lamp","service":"\#(service.name)","characteristic":"Name","value":"say \"hi\"\n\\ \u0001"}"#
            ),
            (
                .didUpdateValueForCharacteristic(
                    home: home.id, accessory: lamp.id, service: service.id, characteristic: .hue, value: .float(21.5)),
                #""didUpdateValueForCharacteristic","home":"Main House","room":"Living Room","accessory":"Floor Lamp","service":"\#(service.name)","characteristic":"Hue","value":21.5}"#
            ),
            (
                .didUpdateValueForCharacteristic(
                    home: home.id, accessory: lamp.id, service: service.id, characteristic: .hue,
                    value: .data(Data([0, 1, 0xFF]))),
                #""didUpdateValueForCharacteristic","home":"Main House","room":"Living Room","accessory":"Floor Lamp","service":"\#(service.name)","characteristic":"Hue","value":"AAH/"}"#
            ),
        ]
        for (event, rest) in cases {
            let message = try #require(EventMessage(event, homes: homes, topics: Self.topics), "\(event)")
            #expect(message.topic == "homegate/Main House/$events")
            #expect(Self.text(message) == start + rest)
        }
        // Events of a home the account cannot see, and those with no message, have none.
        #expect(
            EventMessage(
                .didAddRoom(home: HomeID("elsewhere"), room: kitchen.id, name: "Kitchen"), homes: homes,
                topics: Self.topics) == nil)
        #expect(EventMessage(.homeManagerDidUpdateHomes, homes: homes, topics: Self.topics) == nil)
        #expect(EventMessage(.didFindNewAccessory(accessory: lamp.id), homes: homes, topics: Self.topics) == nil)
    }

    @Test("an automation whose action set was removed: $events says so, and $layout shows it doing nothing")
    func automationLosesItsActionSet() async throws {
        let (manager, _) = try await DemoFixture.seeded()
        try await manager.edit(
            .addTrigger(
                home: "Main House", name: "Lamp Watch",
                characteristic: CharacteristicReference(
                    accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on),
                value: .bool(true), actionSets: ["Good Night"]), account: "owner")
        let before = try await DemoFixture.mainHouse(in: manager)
        let watch = try #require(before.triggers.first)
        #expect(Rendering.layout(before).serialized.contains(#""name":"Lamp Watch","enabled":true,"active":true"#))

        try await manager.edit(.removeActionSet(home: "Main House", actionSet: "Good Night"), account: "owner")
        let home = try await DemoFixture.mainHouse(in: manager)
        let message = try #require(
            EventMessage(
                .didUpdateTrigger(home: home.id, trigger: watch.id, change: .actionSets), homes: [home],
                topics: Self.topics))
        #expect(
            Self.text(message)
                == #"{"event":"didUpdateTrigger","home":"Main House","trigger":"Lamp Watch","change":"actionSets","enabled":true,"actionSets":[],"active":false}"#
        )
        #expect(Rendering.layout(home).serialized.contains(#""name":"Lamp Watch","enabled":true,"active":false"#))
        #expect(Rendering.layout(home).serialized.contains(#""actionSets":[]}"#))
    }

    @Test("didFireTrigger says a range crossed, a schedule's slot, a catch-up, and an action set that could not run")
    func firingCauses() async throws {
        let (manager, _) = try await DemoFixture.seeded()
        var home = try await DemoFixture.mainHouse(in: manager)
        home.location = try HomeLocation(latitude: 59.9, longitude: 10.7, timeZone: "Europe/Oslo")
        let lamp = try #require(home.accessories.first { $0.name == "Floor Lamp" })
        let service = try #require(lamp.services.first { $0.characteristics.contains { $0.type == .brightness } })
        let key = ValueKey(accessory: lamp.id, service: service.id, characteristic: .brightness)
        // 06:30 UTC is 07:30 in Oslo in winter.
        let slot = try LocalDateTime(year: 2026, month: 12, day: 1, hour: 7, minute: 30)
        let firing = Firing(instant: Date(timeIntervalSince1970: 1_796_106_600), slot: slot)
        let due = #""slot":"2026-12-01T07:30","due":"2026-12-01T07:30:00+01:00""#
        let cases: [(FiringCause, [ActionSetRun], String)] = [
            (
                .range(key, .int(80), try ThresholdRange(minimum: 75, maximum: nil)), [],
                #"{"kind":"range","accessory":"Floor Lamp","service":"\#(service.name)","characteristic":"Brightness","value":80,"range":{"min":75}},"actionSets":[]"#
            ),
            (
                .schedule(firing),
                [ActionSetRun(name: "Gone", outcome: .failure(HomeError(.notFound, "No action set 'Gone'.")))],
                #"{"kind":"schedule",\#(due)},"actionSets":[{"actionSet":"Gone","code":"notFound","message":"No action set 'Gone'."}]"#
            ),
            (.catchUp(firing), [], #"{"kind":"catchUp",\#(due)},"actionSets":[]"#),
        ]
        for (cause, runs, expected) in cases {
            let event = HomeEvent.didFireTrigger(
                home: home.id, trigger: TriggerID("t"),
                firing: TriggerFiring(trigger: "Wake", home: "Main House", cause: cause, actionSets: runs))
            let message = try #require(EventMessage(event, homes: [home], topics: Self.topics))
            #expect(
                Self.text(message)
                    == #"{"event":"didFireTrigger","home":"Main House","failedActions":\#(runs.count),"cause":\#(expected)}"#
            )
        }
    }

    @Test("the manager's events go to B/$events; a primary home that is gone is null")
    func managerEvents() async throws {
        let (manager, _) = try await DemoFixture.seeded()
        let home = try await DemoFixture.mainHouse(in: manager)
        let homes = [home]
        let cases: [(HomeEvent, String)] = [
            (.didAddHome(home: home.id, name: "Main House"), #"{"event":"didAddHome","home":"Main House"}"#),
            (
                .didUpdateNameForHome(home: home.id, oldName: "Old House", name: "Main House"),
                #"{"event":"didUpdateNameForHome","home":"Main House","oldName":"Old House"}"#
            ),
            (.didUpdatePrimaryHome(home: home.id), #"{"event":"didUpdatePrimaryHome","home":"Main House"}"#),
            (.didUpdatePrimaryHome(home: nil), #"{"event":"didUpdatePrimaryHome","home":null}"#),
        ]
        for (event, payload) in cases {
            let message = try #require(EventMessage(event, homes: homes, topics: Self.topics), "\(event)")
            #expect(message.topic == "homegate/$events")
            #expect(Self.text(message) == payload)
        }
    }

    static func text(_ message: EventMessage) -> String { String(decoding: message.payload, as: UTF8.self) }
}
