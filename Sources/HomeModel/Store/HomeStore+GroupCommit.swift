import Execution
import Foundation
import Logging
import Synchronization

/// The group commit of device values: what a device did or reported is recorded in place and
/// written in one transaction per commit window (the manager's `valueCommitWindow`), off the actor; a failed
/// write is retried after a backoff (``ValueCommitSchedule``).
extension HomeStore {
    /// Starts the wait for the next group commit, unless one is under way.
    func scheduleValueCommit() {
        guard valueFlush == nil, !isClosed else { return }
        let delay = valueCommits.nextDelay
        valueFlushNumber &+= 1
        let number = valueFlushNumber
        let reenter = self.reenter
        valueFlush = deadlines.schedule(after: delay) { await reenter { $0.commitValues(flush: number) } }
    }

    /// Writes every waiting value in one transaction off the actor.
    private func commitValues(flush number: UInt64) {
        guard number == valueFlushNumber, !isClosed else { return }
        valueFlush = nil
        guard !valueCommits.unsaved.isEmpty else { return }
        let (write, written) = valueCommits.beginWrite(adding: [], settled: false)
        let (failedValues, reenter) = (self.failedValues, self.reenter)
        database.saveValuesLater(values(of: written)) { error in
            if error != nil { failedValues.add(written) }
            // GRDB calls back on its writer queue: the hop back onto the owner's actor.
            Task { await reenter { $0.valueWriteEnded(write, error: error) } }
        }
    }

    private func valueWriteEnded(_ write: UInt64, error: (any Error)?) {
        valueCommits.keepUnsaved(failedValues.take())
        decided(valueCommits.endWrite(write, failed: error == nil ? nil : []), error: error)
        if !valueCommits.unsaved.isEmpty { scheduleValueCommit() }
    }

    /// Says a failed write in the log; after a success that ends the retries, a commit waiting for
    /// the retry's delay waits for the window instead.
    private func decided(_ decision: ValueCommitSchedule.Decision, error: (any Error)?) {
        switch decision {
        case .superseded, .succeeded(retryEnded: false):
            return
        case .succeeded(retryEnded: true):
            guard let flush = valueFlush else { return }
            deadlines.cancel(flush)
            valueFlush = nil
            scheduleValueCommit()
        case .failed(let delay):
            if isClosed {
                logger.error(
                    "Device state is lost: the home database could not be written as the gateway stopped",
                    metadata: ["error": "\(error.map { "\($0)" } ?? "")", "values": "\(valueCommits.unsaved.count)"])
            } else {
                logger.warning(
                    "Device state is kept in memory only: the home database could not be written",
                    metadata: ["error": "\(error.map { "\($0)" } ?? "")", "retryIn": "\(delay)"])
            }
        }
    }

    /// The values `keys` name as the model holds them now; those it no longer has are left out.
    func values(of keys: Set<ValueKey>) -> [(ValueKey, CharacteristicValue)] {
        keys.compactMap { key in
            guard let (h, a) = graph.locate(key.accessory),
                let value = graph.homes[h].accessories[a].characteristic(key.service, key.characteristic)?.value
            else { return nil }
            return (key, value)
        }
    }

    /// Records how a write of values that went with a layout change's transaction ended: what
    /// failed stays unsaved and waits for the next group commit.
    func valuesWritten(_ write: UInt64, failed: Set<ValueKey>?, error: (any Error)?) {
        decided(valueCommits.endWrite(write, failed: failed), error: error)
        if failed != nil { scheduleValueCommit() }
    }

    /// Writes the values of `keys` and every value still unsaved, at once; what fails stays unsaved.
    func saveValues(of keys: [ValueKey]) {
        let (write, pending) = valueCommits.beginWrite(adding: keys, settled: true)
        do {
            try database.saveValues(values(of: pending))
            decided(valueCommits.endWrite(write, failed: nil), error: nil)
        } catch {
            decided(valueCommits.endWrite(write, failed: pending), error: error)
            scheduleValueCommit()
        }
    }
}

/// The values of group commits that failed on GRDB's queue, until the owner's actor (or shutdown,
/// which cannot wait for the actor) takes them back.
final class FailedValueWrites: Sendable {
    private let keys = Mutex<Set<ValueKey>>([])

    func add(_ failed: Set<ValueKey>) { keys.withLock { $0.formUnion(failed) } }

    func take() -> Set<ValueKey> {
        keys.withLock { keys in
            defer { keys = [] }
            return keys
        }
    }
}
