import AsyncMailbox
import Execution
import Foundation
import HomeModel
import Logging
import ServiceLifecycle

/// Records the homes' history: follows what the model's changes keep (``changes()``: the manager
/// makes the entries as it commits each change, so a value nobody records does not wake the
/// recorder), keeps them in a bounded ``HistoryBuffer``, and writes what gathered in one transaction
/// per batch on the store's writer thread (the group commit), awaited off the gateway's loop. It ages
/// the history every ``Settings/retentionInterval``; a graceful shutdown stops a sweep under way
/// after its step.
///
/// History is the first thing to give: when the writer is slow the buffer fills and new entries
/// are dropped; when a write fails its batch is dropped. Each spell of dropping is logged once,
/// and its end once. The model's values and the command path never wait for it.
package struct HistoryRecorder: ServiceLifecycle.Service {
    /// How the recorder batches and ages.
    package struct Settings: Sendable {
        /// How long entries gather after the first of a batch before they are written.
        package var batchWindow: Duration
        /// The most entries waiting to be written; beyond it new ones are dropped.
        package var capacity: Int
        /// How often retention runs.
        package var retentionInterval: Duration

        package init(batchWindow: Duration, capacity: Int, retentionInterval: Duration) {
            self.batchWindow = batchWindow
            self.capacity = capacity
            self.retentionInterval = retentionInterval
        }

        /// A batch a second, 10,000 entries held (a few MB at most), retention hourly.
        package static let standard = Settings(
            batchWindow: .seconds(1), capacity: 10_000, retentionInterval: .seconds(3600))
    }

    private let manager: HomeManager
    private let writer: any HistoryWriting
    private let clock: HistoryClock
    private let settings: Settings
    private let logger: Logger
    private let buffer: HistoryBuffer
    private let afterBatch: @Sendable () -> Void

    /// `afterBatch` is called once each batch is written or dropped: the gateway wakes its loop
    /// there, so that the loop's rest, when it gives malloc's free pages back, comes after the last
    /// batch's (the writer runs at the lowest priority and may write well after the loop has rested).
    package init(
        manager: HomeManager, writer: any HistoryWriting, clock: HistoryClock, settings: Settings = .standard,
        logger: Logger, afterBatch: @escaping @Sendable () -> Void = {}
    ) {
        self.manager = manager
        self.writer = writer
        self.clock = clock
        self.settings = settings
        self.logger = logger
        self.buffer = HistoryBuffer(capacity: settings.capacity)
        self.afterBatch = afterBatch
    }

    /// Records into `store`, on the store's clock.
    package init(
        manager: HomeManager, store: HistoryStore, settings: Settings = .standard, logger: Logger,
        afterBatch: @escaping @Sendable () -> Void = {}
    ) {
        self.init(
            manager: manager, writer: store, clock: store.clock, settings: settings, logger: logger,
            afterBatch: afterBatch)
    }

    package var statistics: HistoryStatistics { buffer.statistics }

    package func run() async throws {
        let changes = await changes()
        await withDiscardingTaskGroup { group in
            // A sweep under way stops at a graceful shutdown, after its step (the next sweep does
            // the rest), so the gateway's stop does not wait for a whole sweep at nice 19.
            group.addTask {
                await cancelWhenGracefulShutdown { await clock.clock.every(settings.retentionInterval) { await age() } }
            }
            await follow(changes)
            group.cancelAll()
        }
    }

    /// What the recorder keeps of the manager's changes, made by the manager as it commits each
    /// (``HistorySelection/entries(for:at:)``): a point has the time of its change, not the time
    /// the recorder took it (up to a tenth of the batch window later), and the mailbox holds the
    /// entries, not the state each change left.
    package func changes() async -> Mailbox<[HistoryEntry]> {
        await manager.changes(transform: { [clock] change in
            let entries = HistorySelection.entries(for: change, at: { clock.now })
            return entries.isEmpty ? nil : entries
        })
    }

    /// Records what `changes` (subscribed to by the caller) bring, until they end or a graceful
    /// shutdown begins; then writes what is waiting (not cancelled, so a shutdown keeps the last
    /// second of history) and returns.
    package func follow(_ changes: Mailbox<[HistoryEntry]>) async {
        let (doorbell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask { await writeBatches(on: doorbell) }
            await cancelWhenGracefulShutdown { await take(changes, ringing: ring) }
            ring.finish()
        }
    }

    /// Buffers the entries, ringing the writer. With a batch window it takes the entries that
    /// gathered in one go and then lets the next ones gather for a tenth of the window (at most
    /// 100 ms): woken a few times a second, not once per change, which cost the command path's CPU
    /// at a thousand recorded changes a second (docs/benchmarks.md). A graceful shutdown ends the
    /// wait, and what is queued is still taken.
    private func take(_ changes: Mailbox<[HistoryEntry]>, ringing ring: AsyncStream<Void>.Continuation) async {
        var dropping = DroppingSpell()
        var lastPoints = LastPointTimes()
        let gathering = min(settings.batchWindow / 10, .milliseconds(100))
        var iterator = changes.makeAsyncIterator()
        while let first = await iterator.next() {
            var gathered = first.map { lastPoints.spaced($0) }
            while let queued = iterator.nextQueued() { gathered += queued.map { lastPoints.spaced($0) } }
            keep(gathered, &dropping)
            ring.yield()
            if gathering > .zero {
                try? await clock.clock.sleep(until: clock.clock.now.advanced(by: gathering))
            }
        }
    }

    private func keep(_ entries: [HistoryEntry], _ dropping: inout DroppingSpell) {
        let dropped = buffer.append(entries)
        if dropped > 0, dropping.begin() {
            buffer.noteWarning()
            logger.warning(
                "history is not kept: \(settings.capacity) entries wait for the disk; new ones are dropped until it catches up"
            )
        } else if dropped == 0, dropping.end() {
            logger.notice("history is kept again")
        }
    }

    /// Writes what gathered each time the doorbell rings, one batch at a time.
    private func writeBatches(on doorbell: AsyncStream<Void>) async {
        var failing = DroppingSpell()
        for await _ in doorbell {
            if settings.batchWindow > .zero {
                try? await clock.clock.sleep(until: clock.clock.now.advanced(by: settings.batchWindow))
            }
            let batch = buffer.takeAll()
            guard !batch.isEmpty else { continue }
            do {
                try await writer.write(batch)
                buffer.noteWritten(batch.count, failed: false)
                if failing.end() { logger.notice("history is written again") }
            } catch {
                buffer.noteWritten(batch.count, failed: true)
                if failing.begin() {
                    buffer.noteWarning()
                    logger.warning("history could not be written, and is dropped until it can: \(error)")
                }
            }
            afterBatch()
        }
    }

    private func age() async {
        do {
            try await writer.applyRetention()
        } catch is CancellationError {
            return
        } catch {
            logger.warning("history could not be aged: \(error)")
        }
    }
}

/// Whether history is being dropped, so each spell is logged once at its start and once at its end.
struct DroppingSpell {
    private var isDropping = false

    /// True when this starts a spell.
    mutating func begin() -> Bool {
        defer { isDropping = true }
        return !isDropping
    }

    /// True when this ends a spell.
    mutating func end() -> Bool {
        defer { isDropping = false }
        return isDropping
    }
}

/// The time of each series' last point: changes taken together (a batch, or two reports of one
/// millisecond) would share a millisecond, and a point of the same series and millisecond replaces
/// the one before it. A point no later than its series' last, by less than a second, is moved to the
/// millisecond after it, so that every change is kept, in order; one a second or more earlier (the
/// system clock was set back) keeps its own time.
struct LastPointTimes {
    private var times: [SeriesKey: Date] = [:]

    mutating func spaced(_ entry: HistoryEntry) -> HistoryEntry {
        guard case .point(let series, let point) = entry else { return entry }
        var time = point.time
        if let last = times[series], time.historyMilliseconds <= last.historyMilliseconds,
            last.historyMilliseconds - time.historyMilliseconds < 1_000
        {
            time = Date(historyMilliseconds: last.historyMilliseconds + 1)
        }
        times[series] = time
        return .point(series, HistoryPoint(time: time, value: point.value))
    }
}
