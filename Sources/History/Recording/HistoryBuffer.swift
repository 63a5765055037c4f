import Foundation
import Synchronization

/// What the manager made for the recorder as it committed changes, not yet written; bounded: when
/// the writer falls behind (a slow SD card, a full disk) new entries are dropped rather than held,
/// so memory stays bounded and the model never waits for history.
final class HistoryBuffer: Sendable {
    private struct State {
        var pending: [HistoryEntry] = []
        var statistics = HistoryStatistics()
        /// Entries dropped because the buffer is full.
        var overflowing = DroppingSpell()
        /// Batches dropped because the store failed them.
        var failing = DroppingSpell()
        /// The recorder has taken its last batch: what comes after is dropped.
        var isClosed = false
        /// When the last entries that came were made.
        var lastAppended: Date?

        /// Notes whether the spell at `spell` drops now, counting a warning when one begins.
        mutating func noteSpell(_ spell: WritableKeyPath<Self, DroppingSpell>, dropping: Bool) -> DroppingSpell.Change?
        {
            let change = self[keyPath: spell].note(dropping: dropping)
            if change == .began { statistics.warnings += 1 }
            return change
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = capacity }

    /// What ``append(_:)`` did.
    struct Appended {
        /// The buffer was empty: these entries start a batch.
        var startsBatch: Bool
        /// Whether this began or ended a spell of dropping, counted (a warning when it began).
        var dropping: DroppingSpell.Change?
    }

    /// Queues what fits of `entries`, made at `time`, and drops the rest (all of them once the
    /// buffer is closed).
    func append(_ entries: [HistoryEntry], at time: Date? = nil) -> Appended {
        state.withLock { state in
            guard !state.isClosed else {
                state.statistics.dropped += entries.count
                return Appended(startsBatch: false, dropping: nil)
            }
            if let time { state.lastAppended = time }
            let startsBatch = state.pending.isEmpty
            let room = max(0, capacity - state.pending.count)
            state.pending.append(contentsOf: entries.prefix(room))
            let dropped = entries.count - min(room, entries.count)
            state.statistics.dropped += dropped
            return Appended(startsBatch: startsBatch, dropping: state.noteSpell(\.overflowing, dropping: dropped > 0))
        }
    }

    /// How many entries wait, and when the last came (nil when none told its time).
    var gathering: (count: Int, last: Date?) {
        state.withLock { ($0.pending.count, $0.lastAppended) }
    }

    /// Everything queued, leaving the buffer empty; `closing` it too, so that what the manager
    /// makes after the recorder's last batch is counted as dropped rather than left waiting.
    func takeAll(closing: Bool = false) -> [HistoryEntry] {
        // Swapped out: emptying a shared array keeping its capacity would allocate under the lock,
        // which the loop takes for each recorded change.
        var taken: [HistoryEntry] = []
        state.withLock { state in
            swap(&taken, &state.pending)
            if closing { state.isClosed = true }
        }
        return taken
    }

    /// Counts a batch's fate; says when it began or ended a spell of failed batches.
    func noteWritten(_ batch: Int, failed: Bool) -> DroppingSpell.Change? {
        state.withLock { state in
            if failed {
                state.statistics.dropped += batch
                state.statistics.failedBatches += 1
            } else {
                state.statistics.written += batch
            }
            return state.noteSpell(\.failing, dropping: failed)
        }
    }

    var statistics: HistoryStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.pending = state.pending.count
            return statistics
        }
    }
}

/// How recording went since the recorder started: what its tests check (the log says each spell).
package struct HistoryStatistics: Sendable, Hashable {
    /// Entries written to the store.
    package var written = 0
    /// Entries lost: the buffer was full, their batch failed, or they came after the last batch.
    package var dropped = 0
    package var failedBatches = 0
    /// Entries waiting for the next batch.
    package var pending = 0
    /// Warnings logged: one per spell of dropping, not one per entry.
    package var warnings = 0
}
