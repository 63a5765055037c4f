import Synchronization

/// What the manager made for the recorder as it committed changes, not yet written; bounded: when
/// the writer falls behind (a slow SD card, a full disk) new entries are dropped rather than held,
/// so memory stays bounded and the model never waits for history.
final class HistoryBuffer: Sendable {
    private struct State {
        var pending: [HistoryEntry] = []
        var statistics = HistoryStatistics()
        var dropping = DroppingSpell()
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

    /// Queues what fits of `entries` and drops the rest.
    func append(_ entries: [HistoryEntry]) -> Appended {
        state.withLock { state in
            let startsBatch = state.pending.isEmpty
            let room = max(0, capacity - state.pending.count)
            state.pending.append(contentsOf: entries.prefix(room))
            let dropped = entries.count - min(room, entries.count)
            state.statistics.dropped += dropped
            let change = state.dropping.note(dropping: dropped > 0)
            if change == .began { state.statistics.warnings += 1 }
            return Appended(startsBatch: startsBatch, dropping: change)
        }
    }

    /// Everything queued, leaving the buffer empty.
    func takeAll() -> [HistoryEntry] {
        // Swapped out: emptying a shared array keeping its capacity would allocate under the lock,
        // which the loop takes for each recorded change.
        var taken: [HistoryEntry] = []
        state.withLock { swap(&taken, &$0.pending) }
        return taken
    }

    /// Counts a batch's fate.
    func noteWritten(_ batch: Int, failed: Bool) {
        state.withLock { state in
            if failed {
                state.statistics.dropped += batch
                state.statistics.failedBatches += 1
            } else {
                state.statistics.written += batch
            }
        }
    }

    func noteWarning() { state.withLock { $0.statistics.warnings += 1 } }

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
    /// Entries lost: the buffer was full, or their batch failed.
    package var dropped = 0
    package var failedBatches = 0
    /// Entries waiting for the next batch.
    package var pending = 0
    /// Warnings logged: one per spell of dropping, not one per entry.
    package var warnings = 0
}
