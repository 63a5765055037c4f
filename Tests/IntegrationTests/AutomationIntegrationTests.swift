import Foundation
import JSON
import MQTT
import TestSupport
import Testing

/// Automations end to end: a real mosquitto, zigbee2mqtt's stand-in with its recorded weather
/// sensor, and the gateway. A temperature the device publishes crosses into an automation's range
/// and its action set runs, unless its condition fails.
@Suite(.timeLimit(.minutes(3)))
struct AutomationIntegrationTests {
    static let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb"
    static let events = "homegate/Main House/$events"

    @Test func aValueCrossingIntoARangeRunsTheActionSetWhenItsConditionHolds() async throws {
        try await withGateway(zigbee2mqtt: ["weather_sensor"]) { gateway in
            let zigbee = try #require(gateway.zigbee)
            try await withAccount("owner", to: gateway.broker) { owner in
                _ = try await owner.retainedJSON("homegate/$discovered") {
                    Zigbee2MQTTEndToEndTests.entry(Zigbee2MQTTEndToEndTests.weather, in: $0) != nil
                }
                try await owner.addToMainHouse([(Zigbee2MQTTEndToEndTests.weather, "Bathroom", "Weather")])
                let temperature = "homegate/Main House/Bathroom/Weather/Temperature/CurrentTemperature"
                #expect(try await owner.retained(temperature, becomes: "-0.85"))
                #expect(try await owner.command("\(Self.lamp)/On/set/owner", "false").isOK)
                #expect(try await owner.command("\(Self.lamp)/Brightness/set/owner", "10").isOK)
                try await owner.retained("\(Self.lamp)/On", becomes: "false")
                for (name, characteristic, value) in [("Lamp On", "On", "true"), ("Lamp Half", "Brightness", "50")] {
                    let body =
                        #"{"home":"Main House","name":"\#(name)","actions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"\#(characteristic)","value":\#(value)}]}"#
                    #expect(try await owner.request("addActionSet", body).isOK)
                }

                // Refused: a range on a bool, an order on a bool
                let event = #""accessory":"Weather","service":"Temperature","characteristic":"CurrentTemperature""#
                let onBool = try await owner.request(
                    "addTrigger",
                    #"{"home":"Main House","name":"X","accessory":"Floor Lamp","service":"Lightbulb","characteristic":"On","range":{"min":1},"actionSets":["Lamp On"]}"#
                )
                #expect(onBool.code == "invalidRange", "\(onBool.serialized)")
                let orderOnBool = try await owner.request(
                    "addTrigger",
                    #"{"home":"Main House","name":"X",\#(event),"range":{"min":25},"actionSets":["Lamp On"],"conditions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"On","operator":"<","value":true}]}"#
                )
                #expect(orderOnBool.code == "invalidCondition", "\(orderOnBool.serialized)")

                // Warm runs only while the lamp is at half brightness; Sentinel, made after it, has no condition
                let warm = try await owner.request(
                    "addTrigger",
                    #"{"home":"Main House","name":"Warm",\#(event),"range":{"min":25},"actionSets":["Lamp On"],"conditions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"Brightness","operator":"=","value":50}]}"#
                )
                #expect(warm.isOK, "\(warm.serialized)")
                let sentinel = try await owner.request(
                    "addTrigger",
                    #"{"home":"Main House","name":"Sentinel",\#(event),"range":{"min":25},"actionSets":["Lamp Half"]}"#)
                #expect(sentinel.isOK, "\(sentinel.serialized)")
                let layout = try await owner.retainedJSON("homegate/Main House/$layout") {
                    if case .array(let triggers) = $0["triggers"] { triggers.count == 2 } else { false }
                }
                #expect(layout.serialized.contains(#""range":{"min":25}"#), "\(layout.serialized)")
                #expect(
                    layout.serialized.contains(
                        #""conditions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"Brightness","operator":"=","value":50}]"#
                    ), "\(layout.serialized)")
                try await owner.client.subscribe(to: [Self.events])

                // The first crossing: Warm's condition fails (brightness 10), so only Sentinel fires
                try await zigbee.publishState("weather_sensor", Array(#"{"temperature":26.5}"#.utf8), retain: false)
                let first = try await Self.firingEvents(until: "Sentinel", owner: owner)
                #expect(first.map { $0["trigger"]?.stringValue } == ["Sentinel"])
                // It says what set it off and what its action did
                #expect(
                    first.last?["cause"]?.serialized
                        == #"{"kind":"range","accessory":"Weather","service":"Temperature","characteristic":"CurrentTemperature","value":26.5,"range":{"min":25}}"#
                )
                #expect(
                    first.last?["actionSets"]?.serialized
                        == #"[{"actionSet":"Lamp Half","actions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"Brightness","value":50,"ok":true}]}]"#
                )
                try await owner.retained("\(Self.lamp)/Brightness", becomes: "50")
                #expect(try await owner.retained("\(Self.lamp)/On") == "false")

                // Staying inside fires nothing; out and in again fires both, and Warm's condition now holds
                try await zigbee.publishState("weather_sensor", Array(#"{"temperature":27}"#.utf8), retain: false)
                try await zigbee.publishState("weather_sensor", Array(#"{"temperature":20}"#.utf8), retain: false)
                try await zigbee.publishState("weather_sensor", Array(#"{"temperature":25}"#.utf8), retain: false)
                #expect(try await Self.firings(until: "Sentinel", owner: owner) == ["Warm", "Sentinel"])
                #expect(try await owner.retained("\(Self.lamp)/On", becomes: "true"))
            }
        }
    }

    /// The automations that fired (`didFireTrigger` on `$events`), in order, until `last` did.
    static func firings(until last: String, owner: Account) async throws -> [String] {
        try await firingEvents(until: last, owner: owner).map { $0["trigger"]?.stringValue ?? "?" }
    }

    /// The `didFireTrigger` events on `$events`, in order, until `last`'s.
    static func firingEvents(until last: String, owner: Account) async throws -> [JSON] {
        var fired: [JSON] = []
        while fired.last?["trigger"]?.stringValue != last {
            let message = try await owner.inbox.next("\(last) firing") {
                $0.topic == events && $0.payloadString?.contains(#""event":"didFireTrigger""#) == true
            }
            fired.append(try JSON.parse(try #require(message.payloadString)))
        }
        return fired
    }
}
