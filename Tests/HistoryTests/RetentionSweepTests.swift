import Foundation
import GRDB
import History
import HomeModel
import Logging
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// A retention sweep over a large history, stopped by the gateway's shutdown.
@Suite("Retention sweep", .timeLimit(.minutes(5)))
struct RetentionSweepTests {
    static let characteristics = 20

    /// Twelve days of `characteristics` temperatures at a point every 10 minutes, made on `clock`
    /// (a batch each time): two days and an hour of them are older than the raw retention an hour
    /// later. Returns what was written, by sensor.
    static func twelveDays(into store: HistoryStore, clock: ManualClock) async throws -> [Int: [HistoryPoint]] {
        var written: [Int: [HistoryPoint]] = [:]
        for slot in 0..<(12 * 24 * 6) {
            var batch: [HistoryEntry] = []
            for sensor in 0..<characteristics {
                let point = HistoryPoint(
                    time: store.clock.now, value: HistoryStoreTests.Fixture.value(slot + sensor * 13))
                batch.append(.point(SeriesKey(home: HistoryStoreTests.home, value: key(sensor)), point))
                written[sensor, default: []].append(point)
            }
            try await store.write(batch)
            clock.advance(by: .seconds(600))
        }
        return written
    }

    static func key(_ sensor: Int) -> ValueKey {
        ValueKey(accessory: AccessoryID("sensor \(sensor)"), service: "main", characteristic: .currentTemperature)
    }

    /// The aggregates `points` make, hour by hour, computed here.
    static func hourly(_ points: [HistoryPoint]) -> [HourlyAggregate] {
        Dictionary(grouping: points) { ($0.time.timeIntervalSince1970 / 3600).rounded(.down) }
            .sorted { $0.key < $1.key }
            .map { hour, points in
                let values = points.map(\.value)
                return HourlyAggregate(
                    hour: Date(timeIntervalSince1970: hour * 3600), minimum: values.min()!,
                    mean: values.reduce(0, +) / Double(values.count), maximum: values.max()!, count: values.count)
            }
    }

    /// Each sensor's points and aggregates as the store holds them.
    struct Kept {
        var points: [Int: [HistoryPoint]] = [:]
        var hours: [Int: [HourlyAggregate]] = [:]

        /// The values each sensor's points and aggregates stand for: every point once.
        func samples(_ sensor: Int) -> Int {
            (points[sensor]?.count ?? 0) + (hours[sensor] ?? []).map(\.count).reduce(0, +)
        }
    }

    static func kept(in store: HistoryStore) async throws -> Kept {
        try await store.writer.read { db in
            var kept = Kept()
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT accessory, time, value FROM point JOIN series ON series.id = point.series
                    ORDER BY accessory, time
                    """)
            {
                let sensor = Int((row["accessory"] as String).dropFirst("sensor ".count))!
                kept.points[sensor, default: []].append(
                    HistoryPoint(
                        time: Date(timeIntervalSince1970: Double(row["time"] as Int64) / 1000), value: row["value"]))
            }
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT accessory, hour, minimum, mean, maximum, samples FROM hourly
                    JOIN series ON series.id = hourly.series ORDER BY accessory, hour
                    """)
            {
                let sensor = Int((row["accessory"] as String).dropFirst("sensor ".count))!
                kept.hours[sensor, default: []].append(
                    HourlyAggregate(
                        hour: Date(timeIntervalSince1970: Double(row["hour"] as Int64) * 3600), minimum: row["minimum"],
                        mean: row["mean"], maximum: row["maximum"], count: row["samples"]))
            }
            return kept
        }
    }

    @Test("a graceful shutdown stops a sweep under way after its step; nothing is lost and the next sweep finishes it")
    func shutdownStopsTheSweep() async throws {
        // Given twelve days of 20 characteristics, and a recorder whose sweeps are held after their
        // first step until their task is cancelled
        let hub = try await HistoryRecorderTests.Hub.make()
        let store = try HistoryStore.inMemory(clock: hub.historyClock)
        let written = try await Self.twelveDays(into: store, clock: hub.clock)
        let gate = SweepGate()
        let recorder = HistoryRecorder(
            manager: hub.manager, writer: GatedSweeps(store: store, gate: gate), clock: hub.historyClock,
            settings: .init(batchWindow: .zero, capacity: 100, retentionInterval: .seconds(3600)),
            logger: Logger(label: "test"))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: recorder)], logger: Logger(label: "test")))
        let running = Task { try await group.run() }

        // When an hour passes, a sweep starts, and the gateway shuts down after its first step
        try await eventually("the recorder waits for its first sweep") { hub.clock.sleepers == 1 }
        hub.clock.advance(by: .seconds(3600))
        try await eventually("a sweep is under way") { gate.steps == 1 }
        await group.triggerGracefulShutdown()

        // Then the recorder ends without the rest of the sweep: one step was taken, the first
        // characteristic's first day is summed up, its second day and the others are not yet
        try await running.value
        #expect(gate.steps == 1)
        let cutoff = HistoryStoreTests.epoch.addingTimeInterval(2 * 86_400 + 3600)
        let stopped = try await Self.kept(in: store)
        #expect(stopped.hours[0]?.count == 24)
        #expect(stopped.points[0]?.first?.time == HistoryStoreTests.epoch.addingTimeInterval(86_400))
        #expect(stopped.points[1]?.first?.time == HistoryStoreTests.epoch)
        // And nothing written is lost: each characteristic's points and aggregates hold every value
        for sensor in 0..<Self.characteristics {
            #expect(stopped.samples(sensor) == written[sensor]?.count)
        }

        // When the next sweep runs, then it finishes the job: every hour before the raw retention
        // summed up exactly from its points, every later point as it was written
        try await store.applyRetention()
        let swept = try await Self.kept(in: store)
        for sensor in 0..<Self.characteristics {
            let points = written[sensor] ?? []
            HistoryStoreTests.expectSame(
                swept.hours[sensor] ?? [], Self.hourly(points.filter { $0.time < cutoff }))
            #expect(swept.points[sensor] == points.filter { $0.time >= cutoff })
        }
    }
}

/// Holds a sweep after its first step until the task running it is cancelled, and counts the steps
/// it takes.
final class SweepGate: Sendable {
    private let counted = Mutex(0)

    var steps: Int { counted.withLock { $0 } }

    func step() async {
        let first = counted.withLock { count in
            count += 1
            return count == 1
        }
        guard first else { return }
        let (cancelled, cancel) = AsyncStream.makeStream(of: Void.self)
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            cancel.finish()
        }
    }
}

/// The store, its sweeps held by a ``SweepGate``.
struct GatedSweeps: HistoryWriting {
    let store: HistoryStore
    let gate: SweepGate

    func write(_ batch: [HistoryEntry]) async throws { try await store.write(batch) }

    func applyRetention() async throws {
        try await store.applyRetention(store.retention, now: store.clock.now) { await gate.step() }
    }
}
