/// The group commit of device values (the manager's `valueCommitWindow`), as bookkeeping: which
/// values are ahead of the database, how long the next commit waits, and which write's outcome
/// decides about retrying. The manager owns it on its actor, writes what it hands out, and sleeps
/// ``nextDelay`` on its clock before each commit.
///
/// A failed write (a full disk) keeps its values unsaved and makes the next commit wait from a
/// second, doubling up to a minute, so values left over reach the disk once there is room, without
/// another report to carry them and without a failed attempt (and a warning) every window.
package struct ValueCommitSchedule {
    /// How long changed values wait to be written together; zero writes each as it comes.
    package let window: Duration
    /// Values ahead of the database: waiting for the next commit, or left over by a failed write.
    package private(set) var unsaved: Set<ValueKey> = []
    /// How long the next commit waits after a failed write; nil while writes succeed.
    package private(set) var retryDelay: Duration?
    /// Numbers the writes, so that outcomes arriving out of order (each comes back in a task of its
    /// own) do not undo what a newer write decided.
    private var lastWrite: UInt64 = 0
    private var settledWrite: UInt64 = 0

    package init(window: Duration) { self.window = window }

    /// Whether a changed value is written at once (no window, and no failed write to wait out: a
    /// blocking attempt and a warning per value would hold up the actor for nothing).
    package var writesEachValue: Bool { window == .zero && retryDelay == nil }

    /// How long the next commit waits: the window, or a failed write's retry delay if longer.
    package var nextDelay: Duration { max(window, retryDelay ?? .zero) }

    /// Keeps `keys` for the next commit.
    package mutating func keepUnsaved<Keys: Sequence<ValueKey>>(_ keys: Keys) { unsaved.formUnion(keys) }

    /// Starts a write of every unsaved value and `keys`, which are no longer unsaved; returns the
    /// write's number and what to write. `settled`: its outcome is the newest at once (a write the
    /// actor waits for).
    package mutating func beginWrite<Keys: Sequence<ValueKey>>(adding keys: Keys, settled: Bool) -> (
        write: UInt64, values: Set<ValueKey>
    ) {
        let values = unsaved.union(keys)
        unsaved = []
        lastWrite &+= 1
        if settled { settledWrite = lastWrite }
        return (lastWrite, values)
    }

    /// What a write's outcome decided.
    package enum Decision: Equatable {
        /// Writes succeed (again, when `retryEnded`: a commit waiting for the retry's delay may
        /// now wait for the window only).
        case succeeded(retryEnded: Bool)
        /// Writes fail: the next commit waits `retryIn`.
        case failed(retryIn: Duration)
        /// A newer write decided already.
        case superseded
    }

    /// Records the outcome of write `write`; `failed`, when it failed, is unsaved again.
    package mutating func endWrite(_ write: UInt64, failed: Set<ValueKey>?) -> Decision {
        if let failed { unsaved.formUnion(failed) }
        guard write >= settledWrite else { return .superseded }
        settledWrite = write
        guard failed != nil else {
            defer { retryDelay = nil }
            return .succeeded(retryEnded: retryDelay != nil)
        }
        let delay = retryDelay.map { min($0 * 2, .seconds(60)) } ?? .seconds(1)
        retryDelay = delay
        return .failed(retryIn: delay)
    }
}
