import Foundation
import History
import HomeModel
import JSON
import Testing

@testable import Gateway

/// `history` and `timeline`, read from their bodies and run through the command router on the demo
/// home with an in-memory history: who may read it, and each refusal's code.
@Suite("History requests")
struct HistoryRequestTests {
    @Test("history and timeline are read with ISO 8601 times, with or without fractions, in any offset")
    func parsing() throws {
        let history = try RequestBodies.request(
            "history",
            #"{"home":"Main House","accessory":"Floor Lamp","service":"Lightbulb","characteristic":"On","from":"2025-11-29T08:00:00Z","to":"2025-11-29T10:30:00.250+01:00","resolution":"hour"}"#
        )
        #expect(
            history
                == .history(
                    .init(
                        home: "Main House", accessory: "Floor Lamp", service: "Lightbulb", characteristic: "On",
                        from: Date(timeIntervalSince1970: 1_764_403_200),
                        to: Date(timeIntervalSince1970: 1_764_408_600.25), resolution: .hour)))
        let noResolution = try RequestBodies.request(
            "history",
            #"{"home":"H","accessory":"A","service":"S","characteristic":"C","from":"2026-11-29T08:00:00Z","to":"2026-11-29T09:00:00Z"}"#
        )
        guard case .history(let query) = noResolution else {
            Issue.record("not a history request: \(noResolution)")
            return
        }
        #expect(query.resolution == nil)
        #expect(noResolution.home == "H")

        let timeline = try RequestBodies.request(
            "timeline", #"{"home":"Main House","from":"2025-11-29T08:00:00Z","to":"2025-11-29T09:00:00.5Z"}"#)
        #expect(
            timeline
                == .timeline(
                    home: "Main House", from: Date(timeIntervalSince1970: 1_764_403_200),
                    to: Date(timeIntervalSince1970: 1_764_406_800.5)))
        #expect(Command.Request.operations.contains("history") && Command.Request.operations.contains("timeline"))
        #expect(Command.Request.runEveryTime.isSuperset(of: ["history", "timeline"]))
    }

    @Test(
        "a malformed body is refused with its code before anything runs",
        arguments: [
            ("timeline", #"{"home":"H","from":"2026-11-29T08:00:00Z"}"#, HomeError.Code.missingParameter),
            ("timeline", #"{"home":"H","from":"yesterday","to":"2026-11-29T08:00:00Z"}"#, .invalidParameter),
            ("timeline", #"{"home":"H","from":"2026-11-29T08:00:00","to":"2026-11-29T09:00:00Z"}"#, .invalidParameter),
            ("timeline", #"{"home":"H","from":1764403200000,"to":"2026-11-29T09:00:00Z"}"#, .invalidParameter),
            (
                "history",
                #"{"home":"H","accessory":"A","service":"S","from":"2026-11-29T08:00:00Z","to":"2026-11-29T09:00:00Z"}"#,
                .missingParameter
            ),
            (
                "history",
                #"{"home":"H","accessory":"A","service":"S","characteristic":"C","from":"2026-11-29T08:00:00Z","to":"2026-11-29T09:00:00Z","resolution":"minute"}"#,
                .invalidParameter
            ),
        ])
    func malformed(operation: String, body: String, code: HomeError.Code) {
        #expect(RequestBodies.code(operation, body) == code)
    }

    /// The demo home, with the Floor Lamp's `On` recorded at `times` (1, 0, 1, …) and a timeline
    /// entry of its Hall Button.
    private static func fixture(points times: [Date], now: Date, maximumPoints: Int = 10_000) async throws -> (
        CommandRouter, HomeManager, HistoryStore
    ) {
        let manager = try await DemoFixture.seeded().manager
        let home = try await DemoFixture.mainHouse(in: manager)
        let lamp = try home.accessory(named: "Floor Lamp")
        let (service, _) = try lamp.characteristic(named: "On", service: "Lightbulb")
        let store = try HistoryStore.inMemory(
            clock: HistoryClock(clock: HistoryClock.system.clock, date: { now }), maximumPoints: maximumPoints)
        let series = SeriesKey(
            home: home.id, value: ValueKey(accessory: lamp.id, service: service.id, characteristic: .on))
        try await store.write(
            times.enumerated().map { .point(series, HistoryPoint(time: $1, value: Double(($0 + 1) % 2))) } + [
                .event(
                    TimelineEvent(
                        home: home.id, time: times[0], kind: .press, accessory: lamp.id, subject: "Hall Button",
                        detail: "single press"))
            ])
        let router = CommandRouter(manager: manager, topics: Topics(), defaultAccount: nil, history: store)
        return (router, manager, store)
    }

    private static func history(
        _ account: String, from: Date, to: Date, characteristic: String = "On", resolution: HistoryResolution? = nil
    ) -> Command {
        Command(
            account: account,
            .request(
                .history(
                    .init(
                        home: "Main House", accessory: "Floor Lamp", service: "Lightbulb",
                        characteristic: characteristic, from: from, to: to, resolution: resolution))))
    }

    private static func failure(_ router: CommandRouter, _ command: Command) async -> HomeError? {
        do {
            _ = try await router.execute(command)
            return nil
        } catch {
            return error
        }
    }

    @Test("the owner and a guest read the points and the timeline; a stranger is told there is no such home")
    func permissions() async throws {
        let now = Date(timeIntervalSince1970: 1_764_403_200)
        let times = [now.addingTimeInterval(-120), now.addingTimeInterval(-60)]
        let (router, manager, _) = try await Self.fixture(points: times, now: now)
        let expected = CommandResult.history(
            .points([HistoryPoint(time: times[0], value: 1), HistoryPoint(time: times[1], value: 0)]))
        let from = now.addingTimeInterval(-3600)
        #expect(try await router.execute(Self.history("owner", from: from, to: now)) == expected)
        #expect(try await router.execute(Self.history("guest", from: from, to: now)) == expected)
        let stranger = await Self.failure(router, Self.history("mallory", from: from, to: now))
        #expect(stranger == HomeError(.notFound, "There is no home named 'Main House'."))

        let timeline = Command(account: "guest", .request(.timeline(home: "Main House", from: from, to: now)))
        guard case .timeline(let events) = try await router.execute(timeline) else {
            Issue.record("not a timeline")
            return
        }
        #expect(events.map(\.detail) == ["single press"])
        let strangersTimeline = Command(
            account: "mallory", .request(.timeline(home: "Main House", from: from, to: now)))
        #expect(await Self.failure(router, strangersTimeline)?.code == .notFound)
        await manager.shutdown()
    }

    @Test("each refusal of the store travels with its own code; names are checked in the home first")
    func refusals() async throws {
        let now = Date(timeIntervalSince1970: 1_764_403_200)
        let (router, manager, _) = try await Self.fixture(points: [now.addingTimeInterval(-60)], now: now)
        let hourAgo = now.addingTimeInterval(-3600)
        #expect(await Self.failure(router, Self.history("owner", from: now, to: hourAgo))?.code == .reversedSpan)
        let twoYears = now.addingTimeInterval(-2 * 365 * 86_400)
        #expect(
            await Self.failure(router, Self.history("owner", from: twoYears, to: now))?.code == .spanBeyondRetention)
        let lastMonth = now.addingTimeInterval(-30 * 86_400)
        #expect(
            await Self.failure(router, Self.history("owner", from: lastMonth, to: now, resolution: .raw))?.code
                == .spanBeyondRetention)
        #expect(
            await Self.failure(router, Self.history("owner", from: hourAgo, to: now, characteristic: "Brightness"))?
                .code == .unknownCharacteristic)
        #expect(
            await Self.failure(router, Self.history("owner", from: hourAgo, to: now, characteristic: "Volume"))?.code
                == .notFound)
        let reversedTimeline = Command(
            account: "owner", .request(.timeline(home: "Main House", from: now, to: hourAgo)))
        #expect(await Self.failure(router, reversedTimeline)?.code == .reversedSpan)

        let off = CommandRouter(manager: manager, topics: Topics(), defaultAccount: nil)
        #expect(await Self.failure(off, Self.history("owner", from: hourAgo, to: now))?.code == .historyUnavailable)
        #expect(await Self.failure(off, Self.history("mallory", from: hourAgo, to: now))?.code == .notFound)
        await manager.shutdown()
    }

    @Test("asked by the hour, the answer is the hour's minimum, mean, maximum and count, times in UTC to the ms")
    func hourlyAnswer() async throws {
        let now = Date(timeIntervalSince1970: 1_764_403_200)
        let times = [now.addingTimeInterval(-1800), now.addingTimeInterval(-1200), now.addingTimeInterval(-600)]
        let (router, manager, _) = try await Self.fixture(points: times, now: now)
        let result = try await router.execute(
            Self.history("owner", from: now.addingTimeInterval(-3599), to: now, resolution: .hour))
        #expect(
            CommandRouter.data(result)?.serialized
                == #"{"resolution":"hour","hours":[{"hour":"2025-11-29T07:00:00.000Z","min":0,"mean":0.6666666666666666,"max":1,"count":3}]}"#
        )
        let raw = try await router.execute(Self.history("owner", from: now.addingTimeInterval(-3599), to: now))
        #expect(
            CommandRouter.data(raw)?.serialized
                == #"{"resolution":"raw","points":[{"time":"2025-11-29T07:30:00.000Z","value":1},{"time":"2025-11-29T07:40:00.000Z","value":0},{"time":"2025-11-29T07:50:00.000Z","value":1}]}"#
        )
        await manager.shutdown()
    }

    @Test("more points than an answer carries: by the hour when left to the store, tooManyPoints when raw was asked")
    func tooManyPoints() async throws {
        let now = Date(timeIntervalSince1970: 1_764_403_200)
        let times = (1...3).map { now.addingTimeInterval(Double(-60 * $0)) }.reversed()
        let (router, manager, _) = try await Self.fixture(points: Array(times), now: now, maximumPoints: 2)
        let hourAgo = now.addingTimeInterval(-3600)
        guard
            case .history(.hourly(let hours)) = try await router.execute(Self.history("guest", from: hourAgo, to: now))
        else {
            Issue.record("not answered by the hour")
            return
        }
        #expect(hours.map(\.count) == [3])
        #expect(
            await Self.failure(router, Self.history("guest", from: hourAgo, to: now, resolution: .raw))?.code
                == .tooManyPoints)
        await manager.shutdown()
    }
}
