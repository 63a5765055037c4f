import Foundation
import HomeModel
import Schedules
import Synchronization
import TestSupport
import Testing

@testable import Automations

/// Conditions as the automation service meets them: judged on its injected clock when the event
/// fires; a firing whose conditions fail does nothing and is not counted by the guards.
@Suite("Conditions in the service", .timeLimit(.minutes(5)))
struct ConditionServiceTests {
    @Test("a press outside the time window runs nothing and uses none of the firing limit; inside it runs")
    func timeWindow() async throws {
        let home = try await AutomationServiceTests.Home.make()
        let manager = home.manager
        try await manager.edit(
            .setLocation(
                home: "Home", location: try HomeLocation(latitude: 59.91, longitude: 10.75, timeZone: "Europe/Oslo")),
            account: "alice")
        try await manager.edit(
            .addTrigger(
                home: "Home", name: "Guarded", characteristic: AutomationServiceTests.press, value: .int(0),
                actionSets: ["Lamp On"],
                conditions: [.time(try TimeWindow(from: TimePoint("22:00"), to: TimePoint("06:00")))]),
            account: "alice")
        try await home.addTrigger("Sentinel", on: 2, running: ["Lamp Off"])
        _ = try await manager.executeActionSet("Lamp Off", home: "Home", account: "alice")
        let now = Mutex(try Date("2026-11-29T12:00:00+01:00", strategy: .iso8601))
        // One firing an hour: a failed condition that counted would hold the evening's press back
        let service = AutomationService(
            manager: manager, clock: ScheduleClock(clock: ContinuousClock(), now: { now.withLock { $0 } }),
            limit: .init(count: 1, window: .seconds(3_600)), logger: LogLines().logger)
        let changes = await service.changes()
        let events = await manager.events()
        let following = Task { await service.follow(changes) }
        defer { following.cancel() }

        // At noon the presses run nothing: only the sentinel fires
        for _ in 0..<3 { home.press(0) }
        home.press(2)
        #expect(try await AutomationServiceTests.firings(until: "Sentinel", in: events, home: manager) == ["Sentinel"])
        #expect(try await home.lamp() == .bool(false))

        // At 23:00 the same press runs the action set
        now.withLock { $0 = try! Date("2026-11-29T23:00:00+01:00", strategy: .iso8601) }
        home.press(0)
        #expect(try await AutomationServiceTests.firings(until: "Guarded", in: events, home: manager) == ["Guarded"])
        #expect(try await home.lamp() == .bool(true))
    }
}
