import Foundation
import HomeModel
import Schedules
import TestSupport
import Testing

/// Automations' conditions in the model: their checks, how they are judged on the home as it is,
/// and the file.
@Suite("Conditions in the model")
struct ConditionTests {
    let home = Fixture.home
    let admin = Fixture.admin
    static let temperature = CharacteristicReference(
        accessory: "Thermostat", service: "Thermostat", characteristic: .currentTemperature)

    func make(database: HomeDatabase? = nil) async throws -> Fixture {
        try await Fixture.withNight(database: database)
    }

    func add(_ f: Fixture, _ conditions: [ConditionRequest], name: String = "Night Time") async throws {
        try await f.manager.edit(
            .addScheduleTrigger(
                home: home, name: name,
                schedule: .timeOfDay(try TimeOfDay(hour: 22, minute: 0), weekdays: Set(Weekday.allCases)),
                actionSets: ["Night"], conditions: conditions), account: admin)
    }

    @Test(
        "a comparison needs a readable characteristic, an order a number, a value of its format; a sun window the location"
    )
    func checks() async throws {
        let f = try await make()
        #expect(
            await errorCode { try await add(f, [.characteristic(Fixture.lampOn, .less, .bool(true))]) }
                == .invalidCondition)
        #expect(
            await errorCode { try await add(f, [.characteristic(Fixture.lampOn, .equal, .string("yes"))]) }
                == .invalidValueType)
        #expect(
            await errorCode { try await add(f, [.characteristic(Fixture.lampBrightness, .greater, .int(500))]) }
                == .valueHigherThanMaximum)
        let dusk = try TimeWindow(from: TimePoint("sunset"), to: TimePoint("06:00"))
        #expect(await errorCode { try await add(f, [.time(dusk)]) } == .locationRequired)
        // Nothing was added by the refusals
        #expect(try await f.home().triggers.isEmpty)
    }

    @Test("conditions are judged on the values and clock of the moment; all must hold")
    func judged() async throws {
        let f = try await make()
        let night = try TimeWindow(from: TimePoint("22:00"), to: TimePoint("06:00"))
        try await f.manager.edit(
            .setLocation(
                home: home, location: try HomeLocation(latitude: 59.91, longitude: 10.75, timeZone: "Europe/Oslo")),
            account: admin)
        try await add(f, [.characteristic(Fixture.lampOn, .equal, .int(1)), .time(night)])
        let trigger = try #require(try await f.home().triggers.first)
        let late = try Date("2026-11-29T23:00:00+01:00", strategy: .iso8601)
        let noon = try Date("2026-11-29T12:00:00+01:00", strategy: .iso8601)
        // The lamp is off: the comparison fails at any hour
        try await f.manager.writeValue(.bool(false), to: Fixture.lampOn, home: home, account: admin)
        #expect(!(try await f.manager.conditionsHold(trigger.id, home: f.home().id, at: late)))
        try await f.manager.writeValue(.bool(true), to: Fixture.lampOn, home: home, account: admin)
        #expect(try await f.manager.conditionsHold(trigger.id, home: f.home().id, at: late))
        #expect(!(try await f.manager.conditionsHold(trigger.id, home: f.home().id, at: noon)))
        // A firing whose conditions fail runs nothing and says so
        let firing = try #require(
            await f.manager.fireTrigger(
                trigger.id, home: try f.home().id,
                cause: .scheduled(at: noon),
                at: noon))
        #expect(firing.conditionsFailed && firing.actionSets.isEmpty)
        #expect(try await f.value("lamp", .on) == .bool(true))
        let fired = try #require(
            await f.manager.fireTrigger(
                trigger.id, home: try f.home().id,
                cause: .scheduled(at: late),
                at: late))
        #expect(!fired.conditionsFailed && fired.actionSets.count == 1)
        #expect(try await f.value("lamp", .on) == .bool(false))
    }

    @Test("numbers compare by value; = and != hold for any value, the orders for numbers")
    func comparisons() {
        #expect(Comparison.equal.holds(.int(21), .float(21)))
        #expect(Comparison.lessOrEqual.holds(.float(20.5), .int(21)))
        #expect(!Comparison.greater.holds(.float(20.5), .int(21)))
        #expect(Comparison.notEqual.holds(.string("eco"), .string("comfort")))
        #expect(Comparison.equal.holds(.bool(true), .bool(true)))
        #expect(!Comparison.less.holds(.bool(false), .bool(true)))
        #expect(!Comparison.less.holds(.string("a"), .string("b")))
        #expect(Comparison(written: "≥") == .greaterOrEqual && Comparison(written: "==") == .equal)
        #expect(Comparison(written: "=>") == nil)
    }

    @Test("conditions are stored with the automation and redefined with it")
    func storage() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await make(database: HomeDatabase.open(atPath: path))
            try await f.manager.edit(
                .setLocation(
                    home: home, location: try HomeLocation(latitude: 59.91, longitude: 10.75, timeZone: "Europe/Oslo")),
                account: admin)
            let dusk = try TimeWindow(from: TimePoint("sunset-30"), to: TimePoint("06:00"))
            try await add(f, [.characteristic(Self.temperature, .less, .float(19.5)), .time(dusk)])
            try await f.manager.edit(
                .addRangeTrigger(
                    home: home, name: "Warm", characteristic: Self.temperature,
                    range: try ThresholdRange(minimum: 25, maximum: nil), actionSets: ["Night"],
                    conditions: [.characteristic(Fixture.lampOn, .equal, .bool(true))]), account: admin)
            // updateTrigger replaces the conditions with the rest of the definition
            try await f.manager.edit(
                .updateTrigger(
                    home: home, trigger: "Warm",
                    definition: .addRangeTrigger(
                        home: home, name: "", characteristic: Self.temperature,
                        range: try ThresholdRange(minimum: 25, maximum: nil), actionSets: ["Night"],
                        conditions: [.characteristic(Fixture.lampOn, .notEqual, .bool(true))])), account: admin)
            let before = try await f.home().triggers
            #expect(before.map(\.conditions.count) == [2, 1])
            guard case .characteristic(_, .notEqual, .bool(true)) = before[1].conditions.first else {
                Issue.record("updateTrigger left \(before[1].conditions)")
                return
            }
            await f.manager.shutdown()
            let reloaded = try HomeManager(database: HomeDatabase.open(atPath: path))
            #expect(try await reloaded.home(home, account: admin).triggers == before)
            await reloaded.shutdown()
        }
    }
}
