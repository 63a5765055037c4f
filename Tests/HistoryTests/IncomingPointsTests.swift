import Execution
import Foundation
import GRDB
import History
import HomeModel
import Synchronization
import TestSupport
import Testing

/// Points wait in `incoming` (appended as they come) and settle into `point` together about once a
/// minute: every query answers them while they wait, as it will once they settled.
@Suite("Waiting points", .timeLimit(.minutes(5)))
struct IncomingPointsTests {
    typealias Fixture = HistoryStoreTests.Fixture
    static let epoch = HistoryStoreTests.epoch
    static let sensor = HistoryStoreTests.sensor
    static let other = HistoryStoreTests.other

    static func entry(_ key: ValueKey, _ time: Date, _ value: Double) -> HistoryEntry {
        .point(SeriesKey(home: HistoryStoreTests.home, value: key), HistoryPoint(time: time, value: value))
    }

    /// Writes `values` of `key`, ten seconds apart from `start`, the clock ten seconds on for each.
    static func write(_ values: [Double], of key: ValueKey = sensor, from start: Date, _ fixture: Fixture) async throws
    {
        var batch: [HistoryEntry] = []
        for (index, value) in values.enumerated() {
            batch.append(entry(key, start.addingTimeInterval(Double(index) * 10), value))
            fixture.clock.advance(by: .seconds(10))
        }
        try await fixture.store.write(batch)
    }

    /// The answers of the three queries over the first hour: raw points, hours, the recent line.
    static func answers(_ fixture: Fixture) async throws -> (HistoryAnswer, HistoryAnswer, [HistoryPoint]?) {
        let end = epoch.addingTimeInterval(3599)
        let store = fixture.store
        let raw = try await fixture.points(from: epoch, to: end)
        let hourly = try await store.points(
            accessory: sensor.accessory, service: sensor.service, characteristic: sensor.characteristic, from: epoch,
            to: end, resolution: .hour)
        let line = try await store.recentLines(home: HistoryStoreTests.home, from: epoch, to: end, slices: 1)[sensor]
        return (raw, hourly, line)
    }

    @Test("points wait until a minute has passed, and the queries answer them the same before and after")
    func waitingPointsAreAnswered() async throws {
        // Given three points written within the first minute
        let fixture = try Fixture()
        try await Self.write([20, 21, 23], from: Self.epoch, fixture)

        // Then they wait, and every query answers them
        #expect(try await fixture.count("incoming") == 3)
        #expect(try await fixture.count("point") == 0)
        let waiting = try await Self.answers(fixture)
        let times = (0..<3).map { Self.epoch.addingTimeInterval(Double($0) * 10) }
        #expect(waiting.0 == .points(zip(times, [20, 21, 23]).map { HistoryPoint(time: $0, value: $1) }))
        #expect(
            waiting.1
                == .hourly([HourlyAggregate(hour: Self.epoch, minimum: 20, mean: 64.0 / 3, maximum: 23, count: 3)]))
        #expect(waiting.2?.map(\.value) == [64.0 / 3])

        // When a minute has passed and the next batch comes, then all have settled, and the answers
        // are the same with the new point
        fixture.clock.advance(by: .seconds(60))
        try await Self.write([22], from: Self.epoch.addingTimeInterval(90), fixture)
        #expect(try await fixture.count("incoming") == 0)
        #expect(try await fixture.count("point") == 4)
        let settled = try await Self.answers(fixture)
        let all = zip(times + [Self.epoch.addingTimeInterval(90)], [20.0, 21, 23, 22]).map {
            HistoryPoint(time: $0, value: $1)
        }
        #expect(settled.0 == .points(all))
        #expect(
            settled.1 == .hourly([HourlyAggregate(hour: Self.epoch, minimum: 20, mean: 21.5, maximum: 23, count: 4)]))
        #expect(settled.2?.map(\.value) == [21.5])
    }

    @Test(
        "a line's slice weighs its waiting points against its settled ones; a series with only waiting points has one")
    func lineWeighsWaitingPoints() async throws {
        // Given two settled points (the clock a minute on, so the batch settles) and one waiting
        let fixture = try Fixture()
        fixture.clock.advance(by: .seconds(60))
        try await Self.write([10, 20], from: Self.epoch, fixture)
        #expect(try await fixture.count("point") == 2)
        try await Self.write([60], from: Self.epoch.addingTimeInterval(100), fixture)
        try await Self.write([7], of: Self.other, from: Self.epoch.addingTimeInterval(100), fixture)
        #expect(try await fixture.count("incoming") == 2)

        // Then the slice's mean is of all three, and the other series' line is its waiting point
        let lines = try await fixture.store.recentLines(
            home: HistoryStoreTests.home, from: Self.epoch, to: Self.epoch.addingTimeInterval(3599), slices: 1)
        #expect(lines[Self.sensor]?.map(\.value) == [30])
        #expect(lines[Self.other]?.map(\.value) == [7])
    }

    @Test("a later point of the same millisecond replaces the earlier one in the raw points, waiting or settled")
    func laterPointReplaces() async throws {
        // Given a settled point, and two waiting points of the same millisecond
        let fixture = try Fixture()
        let time = Self.epoch.addingTimeInterval(5)
        fixture.clock.advance(by: .seconds(60))
        try await fixture.store.write([Self.entry(Self.sensor, time, 1)])
        #expect(try await fixture.count("point") == 1)
        try await fixture.store.write([Self.entry(Self.sensor, time, 2), Self.entry(Self.sensor, time, 3)])
        #expect(try await fixture.count("incoming") == 2)

        // Then the query answers the last, once, and so does the table after settling
        let expected = HistoryAnswer.points([HistoryPoint(time: time, value: 3)])
        #expect(try await fixture.points(from: Self.epoch, to: time) == expected)
        try await fixture.store.applyRetention()
        #expect(try await fixture.count("incoming") == 0)
        #expect(try await fixture.points(from: Self.epoch, to: time) == expected)
        #expect(try await fixture.count("point") == 1)
    }

    @Test("a large batch is written whole and in order, waiting or settling, a forget between its points")
    func batchesOfAnySize() async throws {
        // Given a waiting batch of 150 points, a forget of another accessory after its 70th
        let fixture = try Fixture()
        let first = (0..<150).map { Self.entry(Self.sensor, Self.epoch.addingTimeInterval(Double($0)), Double($0)) }
        try await fixture.store.write([Self.entry(Self.other, Self.epoch, 7)])
        try await fixture.store.write(Array(first[..<70]) + [.forgetAccessory(Self.other.accessory)] + first[70...])
        #expect(try await fixture.count("point") == 70)  // a forget settles what waits
        #expect(try await fixture.count("incoming") == 80)

        // And a settling batch of 85 whose points 63 and 64, and 83 and 84, share a millisecond
        fixture.clock.advance(by: .seconds(61))
        let times = (0..<85).map { index in
            let shared = index == 64 || index == 84 ? index - 1 : index
            return Self.epoch.addingTimeInterval(200 + Double(shared))
        }
        try await fixture.store.write(zip(times, 0..<85).map { Self.entry(Self.sensor, $0, Double(1000 + $1)) })

        // Then every point is kept, the later of each shared millisecond
        #expect(try await fixture.count("incoming") == 0)
        #expect(try await fixture.count("point") == 150 + 83)
        let waited: [HistoryPoint] = (0..<150).map { index in
            HistoryPoint(time: Self.epoch.addingTimeInterval(Double(index)), value: Double(index))
        }
        let settled: [HistoryPoint] = (0..<85).filter { $0 != 63 && $0 != 83 }.map { index in
            HistoryPoint(time: times[index], value: Double(1000 + index))
        }
        let expected = waited + settled
        #expect(
            try await fixture.points(from: Self.epoch, to: Self.epoch.addingTimeInterval(3599)) == .points(expected))
        #expect(try await fixture.count("series") == 1)
    }

    @Test("a forgotten accessory's waiting points go; another's settle")
    func forgottenAccessory() async throws {
        let fixture = try Fixture()
        try await Self.write([20], from: Self.epoch, fixture)
        try await Self.write([50], of: Self.other, from: Self.epoch, fixture)

        try await fixture.store.write([.forgetAccessory(Self.sensor.accessory)])

        #expect(try await fixture.count("incoming") == 0)
        let kept = try await fixture.store.writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT series.accessory, value FROM point JOIN series ON series.id = point.series"
            )
            .map { "\($0[0] as String) \($0[1] as Double)" }
        }
        #expect(kept == ["other 50.0"])
    }

    @Test("a batch that settles writes its own points straight into point, after what waited and around a forget")
    func settlingBatch() async throws {
        // Given a waiting point of each series
        let fixture = try Fixture()
        let time = Self.epoch.addingTimeInterval(5)
        try await fixture.store.write([Self.entry(Self.sensor, time, 1), Self.entry(Self.other, time, 1)])
        #expect(try await fixture.count("incoming") == 2)

        // When a minute later a batch brings the sensor's point of the same millisecond, twice, the
        // removal of the other's accessory, and then a new point of it
        fixture.clock.advance(by: .seconds(60))
        try await fixture.store.write([
            Self.entry(Self.sensor, time, 2), Self.entry(Self.sensor, time, 3), Self.entry(Self.other, time, 4),
            .forgetAccessory(Self.other.accessory), Self.entry(Self.other, time, 5),
        ])

        // Then nothing waits, the sensor has its last point, and the other only the one after its removal
        #expect(try await fixture.count("incoming") == 0)
        let kept = try await fixture.store.writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT series.accessory, value FROM point JOIN series ON series.id = point.series ORDER BY 1"
            ).map { "\($0[0] as String) \($0[1] as Double)" }
        }
        #expect(kept == ["other 5.0", "sensor 3.0"])
    }

    @Test("a series whose first points wait while a sweep runs is not forgotten by the sweep")
    func sweepKeepsWaitingSeries() async throws {
        // Given a sensor with an hour of points, and a sweep that, after its first step, is given
        // another characteristic's first point (which waits)
        let fixture = try Fixture()
        try await fixture.record(hours: 1)
        let store = fixture.store
        let written = Mutex(false)
        let time = store.clock.now
        try await store.applyRetention(store.retention, now: time) {
            guard
                written.withLock({ done in
                    defer { done = true }; return !done
                })
            else { return }
            try? await store.write([Self.entry(Self.other, time, 7)])
        }
        #expect(written.withLock { $0 })

        // Then its point is kept: answered now, and in `point` once it settled
        let answer = try await fixture.points(Self.other, from: time, to: time)
        #expect(answer == .points([HistoryPoint(time: time, value: 7)]))
        try await store.applyRetention()
        #expect(try await fixture.points(Self.other, from: time, to: time) == answer)
    }

    @Test("points a stopped gateway left waiting settle when the file is opened again")
    func waitingPointsSettleOnOpen() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(HistoryStore.fileName).path
        let clock = HistoryClock.following(AnyClock(ManualClock()), from: Self.epoch)
        let count = { (store: HistoryStore, table: String) in
            try await store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
        }

        // Given a file whose last points wait
        do {
            let store = try HistoryStore.open(atPath: path, clock: clock, lowPriority: false)
            try await store.write([
                Self.entry(Self.sensor, Self.epoch, 20), Self.entry(Self.sensor, Self.epoch + 1, 21),
            ])
            #expect(try await count(store, "incoming") == 2)
        }

        // When it is opened again, then they are in `point`
        let store = try HistoryStore.open(atPath: path, clock: clock, lowPriority: false)
        #expect(try await count(store, "incoming") == 0)
        #expect(try await count(store, "point") == 2)
    }
}
