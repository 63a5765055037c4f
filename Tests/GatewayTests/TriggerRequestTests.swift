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

    @Test("conditions: comparisons and time windows, with every form of event")
    func conditionForms() throws {
        let press = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Hall","accessory":"Door","service":"Contact","characteristic":"ContactSensorState","value":1,"actionSets":["On"],"conditions":[{"accessory":"Hall Sensor","service":"Light","characteristic":"CurrentAmbientLightLevel","operator":"≤","value":10},{"from":"sunset","to":"06:00"}]}"#
        )
        let light = CharacteristicReference(
            accessory: "Hall Sensor", service: "Light",
            characteristic: CharacteristicType(rawValue: "CurrentAmbientLightLevel"))
        let dark = try TimeWindow(from: TimePoint("sunset"), to: TimePoint("06:00"))
        guard case .addTrigger(_, "Hall", _, ["On"], TriggerOptions(), let conditions, false) = press else {
            Issue.record("\(press)")
            return
        }
        #expect(conditions == [.characteristic(light, .lessOrEqual, .int(10)), .time(dark)])
        let timed = try RequestBodies.request(
            "updateTrigger",
            #"{"home":"Home","trigger":"Night","time":"22:30","actionSets":["Off"],"conditions":[{"accessory":"Lamp","service":"Lightbulb","characteristic":"On","operator":"=","value":true}]}"#
        )
        #expect(
            timed
                == .edit(
                    .updateTrigger(
                        home: "Home", trigger: "Night",
                        definition: .addScheduleTrigger(
                            home: "Home", name: "Night",
                            schedule: .timeOfDay(try TimeOfDay(hour: 22, minute: 30), weekdays: Set(Weekday.allCases)),
                            actionSets: ["Off"],
                            conditions: [
                                .characteristic(
                                    CharacteristicReference(
                                        accessory: "Lamp", service: "Lightbulb", characteristic: .on),
                                    .equal, .bool(true))
                            ]))))
    }

    @Test("a malformed condition is refused with its code")
    func conditionRefusals() {
        let head = #""home":"H","name":"N","time":"07:00","actionSets":["On"]"#
        func code(_ conditions: String) -> HomeError.Code? {
            RequestBodies.code("addTrigger", "{\(head),\"conditions\":\(conditions)}")
        }
        let lamp = #""accessory":"Lamp","service":"Lightbulb","characteristic":"On""#
        #expect(code("{}") == .invalidParameter)
        #expect(code("[5]") == .invalidParameter)
        #expect(code("[{\(lamp),\"operator\":\"=>\",\"value\":1}]") == .invalidCondition)
        #expect(code("[{\(lamp),\"value\":1}]") == .missingParameter)
        #expect(code("[{\(lamp),\"operator\":\"=\"}]") == .missingParameter)
        #expect(code("[{\(lamp),\"operator\":\"=\",\"value\":[1]}]") == .invalidParameter)
        #expect(code(#"[{"from":"22:00","to":"22:00"}]"#) == .invalidCondition)
        #expect(code(#"[{"from":"25:00","to":"06:00"}]"#) == .invalidCondition)
        #expect(code(#"[{"from":"sunset+800","to":"06:00"}]"#) == .invalidCondition)
        #expect(code(#"[{"from":"22:00"}]"#) == .missingParameter)
    }

    @Test("$layout shows conditions in the request's form")
    func conditionLayout() async throws {
        let manager = try await Self.seededAtOslo()
        try await manager.edit(
            .addRangeTrigger(
                home: "Main House", name: "Bright",
                characteristic: CharacteristicReference(
                    accessory: "Floor Lamp", service: "Lightbulb", characteristic: .brightness),
                range: try ThresholdRange(minimum: 80, maximum: nil), actionSets: ["Good Night"],
                conditions: [
                    .characteristic(
                        CharacteristicReference(accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on),
                        .notEqual, .bool(false)),
                    .time(try TimeWindow(from: TimePoint("22:00"), to: TimePoint("sunrise+15"))),
                ]), account: "owner")
        let home = try await DemoFixture.mainHouse(in: manager)
        #expect(
            Rendering.layout(home).serialized.contains(
                #""conditions":[{"accessory":"Floor Lamp","service":"Lightbulb","characteristic":"On","operator":"!=","value":false},{"from":"22:00","to":"sunrise+15"}]"#
            ))
    }

    @Test("$layout shows a schedule's next firing in the home's time zone, null when none is planned")
    func nextFiringLayout() async throws {
        let manager = try await Self.seededAtOslo()
        try await manager.edit(
            .addScheduleTrigger(
                home: "Main House", name: "Late",
                schedule: .timeOfDay(try TimeOfDay(hour: 23, minute: 0), weekdays: Set(Weekday.allCases)),
                actionSets: ["Good Night"]), account: "owner")
        var home = try await DemoFixture.mainHouse(in: manager)
        #expect(
            Rendering.layout(home).serialized.contains(
                #""weekdays":["sun","mon","tue","wed","thu","fri","sat"],"nextFiring":null"#))
        let late = try #require(home.triggers.first { $0.name == "Late" })
        await manager.setNextFirings([late.id: try Date("2026-07-01T21:00:00Z", strategy: .iso8601)], home: home.id)
        home = try await DemoFixture.mainHouse(in: manager)
        #expect(Rendering.layout(home).serialized.contains(#""nextFiring":"2026-07-01T23:00:00+02:00""#))
    }

    /// The demo's manager with Main House at Oslo, for sun windows and its time zone.
    static func seededAtOslo() async throws -> HomeManager {
        let (manager, _) = try await DemoFixture.seeded()
        try await manager.edit(
            .setLocation(
                home: "Main House",
                location: try HomeLocation(latitude: 59.91, longitude: 10.75, timeZone: "Europe/Oslo")),
            account: "owner")
        return manager
    }
}
