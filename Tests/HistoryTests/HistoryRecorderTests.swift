import AsyncMailbox
import Execution
import Foundation
import GRDB
import HomeModel
import Logging
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

@testable import History

/// The recorder on a real manager fed by a driver the test reports through: what it keeps, and
/// that a slow or failing writer costs history, never the model's values.
@Suite("History recorder", .timeLimit(.minutes(5)))
struct HistoryRecorderTests {
    static let sensor = ValueKey(accessory: "sensor", service: "main", characteristic: .currentTemperature)

    /// A manager with one home holding the driver's accessory.
    struct Hub {
        let manager: HomeManager
        let driver: ReportingDriver
        let clock = ManualClock()

        static func make(_ accessory: Accessory = ReportingDriver.sensor) async throws -> Hub {
            let manager = try HomeManager(database: HomeDatabase.inMemory())
            let driver = ReportingDriver(accessory)
            try await manager.attach(driver)
            try await manager.edit(.addHome(name: "Home"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: accessory.id), account: "alice")
            return Hub(manager: manager, driver: driver)
        }

        var historyClock: HistoryClock { .following(AnyClock(clock), from: HistoryStoreTests.epoch) }

        func recorder(writer: any HistoryWriting, capacity: Int = 100) -> HistoryRecorder {
            HistoryRecorder(
                manager: manager, writer: writer, clock: historyClock,
                settings: .init(batchWindow: .zero, capacity: capacity, retentionInterval: .seconds(3600)),
                logger: Logger(label: "test"))
        }

        /// A store on the test's clock and a recorder writing into it with `batchWindow`.
        func recording(batchWindow: Duration = .zero) throws -> (HistoryStore, HistoryRecorder) {
            let store = try HistoryStore.inMemory(clock: historyClock)
            let recorder = HistoryRecorder(
                manager: manager, store: store,
                settings: .init(batchWindow: batchWindow, capacity: 100, retentionInterval: .seconds(3600)),
                logger: Logger(label: "test"))
            return (store, recorder)
        }

        /// Runs `recorder` on the manager's changes, subscribed before `body` reports anything.
        func following(_ recorder: HistoryRecorder, _ body: () async throws -> Void) async throws {
            let changes = await recorder.changes()
            let task = Task { await recorder.follow(changes) }
            defer { task.cancel() }
            try await body()
        }

        func temperature() async throws -> CharacteristicValue? {
            try await manager.home("Home", account: "alice").accessory("sensor")?
                .characteristic("main", .currentTemperature)?.value
        }

        /// Reports `reading` and waits until the model holds it.
        func report(_ reading: Double) async throws {
            driver.report(reading)
            try await eventually("the model holds \(reading)") { try await temperature() == .float(reading) }
        }
    }

    @Test("values are recorded as points; a removed accessory's history goes")
    func recordsAndForgets() async throws {
        // Given a recorder writing into a store on the test's clock
        let hub = try await Hub.make()
        let (store, recorder) = try hub.recording()
        try await hub.following(recorder) {
            // When three readings come a minute apart
            for (index, reading) in [21.0, 22.5, 19.25].enumerated() {
                try await hub.report(reading)
                try await eventually("\(index + 1) written") { recorder.statistics.written == index + 1 }
                hub.clock.advance(by: .seconds(60))
            }

            // Then they are the sensor's points, at the minutes they came
            let answer = try await store.points(
                accessory: "sensor", service: "main", characteristic: .currentTemperature,
                from: HistoryStoreTests.epoch, to: store.clock.now)
            #expect(
                answer
                    == .points(
                        [21.0, 22.5, 19.25].enumerated().map {
                            HistoryPoint(time: HistoryStoreTests.epoch.addingTimeInterval(Double($0) * 60), value: $1)
                        }))

            // When the accessory leaves the home, then its history goes
            try await hub.manager.edit(.removeAccessory(home: "Home", accessory: "Sensor"), account: "alice")
            try await eventually("the sensor's history is gone") {
                do {
                    _ = try await store.points(
                        accessory: "sensor", service: "main", characteristic: .currentTemperature,
                        from: HistoryStoreTests.epoch, to: store.clock.now)
                    return false
                } catch {
                    return (error as? HistoryError)?.code == .unknownCharacteristic
                }
            }
        }
    }

    @Test("a press goes on the timeline, not among the points")
    func pressOnTheTimeline() async throws {
        let hub = try await Hub.make(ReportingDriver.button())
        let (store, recorder) = try hub.recording()
        try await hub.following(recorder) {
            hub.driver.send(.value("button", service: "button", characteristic: .programmableSwitchEvent, .int(1)))
            try await eventually("the press is written") { recorder.statistics.written == 1 }
        }
        let home = try await hub.manager.home("Home", account: "alice")
        let timeline = try await store.timeline(home: home.id, from: HistoryStoreTests.epoch, to: store.clock.now)
        #expect(timeline.map(\.detail) == ["double press"])
        #expect(timeline.map(\.subject) == ["Button"])
        let series = try await store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM series") }
        #expect(series == 0)
    }

    @Test("a failing writer drops its batches, warns once, and the model keeps every value")
    func failingWriter() async throws {
        let hub = try await Hub.make()
        let recorder = hub.recorder(writer: FailingWriter())
        try await hub.following(recorder) {
            for reading in 1...5 {
                try await hub.report(Double(reading))
                try await eventually("\(reading) dropped") { recorder.statistics.dropped == reading }
            }
        }
        #expect(recorder.statistics.failedBatches == 5)
        #expect(recorder.statistics.warnings == 1)
        #expect(recorder.statistics.written == 0)
    }

    @Test("afterBatch is called once each batch is over, written or dropped, and not while it is written")
    func afterBatchFollowsEachBatch() async throws {
        let hub = try await Hub.make()
        let writer = StalledWriter()
        let batches = Mutex(0)
        let recorder = HistoryRecorder(
            manager: hub.manager, writer: writer, clock: hub.historyClock,
            settings: .init(batchWindow: .zero, capacity: 100, retentionInterval: .seconds(3600)),
            logger: Logger(label: "test"), afterBatch: { batches.withLock { $0 += 1 } })
        try await hub.following(recorder) {
            try await hub.report(1)
            try await eventually("the batch is being written") { writer.calls == 1 }
            #expect(batches.withLock { $0 } == 0)
            writer.open()
            try await eventually("the batch is written") { recorder.statistics.written == 1 }
            try await eventually("afterBatch is called") { batches.withLock { $0 } == 1 }
            try await hub.report(2)
            try await eventually("the second batch is over") { batches.withLock { $0 } == 2 }
        }
        #expect(writer.values == [1, 2])

        let failing = HistoryRecorder(
            manager: hub.manager, writer: FailingWriter(), clock: hub.historyClock,
            settings: .init(batchWindow: .zero, capacity: 100, retentionInterval: .seconds(3600)),
            logger: Logger(label: "test"), afterBatch: { batches.withLock { $0 += 1 } })
        try await hub.following(failing) {
            try await hub.report(3)
            try await eventually("the dropped batch is over") { batches.withLock { $0 } == 3 }
        }
        #expect(failing.statistics.failedBatches == 1)
    }

    @Test("a stalled writer holds at most the buffer's capacity; the rest is dropped, the model is not held up")
    func stalledWriter() async throws {
        // Given a writer that does not return until the test opens it, and room for 3 entries
        let hub = try await Hub.make()
        let writer = StalledWriter()
        let recorder = hub.recorder(writer: writer, capacity: 3)
        try await hub.following(recorder) {
            try await hub.report(1)
            try await eventually("the first batch is being written") { writer.calls == 1 }

            // When nine more readings come while it is stuck, then the model takes each at once
            for reading in 2...10 { try await hub.report(Double(reading)) }

            // And three wait, six are dropped, with one warning
            try await eventually("three wait, six dropped") {
                recorder.statistics.pending == 3 && recorder.statistics.dropped == 6
            }
            #expect(recorder.statistics.warnings == 1)

            // When the disk catches up, then what waited is written
            writer.open()
            try await eventually("four written") { recorder.statistics.written == 4 }
        }
    }
}

extension HistoryRecorderTests {
    @Test("a graceful shutdown stops taking changes and writes what waits")
    func gracefulShutdownWritesWhatWaits() async throws {
        // Given a running recorder whose writer is stuck on a first batch, with two entries waiting
        let hub = try await Hub.make()
        let writer = StalledWriter()
        let recorder = hub.recorder(writer: writer)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: recorder)], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        var reading = 0.0
        try await eventually("the recorder follows the model") {
            reading += 1
            try await hub.report(reading)
            return writer.calls == 1
        }
        let waiting = recorder.statistics.pending
        try await hub.report(reading + 1)
        try await hub.report(reading + 2)
        try await eventually("two more wait") { recorder.statistics.pending == waiting + 2 }

        // When the gateway shuts down and the disk answers, then what waited is written and the
        // recorder ends
        await group.triggerGracefulShutdown()
        writer.open()
        try await running.value
        #expect(recorder.statistics.pending == 0)
        #expect(recorder.statistics.dropped == 0)
        #expect(writer.values.suffix(2) == [reading + 1, reading + 2])
    }

    @Test("a graceful shutdown ends the recorder even while each write brings the start of another batch")
    func shutdownWhileChangesKeepComing() async throws {
        // Given a running recorder whose every write waits until a reading committed during it
        // waits in the buffer (a batch started while the last was written)
        let hub = try await Hub.make()
        final class Box: Sendable { let recorder = Mutex<HistoryRecorder?>(nil) }
        let box = Box()
        let readings = Mutex(100.0)
        let writer = HookedWriter { [hub] in
            let reading = readings.withLock {
                $0 += 1; return $0
            }
            hub.driver.report(reading)
            // Not cancelled with the recorder's task: a disk's write does not end at a shutdown.
            await Task {
                try? await eventually("a batch starts during the write (or, after the last, is dropped)") {
                    let statistics = box.recorder.withLock { $0 }?.statistics
                    return (statistics?.pending ?? 0) > 0 || (statistics?.dropped ?? 0) > 0
                }
            }.value
        }
        let recorder = hub.recorder(writer: writer)
        box.recorder.withLock { $0 = recorder }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: recorder)], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        try await eventually("the recorder writes") {
            hub.driver.report(
                readings.withLock {
                    $0 += 1; return $0
                })
            return writer.calls > 0
        }

        // When the gateway shuts down, then the recorder ends: it writes what waits once more
        // and does not follow the batches its writes keep starting
        await group.triggerGracefulShutdown()
        try await running.value

        // and nothing committed after its last batch is left waiting
        try await hub.report(1)
        #expect(recorder.statistics.pending == 0)
    }

    @Test("entries the manager makes after the recorder's last batch are counted as dropped")
    func closedBufferDrops() {
        let buffer = HistoryBuffer(capacity: 10)
        let entry = HistoryEntry.point(
            SeriesKey(home: "Home", value: Self.sensor), HistoryPoint(time: HistoryStoreTests.epoch, value: 1))
        #expect(buffer.append([entry]).startsBatch)
        #expect(buffer.takeAll(closing: true).count == 1)

        let appended = buffer.append([entry, entry])
        #expect(!appended.startsBatch)
        #expect(
            buffer.statistics == HistoryStatistics(written: 0, dropped: 2, failedBatches: 0, pending: 0, warnings: 0))
    }

    @Test("with a batch window, changes that gathered while the recorder waited are all taken, the last last")
    func gatheredChangesAreTaken() async throws {
        // Given a recorder with a window of a second on the test's clock, which the test holds still
        let hub = try await Hub.make()
        let (store, recorder) = try hub.recording(batchWindow: .seconds(1))
        try await hub.following(recorder) {
            // When five readings come while it waits (the first wakes it; the rest gather)
            let readings = [21.0, 21.5, 22.0, 22.5, 23.0]
            for reading in readings { try await hub.report(reading) }

            // Then, once its clock moves on, every one is written and kept as a point, in the order
            // they came: taken at one moment of the still clock, each is a millisecond after the last
            try await eventually("five written") {
                hub.clock.advance(by: .milliseconds(100))
                return recorder.statistics.written == readings.count
            }
            #expect(recorder.statistics.dropped == 0)
            guard let points = try await Self.sensorPoints(in: store) else { return }
            #expect(points.map(\.value) == readings)
            #expect(Set(points.map(\.time)).count == readings.count)
        }
    }

    @Test("a batch wakes the recorder once: the entries that join it go to the buffer, not the mailbox")
    func oneWakePerBatch() async throws {
        // Given the recorder's subscription, which nothing takes from yet
        let hub = try await Hub.make()
        let (_, recorder) = try hub.recording(batchWindow: .seconds(1))
        let batches = await recorder.changes()

        // When five readings are committed
        for reading in [21.0, 21.5, 22.0, 22.5, 23.0] { try await hub.report(reading) }

        // Then the five wait in the buffer, and the mailbox holds one start of a batch
        #expect(recorder.statistics.pending == 5)
        var iterator = batches.makeAsyncIterator()
        #expect(iterator.nextQueued() != nil)
        #expect(iterator.nextQueued() == nil)
    }

    /// The sensor's raw points in `store` from the epoch until now; nil, with an issue recorded, when
    /// they were answered otherwise.
    static func sensorPoints(in store: HistoryStore) async throws -> [HistoryPoint]? {
        let answer = try await store.points(
            accessory: "sensor", service: "main", characteristic: .currentTemperature,
            from: HistoryStoreTests.epoch, to: store.clock.now)
        guard case .points(let points) = answer else {
            Issue.record("answered \(answer)")
            return nil
        }
        return points
    }

    @Test("a point has the time its change was committed, not the later time the recorder took it")
    func pointsKeepTheTimeOfTheirChange() async throws {
        // Given a recorder with a window of a second on the test's clock, waiting for it to pass
        // after a first reading
        let hub = try await Hub.make()
        let (store, recorder) = try hub.recording(batchWindow: .seconds(1))
        try await hub.following(recorder) {
            try await hub.report(21)
            try await eventually("the recorder waits for its window") { hub.clock.sleepers == 1 }

            // When a second reading comes 30 ms later, while the recorder waits, and is written at a second
            hub.clock.advance(by: .milliseconds(30))
            try await hub.report(22)
            try await eventually("both written") {
                hub.clock.advance(by: .milliseconds(100))
                return recorder.statistics.written == 2
            }

            // Then it is kept at 30 ms, when it came (to the millisecond the store keeps)
            guard let points = try await Self.sensorPoints(in: store) else { return }
            #expect(points.map(\.value) == [21, 22])
            let milliseconds = points.map { $0.time.timeIntervalSince(HistoryStoreTests.epoch) * 1000 }
            #expect(milliseconds.count == 2 && abs(milliseconds[0]) < 1 && abs(milliseconds[1] - 30) < 1.01)
        }
    }

    /// A hub, an open writer, and a recorder writing into it with a window of a second, a quiet
    /// period of 250 ms and a longest wait of five seconds, holding `capacity` entries.
    static func gathering(capacity: Int = 100) async throws -> (Hub, StalledWriter, HistoryRecorder) {
        let hub = try await Hub.make()
        let writer = StalledWriter()
        writer.open()
        let recorder = HistoryRecorder(
            manager: hub.manager, writer: writer, clock: hub.historyClock,
            settings: .init(
                batchWindow: .seconds(1), capacity: capacity, retentionInterval: .seconds(3600),
                quietPeriod: .milliseconds(250), longestWait: .seconds(5)),
            logger: Logger(label: "test"))
        return (hub, writer, recorder)
    }

    @Test("after its window a batch waits until the changes pause for the quiet period")
    func batchWaitsForAPause() async throws {
        // Given a reading, and a second 900 ms later, within the batch's window of a second
        let (hub, writer, recorder) = try await Self.gathering()
        try await hub.following(recorder) {
            try await hub.report(1)
            try await eventually("the recorder waits for its window") { hub.clock.sleepers == 1 }
            hub.clock.advance(by: .milliseconds(900))
            try await hub.report(2)

            // When the window ends 100 ms after the second, then the batch waits on
            hub.clock.advance(by: .milliseconds(100))
            try await eventually("the recorder waits again, or writes") { hub.clock.sleepers == 1 || writer.calls > 0 }
            #expect(writer.calls == 0)

            // and is written once the changes have paused for 250 ms
            hub.clock.advance(by: .milliseconds(150))
            try await eventually("the batch is written") { writer.calls == 1 }
            #expect(writer.values == [1, 2])
        }
    }

    @Test("a batch waits for a pause no longer than the longest wait")
    func batchWaitsNoLongerThanTheLongestWait() async throws {
        // Given readings every 200 ms, never pausing for the quiet period, for five seconds
        let (hub, writer, recorder) = try await Self.gathering()
        try await hub.following(recorder) {
            try await hub.report(0)
            try await eventually("the recorder waits for its window") { hub.clock.sleepers == 1 }
            for step in 1...25 {
                hub.clock.advance(by: .milliseconds(200))
                try await hub.report(Double(step))
            }

            // Then they are written in one batch, five seconds after the first
            try await eventually("the readings are written") { writer.values.count >= 25 }
            #expect(writer.calls == 1)
            #expect(writer.values.prefix(25) == ArraySlice((0..<25).map(Double.init)))
        }
    }

    @Test("a batch that holds half the capacity does not wait for a pause")
    func halfFullBatchDoesNotWait() async throws {
        // Given a recorder holding ten entries, a reading, and four more 900 ms later
        let (hub, writer, recorder) = try await Self.gathering(capacity: 10)
        try await hub.following(recorder) {
            try await hub.report(0)
            try await eventually("the recorder waits for its window") { hub.clock.sleepers == 1 }
            hub.clock.advance(by: .milliseconds(900))
            for reading in 1...4 { try await hub.report(Double(reading)) }

            // When the window ends, 100 ms after the last, then the five are written at once
            hub.clock.advance(by: .milliseconds(100))
            try await eventually("the batch is written") { writer.calls == 1 }
            #expect(writer.values == [0, 1, 2, 3, 4])
        }
    }

    @Test("the running recorder ages the history every interval of its clock")
    func agesOnItsClock() async throws {
        // Given the recorder running on a clock the test moves
        let hub = try await Hub.make()
        let writer = StalledWriter()
        writer.open()
        let recorder = hub.recorder(writer: writer)
        let running = Task { try await recorder.run() }
        defer { running.cancel() }

        // When an hour passes, twice, then retention has run twice
        for sweeps in 1...2 {
            try await eventually("the recorder waits for the next sweep") { hub.clock.sleepers == 1 }
            hub.clock.advance(by: .seconds(3600))
            try await eventually("\(sweeps) sweep(s)") { writer.sweeps == sweeps }
        }
    }
}

/// A writer that runs a hook in each write: what happens meanwhile.
final class HookedWriter: HistoryWriting {
    private let hook: @Sendable () async -> Void
    private let count = Mutex(0)

    init(_ hook: @escaping @Sendable () async -> Void) { self.hook = hook }

    var calls: Int { count.withLock { $0 } }

    func write(_ batch: [HistoryEntry]) async throws {
        count.withLock { $0 += 1 }
        await hook()
    }

    func applyRetention() async throws {}
}

/// A writer whose every write fails, as a full disk's would.
struct FailingWriter: HistoryWriting {
    struct DiskFull: Error {}
    func write(_ batch: [HistoryEntry]) async throws { throw DiskFull() }
    func applyRetention() async throws { throw DiskFull() }
}

/// A writer whose writes wait until ``open()``: a disk that stopped answering.
final class StalledWriter: HistoryWriting {
    private struct State {
        var isOpen = false
        var calls = 0
        var sweeps = 0
        var values: [Double] = []
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var calls: Int { state.withLock { $0.calls } }
    var sweeps: Int { state.withLock { $0.sweeps } }
    /// The values of the points written, in order.
    var values: [Double] { state.withLock { $0.values } }

    func write(_ batch: [HistoryEntry]) async throws {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                state.calls += 1
                for case .point(_, let point) in batch { state.values.append(point.value) }
                if state.isOpen { return true }
                state.waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func applyRetention() async throws { state.withLock { $0.sweeps += 1 } }

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
