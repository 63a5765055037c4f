import AsyncMailbox
import Execution
import Foundation
import HomeModel
import Logging
import ServiceLifecycle

/// Records the homes' history: the manager makes the entries as it commits each change and puts
/// them straight into a bounded ``HistoryBuffer`` (``changes()``: a value nobody records does not
/// wake the recorder, nor does one that joins a batch already gathering); the recorder is woken by
/// a batch's first entry, lets the rest gather for the batch window (and on, within limits, until
/// the changes pause: ``Settings/quietPeriod``), and writes them in one
/// transaction on the store's writer thread (the group commit), awaited off the gateway's loop. It
/// ages the history every ``Settings/retentionInterval``; a graceful shutdown stops a sweep under
/// way after its step.
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
        /// After the window, how long the changes must have paused before the batch is written
        /// (zero: when the window ends): a batch is written between bursts of changes (a scene, a
        /// script's commands) rather than during one, where the writer's work would share the
        /// cores and caches with the commands.
        package var quietPeriod: Duration
        /// The longest a batch gathers while waiting for that pause, from when its first entry woke
        /// the recorder; it waits no longer either once half the capacity is taken.
        package var longestWait: Duration

        package init(
            batchWindow: Duration, capacity: Int, retentionInterval: Duration, quietPeriod: Duration = .zero,
            longestWait: Duration = .seconds(5)
        ) {
            self.batchWindow = batchWindow
            self.capacity = capacity
            self.retentionInterval = retentionInterval
            self.quietPeriod = quietPeriod
            self.longestWait = longestWait
        }

        /// A batch a second, or once the changes pause for a quarter of a second within five;
        /// 10,000 entries held (a few MB at most), retention hourly.
        package static let standard = Settings(
            batchWindow: .seconds(1), capacity: 10_000, retentionInterval: .seconds(3600),
            quietPeriod: .milliseconds(250), longestWait: .seconds(5))
    }

    /// Told by the manager when an entry starts a batch: the buffer was empty.
    package struct BatchStarted: Sendable {}

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
        let batches = await changes()
        await withDiscardingTaskGroup { group in
            // A sweep under way stops at a graceful shutdown, after its step (the next sweep does
            // the rest), so the gateway's stop does not wait for a whole sweep at nice 19.
            group.addTask {
                await cancelWhenGracefulShutdown { await clock.clock.every(settings.retentionInterval) { await age() } }
            }
            await follow(batches)
            group.cancelAll()
        }
    }

    /// Subscribes to the manager's changes: as it commits each, the manager makes what the recorder
    /// keeps of it (``HistorySelection/entries(for:at:)``, stamped with the commit's time) and puts
    /// it into the buffer, on its own thread. The mailbox tells only when a batch starts, so a
    /// thousand recorded changes a second wake the recorder at most about once a second (taking
    /// them from a mailbox cost a third more CPU per write woken for each, and bursts at normal
    /// priority gathered ten times a second: docs/benchmarks.md), and holds no change's state.
    package func changes() async -> Mailbox<BatchStarted> {
        await manager.changes(transform: { [clock, buffer, logger, capacity = settings.capacity] change in
            var time: Date?
            let entries = HistorySelection.entries(
                for: change,
                at: {
                    let now = clock.now
                    time = now
                    return now
                })
            guard !entries.isEmpty else { return nil }
            let kept = buffer.append(entries, at: time)
            switch kept.dropping {
            case .began:
                logger.warning(
                    "history is not kept: \(capacity) entries wait for the disk; new ones are dropped until it catches up"
                )
            case .ended: logger.notice("history is kept again")
            case nil: break
            }
            return kept.startsBatch ? BatchStarted() : nil
        })
    }

    /// Writes a batch each time one starts in `batches` (subscribed to by the caller), once it has
    /// gathered (``gather()``), until they end or a graceful shutdown begins (which cuts the
    /// gathering short: that batch is written at once); then writes what waits (not cancelled, so a
    /// shutdown keeps the last seconds of history) and returns. That last batch closes the buffer:
    /// what the manager makes before it hears the recorder has gone is counted as dropped, not left
    /// waiting.
    package func follow(_ batches: Mailbox<BatchStarted>) async {
        var lastPoints = await writeUntilShutdown(batches)
        await writeBatch(&lastPoints, closing: true)
    }

    private func writeUntilShutdown(_ batches: Mailbox<BatchStarted>) async -> LastPointTimes {
        await cancelWhenGracefulShutdown {
            var lastPoints = LastPointTimes()
            for await _ in batches {
                await gather()
                await writeBatch(&lastPoints)
                // A batch started during the write is still queued, and the mailbox hands out what
                // is queued even when cancelled: changes that keep coming would keep a shutdown here.
                if Task.isCancelled { break }
            }
            return lastPoints
        }
    }

    /// Lets a batch gather: for the batch window, then until the changes pause for the quiet
    /// period, for at most the longest wait from the batch's start and while less than half the
    /// capacity is taken. A graceful shutdown ends it at once.
    private func gather() async {
        let waits = clock.clock
        let started = waits.now
        if settings.batchWindow > .zero { try? await waits.sleep(until: started.advanced(by: settings.batchWindow)) }
        guard settings.quietPeriod > .zero else { return }
        let latest = started.advanced(by: settings.longestWait)
        while !Task.isCancelled, waits.now < latest {
            let (count, last) = buffer.gathering
            guard let last, count < settings.capacity / 2 else { return }
            // Dates keep about a tenth of a microsecond: a pause a hair short of the period is one.
            let quietFor = Duration.seconds(clock.now.timeIntervalSince(last)) + .microseconds(1)
            guard quietFor < settings.quietPeriod else { return }
            try? await waits.sleep(until: min(waits.now.advanced(by: settings.quietPeriod - quietFor), latest))
        }
    }

    /// Writes what gathered, its points spaced within their series (``LastPointTimes``); the last
    /// batch (`closing`) closes the buffer.
    private func writeBatch(_ lastPoints: inout LastPointTimes, closing: Bool = false) async {
        let batch = buffer.takeAll(closing: closing).map { lastPoints.spaced($0) }
        guard !batch.isEmpty else { return }
        do {
            try await writer.write(batch)
            if buffer.noteWritten(batch.count, failed: false) == .ended { logger.notice("history is written again") }
        } catch {
            if buffer.noteWritten(batch.count, failed: true) == .began {
                logger.warning("history could not be written, and is dropped until it can: \(error)")
            }
        }
        afterBatch()
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
struct DroppingSpell: Sendable {
    private var isDropping = false

    /// How a spell changed.
    enum Change { case began, ended }

    /// Notes whether history is being dropped now; says when that begins or ends a spell.
    mutating func note(dropping: Bool) -> Change? {
        defer { isDropping = dropping }
        return dropping == isDropping ? nil : dropping ? .began : .ended
    }
}

/// The time of each series' last point: changes taken together (a batch, or two reports of one
/// millisecond) would share a millisecond, and a point of the same series and millisecond replaces
/// the one before it. A point no later than its series' last, by less than a second, is moved to the
/// millisecond after it, so that every change is kept, in order; one a second or more earlier (the
/// system clock was set back) keeps its own time.
struct LastPointTimes: Sendable {
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
