import Foundation
import JSON
import Schedules
import Testing

@testable import Gateway
@testable import HomeModel

/// `addTrigger`'s range events (and, below, conditions), read from their bodies and shown in
/// `$layout`: each form as the model gets it, each malformed body refused with its code before
/// anything runs.
@Suite("Trigger requests")
struct TriggerRequestTests {
    static let humidity = CharacteristicReference(
        accessory: "Bathroom Sensor", service: "Humidity",
        characteristic: CharacteristicType(rawValue: "CurrentRelativeHumidity"))

    @Test("a range names its characteristic as a characteristic event does, with min, max or both")
    func rangeForms() throws {
        let above = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Fan","accessory":"Bathroom Sensor","service":"Humidity","characteristic":"CurrentRelativeHumidity","range":{"min":70},"actionSets":["Fan On"]}"#
        )
        #expect(
            above
                == .edit(
                    .addRangeTrigger(
                        home: "Home", name: "Fan", characteristic: Self.humidity,
                        range: try ThresholdRange(minimum: 70, maximum: nil), actionSets: ["Fan On"])))
        let between = try RequestBodies.request(
            "updateTrigger",
            #"{"home":"Home","trigger":"Fan","accessory":"Bathroom Sensor","service":"Humidity","characteristic":"CurrentRelativeHumidity","range":{"min":40.5,"max":60},"actionSets":["Fan On"],"turnBackAfter":600}"#
        )
        #expect(
            between
                == .edit(
                    .updateTrigger(
                        home: "Home", trigger: "Fan",
                        definition: .addRangeTrigger(
                            home: "Home", name: "Fan", characteristic: Self.humidity,
                            range: try ThresholdRange(minimum: 40.5, maximum: 60), actionSets: ["Fan On"],
                            options: TriggerOptions(turnBackAfter: .seconds(600))))))
    }

    @Test("a malformed range is refused with its code")
    func rangeRefusals() {
        let head =
            #""home":"H","name":"N","accessory":"S","service":"Humidity","characteristic":"CurrentRelativeHumidity","actionSets":["On"]"#
        #expect(RequestBodies.code("addTrigger", "{\(head),\"range\":{\"min\":80,\"max\":70}}") == .invalidRange)
        #expect(RequestBodies.code("addTrigger", "{\(head),\"range\":{}}") == .invalidRange)
        #expect(RequestBodies.code("addTrigger", "{\(head),\"range\":70}") == .invalidParameter)
        #expect(RequestBodies.code("addTrigger", "{\(head),\"range\":{\"min\":\"70\"}}") == .invalidParameter)
        // A range is one event: with a time it is two
        #expect(
            RequestBodies.code("addTrigger", "{\(head),\"range\":{\"min\":1},\"time\":\"07:00\"}") == .invalidParameter)
        // Its characteristic is named in full
        #expect(
            RequestBodies.code("addTrigger", #"{"home":"H","name":"N","range":{"min":1},"actionSets":["On"]}"#)
                == .missingParameter)
    }

    @Test("$layout shows a range automation in the request's form")
    func rangeLayout() async throws {
        let (manager, _) = try await DemoFixture.seeded()
        try await manager.edit(
            .addRangeTrigger(
                home: "Main House", name: "Bright",
                characteristic: CharacteristicReference(
                    accessory: "Floor Lamp", service: "Lightbulb", characteristic: .brightness),
                range: try ThresholdRange(minimum: 80, maximum: nil), actionSets: ["Good Night"]), account: "owner")
        let home = try await DemoFixture.mainHouse(in: manager)
        #expect(
            Rendering.layout(home).serialized.contains(
                #""name":"Bright","enabled":true,"active":true,"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"Brightness","range":{"min":80},"actionSets":["Good Night"]"#
            ))
    }
}
