import AsyncMailbox
import HomeModel
import Logging
import TestSupport
import Testing
import VirtualDevices

@testable import Automations

/// Threshold-range automations: a sensor the test reports (as a driver would) crossing into a
/// range, staying in it, and being inside already at start.
@Suite("Threshold automations", .timeLimit(.minutes(5)))
struct ThresholdTriggerTests {
    static let temperature = CharacteristicReference(
        accessory: "Sensor", service: "Temperature", characteristic: .currentTemperature)
    static let key = ValueKey(accessory: "sensor", service: "main", characteristic: .currentTemperature)

    /// A home with the test's sensor, a virtual lamp and two action sets for it.
    struct Setup {
        let manager: HomeManager
        let sensor: ReportingDriver

        static func make() async throws -> Setup {
            let manager = try HomeManager(database: HomeDatabase.inMemory())
            let lamp = VirtualDriver(
                devices: [.init(id: "lamp", name: "Lamp", kind: .lightbulb)], tick: .seconds(86_400))
            let sensor = ReportingDriver()
            try await manager.attach(lamp)
            try await manager.attach(sensor)
            try await manager.edit(.addHome(name: "Home"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: "lamp"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
            let lampOn = CharacteristicReference(accessory: "Lamp", service: "Lightbulb", characteristic: .on)
            for (name, on) in [("Lamp On", true), ("Lamp Off", false)] {
                try await manager.edit(
                    .addActionSet(home: "Home", name: name, actions: [ActionRequest(lampOn, .bool(on))]),
                    account: "alice")
            }
            return Setup(manager: manager, sensor: sensor)
        }

        func addRange(_ name: String, min: Double?, max: Double?, running actionSet: String) async throws {
            try await manager.edit(
                .addRangeTrigger(
                    home: "Home", name: name, characteristic: ThresholdTriggerTests.temperature,
                    range: try ThresholdRange(minimum: min, maximum: max), actionSets: [actionSet]),
                account: "alice")
        }

        func home() async throws -> Home { try await manager.home("Home", account: "alice") }

        /// The home as it is after `reading` is reported (the value is committed when it is read back).
        func reported(_ reading: Double) async throws -> Home {
            sensor.report(reading)
            for _ in 0..<1_000 {
                let home = try await home()
                if home.accessory("sensor")?.characteristic("main", .currentTemperature)?.value == .float(reading) {
                    return home
                }
                await Task.yield()
            }
            Issue.record("the reading \(reading) never reached the model")
            return try await home()
        }
    }

    @Test("a crossing into the range fires once; staying inside fires nothing; leaving and coming back fires again")
    func crossing() async throws {
        let setup = try await Setup.make()
        try await setup.addRange("Hot", min: 25, max: nil, running: "Lamp On")
        var crossings = ThresholdCrossings()
        crossings.follow([try await setup.home()], atStart: true)
        let hot = try await setup.home().triggers[0].id
        func report(_ reading: Double) async throws -> Set<TriggerID> {
            crossings.report(Self.key, value: .float(reading), in: try await setup.reported(reading))
        }
        // Given the first value seen, outside; when it crosses in, then it fires once
        #expect(try await report(20).isEmpty)
        #expect(try await report(26) == [hot])
        // Staying inside (the lower bound is included) fires nothing
        #expect(try await report(30).isEmpty)
        #expect(try await report(25).isEmpty)
        // Out and in again fires again
        #expect(try await report(24.9).isEmpty)
        #expect(try await report(25) == [hot])
    }

    @Test("inside at start, or when the automation is made, is no crossing")
    func startsInside() async throws {
        let setup = try await Setup.make()
        try await setup.addRange("Hot", min: 25, max: nil, running: "Lamp On")
        var crossings = ThresholdCrossings()
        // At start the stored value says nothing: the first report inside is first sight
        crossings.follow([try await setup.home()], atStart: true)
        #expect(crossings.report(Self.key, value: .float(28), in: try await setup.reported(28)).isEmpty)
        #expect(crossings.report(Self.key, value: .float(29), in: try await setup.reported(29)).isEmpty)

        // An automation made while the value is inside starts inside
        try await setup.addRange("Warm", min: 20, max: 30, running: "Lamp Off")
        crossings.follow([try await setup.home()], atStart: false)
        #expect(crossings.report(Self.key, value: .float(27), in: try await setup.reported(27)).isEmpty)
        let warm = try await setup.home().triggers[1].id
        #expect(crossings.report(Self.key, value: .float(31), in: try await setup.reported(31)).isEmpty)
        #expect(crossings.report(Self.key, value: .float(22), in: try await setup.reported(22)) == [warm])
        // A changed range is judged anew from the value the home holds (22: outside 10...15)
        try await setup.manager.edit(
            .updateTrigger(
                home: "Home", trigger: "Warm",
                definition: .addRangeTrigger(
                    home: "Home", name: "", characteristic: Self.temperature,
                    range: try ThresholdRange(minimum: 10, maximum: 15), actionSets: ["Lamp Off"])),
            account: "alice")
        crossings.follow([try await setup.home()], atStart: false)
        #expect(crossings.report(Self.key, value: .float(12), in: try await setup.reported(12)) == [warm])
    }

    @Test("the service runs the action sets of a crossing, and not for a value first seen inside")
    func service() async throws {
        let setup = try await Setup.make()
        try await setup.addRange("Hot", min: 25, max: nil, running: "Lamp On")
        try await setup.addRange("Cold", min: nil, max: 10, running: "Lamp Off")
        let service = AutomationService(manager: setup.manager, logger: LogLines().logger)
        let changes = await service.changes()
        let events = await setup.manager.events()
        let following = Task { await service.follow(changes) }
        defer { following.cancel() }
        // First sight inside Hot's range fires nothing; Cold's crossing after it does, and alone
        setup.sensor.report(26)
        setup.sensor.report(28)
        setup.sensor.report(5)
        #expect(try await AutomationServiceTests.firings(until: "Cold", in: events, home: setup.manager) == ["Cold"])
        setup.sensor.report(27)
        #expect(try await AutomationServiceTests.firings(until: "Hot", in: events, home: setup.manager) == ["Hot"])
        let lamp = try await setup.home().accessory("lamp")?.services.first?.characteristic(.on)?.value
        #expect(lamp == .bool(true))
    }
}
