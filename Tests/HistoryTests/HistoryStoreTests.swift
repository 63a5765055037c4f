import Execution
import Foundation
import GRDB
import History
import HomeModel
import TestSupport
import Testing

/// The history store on an in-memory database and a clock the test moves: a week of one sensor at
/// one point a minute runs in well under a second.
@Suite("History store", .timeLimit(.minutes(5)))
struct HistoryStoreTests {
    /// A whole hour (UTC), so the week's hours line up with the store's.
    static let epoch = Date(timeIntervalSince1970: 1_789_999_200)
    static let home: HomeID = "home"
    static let sensor = ValueKey(accessory: "sensor", service: "main", characteristic: .currentTemperature)
    static let other = ValueKey(accessory: "other", service: "main", characteristic: .currentRelativeHumidity)

    struct Fixture {
        let clock = ManualClock()
        let store: HistoryStore

        init(retention: HistoryRetention = .standard, maximumPoints: Int = 10_000) throws {
            store = try HistoryStore.inMemory(
                retention: retention, clock: .following(AnyClock(clock), from: HistoryStoreTests.epoch),
                maximumPoints: maximumPoints)
        }

        /// Records `hours` of one point a minute for `key`, the clock moving with them, one batch an
        /// hour; returns what was recorded.
        @discardableResult
        func record(hours: Int, of key: ValueKey = HistoryStoreTests.sensor) async throws -> [HistoryPoint] {
            var recorded: [HistoryPoint] = []
            for hour in 0..<hours {
                var batch: [HistoryEntry] = []
                for minute in 0..<60 {
                    let point = HistoryPoint(time: store.clock.now, value: Self.value(hour * 60 + minute))
                    batch.append(.point(SeriesKey(home: HistoryStoreTests.home, value: key), point))
                    recorded.append(point)
                    clock.advance(by: .seconds(60))
                }
                try await store.write(batch)
            }
            return recorded
        }

        /// A reading that varies within each hour, so minimum, mean and maximum all differ.
        static func value(_ minute: Int) -> Double { 20 + 5 * sin(Double(minute) / 97) + Double(minute % 7) * 0.125 }

        func points(_ key: ValueKey = HistoryStoreTests.sensor, from: Date, to: Date) async throws(HistoryError)
            -> HistoryAnswer
        {
            try await store.points(
                accessory: key.accessory, service: key.service, characteristic: key.characteristic, from: from,
                to: to)
        }

        func count(_ table: String) async throws -> Int {
            try await store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
        }
    }

    /// The aggregates `points` make, hour by hour, computed here.
    static func expectedHourly(_ points: [HistoryPoint]) -> [HourlyAggregate] {
        stride(from: 0, to: points.count, by: 60).map { start in
            let hour = points[start..<min(start + 60, points.count)].map(\.value)
            return HourlyAggregate(
                hour: points[start].time, minimum: hour.min()!, mean: hour.reduce(0, +) / Double(hour.count),
                maximum: hour.max()!, count: hour.count)
        }
    }

    static func expectSame(_ actual: [HourlyAggregate], _ expected: [HourlyAggregate]) {
        #expect(actual.count == expected.count)
        for (a, e) in zip(actual, expected) {
            #expect(a.hour == e.hour)
            #expect(a.minimum == e.minimum)
            #expect(a.maximum == e.maximum)
            #expect(a.count == e.count)
            #expect(abs(a.mean - e.mean) < 1e-9)
        }
    }

    @Test("a week at one point a minute: raw points for a day, hourly aggregates exact to the points")
    func weekOfOneSensor() async throws {
        // Given a week of one sensor
        let fixture = try Fixture()
        let week = try await fixture.record(hours: 7 * 24)
        let end = week.last!.time

        // When a day is asked for, then its 1,440 points come as recorded
        let lastDay = try await fixture.points(from: end.addingTimeInterval(-86_399), to: end)
        #expect(lastDay == .points(Array(week.suffix(1440))))

        // When the week is asked for (10,080 points, over the maximum), then hours come, summed up
        // from the raw points
        guard case .hourly(let fresh) = try await fixture.points(from: Self.epoch, to: end) else {
            Issue.record("a week of points is answered by the hour")
            return
        }
        Self.expectSame(fresh, Self.expectedHourly(week))

        // When the raw points have aged out, then the stored aggregates are the same
        fixture.clock.advance(by: .seconds(10 * 86_400 + 3600))
        try await fixture.store.applyRetention()
        #expect(try await fixture.count("point") == 0)
        #expect(try await fixture.count("hourly") == 7 * 24)
        guard case .hourly(let aged) = try await fixture.points(from: Self.epoch, to: end) else {
            Issue.record("aged points are answered by the hour")
            return
        }
        Self.expectSame(aged, Self.expectedHourly(week))
    }

    @Test("an hour's points become its aggregate when the hour is wholly 10 days old, which goes after a year")
    func retentionAgesAtTheRightTime() async throws {
        // Given one hour of points
        let fixture = try Fixture()
        let hour = try await fixture.record(hours: 1)
        let store = fixture.store
        let ripe = Self.epoch.addingTimeInterval(3600 + 10 * 86_400)

        // When retention runs a millisecond before the hour's last moment is 10 days old, then
        // nothing ages
        try await store.applyRetention(store.retention, now: ripe.addingTimeInterval(-0.001))
        #expect(try await fixture.count("point") == 60)
        #expect(try await fixture.count("hourly") == 0)

        // When it runs at that moment, then the points are one aggregate
        try await store.applyRetention(store.retention, now: ripe)
        #expect(try await fixture.count("point") == 0)
        let (minimum, mean, maximum, samples) = try await store.writer.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT minimum, mean, maximum, samples FROM hourly")
            let values: (Double?, Double?, Double?, Int?) = (
                row?["minimum"], row?["mean"], row?["maximum"], row?["samples"]
            )
            return values
        }
        let expected = Self.expectedHourly(hour)[0]
        #expect(minimum == expected.minimum)
        #expect(maximum == expected.maximum)
        #expect(abs((mean ?? 0) - expected.mean) < 1e-9)
        #expect(samples == 60)

        // When a year has passed since the hour ended, then the aggregate goes, and the series
        let aYear = Self.epoch.addingTimeInterval(3600 + 365 * 86_400)
        try await store.applyRetention(store.retention, now: aYear.addingTimeInterval(-0.001))
        #expect(try await fixture.count("hourly") == 1)
        try await store.applyRetention(store.retention, now: aYear)
        #expect(try await fixture.count("hourly") == 0)
        #expect(try await fixture.count("series") == 0)
    }

    @Test("a late point in an hour already summed up is merged into it, exactly")
    func latePointMerges() async throws {
        // Given an hour of points aged into its aggregate
        let fixture = try Fixture()
        var hour = try await fixture.record(hours: 1)
        let ripe = Self.epoch.addingTimeInterval(3600 + 10 * 86_400)
        fixture.clock.advance(by: .seconds(10 * 86_400))
        try await fixture.store.applyRetention(fixture.store.retention, now: ripe)

        // When a point for that hour comes late (a device that was offline), lower than all
        let late = HistoryPoint(time: Self.epoch.addingTimeInterval(90), value: -3)
        try await fixture.store.write([.point(SeriesKey(home: Self.home, value: Self.sensor), late)])
        hour.append(late)
        let expected = HourlyAggregate(
            hour: Self.epoch, minimum: -3, mean: hour.map(\.value).reduce(0, +) / 61,
            maximum: hour.map(\.value).max()!, count: 61)

        // Then a query merges it with the stored hour, and so does the next sweep
        for sweep in [false, true] {
            if sweep { try await fixture.store.applyRetention(fixture.store.retention, now: ripe) }
            guard case .hourly(let hours) = try await fixture.points(from: Self.epoch, to: ripe) else {
                Issue.record("an aged hour is answered by the hour")
                return
            }
            Self.expectSame(hours, [expected])
        }
        #expect(try await fixture.count("point") == 0)
    }

    @Test("the size bound drops the oldest first until the pages fit")
    func sizeBound() async throws {
        // Given a week of points and the bytes they take
        let fixture = try Fixture()
        let week = try await fixture.record(hours: 7 * 24)
        let used = try await fixture.store.usedBytes()

        // When retention runs with half that as the bound
        var retention = HistoryRetention.standard
        retention.maximumBytes = used / 2
        try await fixture.store.applyRetention(retention, now: fixture.clock.now.date)

        // Then the pages fit, and what is left is the newest part of the week
        #expect(try await fixture.store.usedBytes() <= used / 2)
        let (count, oldest, newest) = try await fixture.store.writer.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), MIN(time), MAX(time) FROM point")!
            let (count, oldest, newest): (Int, Int64, Int64) = (row[0], row[1], row[2])
            return (count, oldest, newest)
        }
        #expect(count > 0 && count < week.count)
        #expect(Int64(week.last!.time.timeIntervalSince1970 * 1000) == newest)
        #expect(week.filter { $0.time.timeIntervalSince1970 * 1000 >= Double(oldest) }.count == count)
    }

    @Test("a series that went (swept away, or its accessory removed) is made anew by its next point")
    func seriesMadeAnew() async throws {
        let fixture = try Fixture()
        func recordedAgain() async throws -> Int {
            try await fixture.record(hours: 1)
            let now = fixture.store.clock.now
            guard case .points(let points) = try await fixture.points(from: now.addingTimeInterval(-3600), to: now)
            else { return 0 }
            return points.count
        }
        // Given an hour of points, the series' number known to the store from that batch
        try await fixture.record(hours: 1)

        // When the accessory is removed, then its next points are kept under a new series
        try await fixture.store.write([.forgetAccessory(Self.sensor.accessory)])
        #expect(try await recordedAgain() == 60)

        // When a year's retention sweeps everything away, then too
        try await fixture.store.applyRetention(
            fixture.store.retention, now: fixture.store.clock.now.addingTimeInterval(400 * 86_400))
        #expect(try await fixture.count("series") == 0)
        #expect(try await recordedAgain() == 60)
        #expect(try await fixture.count("series") == 1)
    }

    @Test("a removed accessory's points and timeline go; another's stay")
    func removedAccessory() async throws {
        // Given two sensors' points and an event of each
        let fixture = try Fixture()
        try await fixture.record(hours: 2, of: Self.sensor)
        try await fixture.record(hours: 2, of: Self.other)
        let now = fixture.store.clock.now
        try await fixture.store.write(
            [Self.sensor, Self.other].map { key in
                .event(
                    TimelineEvent(
                        home: Self.home, time: now, kind: .motion, accessory: key.accessory,
                        subject: key.accessory.rawValue, detail: "detected"))
            })

        // When the first leaves its home
        try await fixture.store.write([.forgetAccessory(Self.sensor.accessory)])

        // Then its history is unknown, and the other's is whole
        do {
            _ = try await fixture.points(Self.sensor, from: Self.epoch, to: now)
            Issue.record("a removed accessory's history is unknown")
        } catch {
            #expect(error.code == .unknownCharacteristic)
        }
        guard case .points(let other) = try await fixture.points(Self.other, from: Self.epoch, to: now) else {
            Issue.record("two hours are answered by raw points")
            return
        }
        #expect(other.count == 120)
        let timeline = try await fixture.store.timeline(home: Self.home, from: Self.epoch, to: now)
        #expect(timeline.map(\.accessory) == [Self.other.accessory])
    }

    @Test("queries refuse a reversed span, a span beyond retention and an unknown characteristic")
    func queryErrors() async throws {
        let fixture = try Fixture(maximumPoints: 100)
        try await fixture.record(hours: 2)
        let now = fixture.store.clock.now

        func code(_ query: () async throws -> Void) async -> HistoryError.Code? {
            do {
                try await query()
                return nil
            } catch {
                return (error as? HistoryError)?.code
            }
        }
        #expect(await code { _ = try await fixture.points(from: now, to: Self.epoch) } == .reversedSpan)
        #expect(
            await code { _ = try await fixture.points(from: now.addingTimeInterval(-366 * 86_400), to: now) }
                == .spanBeyondRetention)
        #expect(
            await code { _ = try await fixture.points(Self.other, from: Self.epoch, to: now) } == .unknownCharacteristic
        )
        #expect(
            await code { _ = try await fixture.store.timeline(home: Self.home, from: now, to: Self.epoch) }
                == .reversedSpan)
        #expect(
            await code {
                _ = try await fixture.store.timeline(
                    home: Self.home, from: now.addingTimeInterval(-11 * 86_400), to: now)
            } == .spanBeyondRetention)

        // And more points than the maximum come as hours
        let answer = try await fixture.points(from: Self.epoch, to: now)
        guard case .hourly(let hours) = answer else {
            Issue.record("120 points over a maximum of 100 come by the hour")
            return
        }
        #expect(hours.count == 2)
    }

    /// Runs `body` with the path of a history file in a folder of its own, removed afterwards. The
    /// stores these tests open on it write at normal priority: at the gateway's lowest, a busy test
    /// machine would starve them (``WriterThreadTests`` checks that priority).
    private func withHistoryFile(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent(HistoryStore.fileName).path)
    }

    @Test("a file keeps its history across a reopen, gives freed pages back, and costs under 32 bytes a point")
    func fileStore() async throws {
        try await withHistoryFile { path in try await fileStore(path) }
    }

    private func fileStore(_ path: String) async throws {
        let clock = ManualClock()
        let historyClock = HistoryClock.following(AnyClock(clock), from: Self.epoch)

        // Given a week of one sensor written to a file
        let week = try await {
            let store = try HistoryStore.open(atPath: path, clock: historyClock, lowPriority: false)
            var points: [HistoryPoint] = []
            for _ in 0..<(7 * 24 * 60) {
                points.append(HistoryPoint(time: historyClock.now, value: Double(points.count % 300) / 10))
                clock.advance(by: .seconds(60))
            }
            for hour in stride(from: 0, to: points.count, by: 60) {
                try await store.write(
                    points[hour..<hour + 60].map { .point(SeriesKey(home: Self.home, value: Self.sensor), $0) })
            }
            let perPoint = try await store.usedBytes() / points.count
            #expect(perPoint < 32, "a point costs \(perPoint) bytes")
            return points
        }()

        // When it is opened again, then the points are there and freed pages go back to the file system
        let store = try HistoryStore.open(atPath: path, clock: historyClock, lowPriority: false)
        let answer = try await store.points(
            accessory: Self.sensor.accessory, service: Self.sensor.service,
            characteristic: Self.sensor.characteristic, from: week[week.count - 1440].time, to: week.last!.time)
        #expect(answer == .points(Array(week.suffix(1440))))
        let autoVacuum = try await store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") }
        #expect(autoVacuum == 2)
    }

    @Test("the size bound holds for the file and its WAL together once retention has run")
    func sizeBoundCountsTheWAL() async throws {
        try await withHistoryFile { path in try await sizeBoundCountsTheWAL(path) }
    }

    private func sizeBoundCountsTheWAL(_ path: String) async throws {
        let clock = ManualClock()
        let bound = 512 << 10
        var retention = HistoryRetention.standard
        retention.maximumBytes = bound
        let store = try HistoryStore.open(
            atPath: path, retention: retention, clock: .following(AnyClock(clock), from: Self.epoch),
            lowPriority: false)

        // Given three weeks of one sensor, about three times the bound, most of it still in the WAL
        for _ in 0..<(21 * 24) {
            var batch: [HistoryEntry] = []
            for minute in 0..<60 {
                batch.append(
                    .point(
                        SeriesKey(home: Self.home, value: Self.sensor),
                        HistoryPoint(time: store.clock.now, value: Double(minute))))
                clock.advance(by: .seconds(60))
            }
            try await store.write(batch)
        }
        let walBefore = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(
            store.fileBytes() > bound && walBefore > bound / 2, "file and WAL \(store.fileBytes()), WAL \(walBefore)")

        // When retention runs
        try await store.applyRetention()

        // Then the file and its WAL on disk fit the bound, and the newest points are still there
        #expect(store.fileBytes() <= bound, "file and WAL \(store.fileBytes()) bytes, bound \(bound)")
        let newest = try await store.points(
            accessory: Self.sensor.accessory, service: Self.sensor.service,
            characteristic: Self.sensor.characteristic, from: store.clock.now - 3_600, to: store.clock.now)
        #expect(newest != .points([]))
    }

    @Test("the timeline answers a home's events in order, within the span")
    func timeline() async throws {
        let fixture = try Fixture()
        var written: [TimelineEvent] = []
        let homes: [(Int, HomeID)] = [(0, Self.home), (1, "elsewhere"), (2, Self.home), (3, Self.home)]
        for (minute, home) in homes {
            let event = TimelineEvent(
                home: home, time: Self.epoch.addingTimeInterval(Double(minute) * 60), kind: .actionSet,
                accessory: nil, subject: "Good Night", detail: "ran")
            written.append(event)
        }
        fixture.clock.advance(by: .seconds(3600))
        try await fixture.store.write(written.map { .event($0) })

        let answer = try await fixture.store.timeline(
            home: Self.home, from: Self.epoch, to: Self.epoch.addingTimeInterval(150))
        #expect(answer == [written[0], written[2]])
    }
}

extension ManualClock.Instant {
    /// The date this instant is on the fixture's clock.
    var date: Date { HistoryStoreTests.epoch.addingTimeInterval(Double(offset.components.seconds)) }
}
