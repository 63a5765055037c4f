import Dispatch

/// A serial executor on a dispatch queue: where an actor that is meant to run on the gateway's event
/// loop (``ExecutorChoice``) runs when there is no loop — the tests, the benchmark that serves each
/// connection on its own thread, a manager that syncs every value as it comes — and where a stopped
/// loop's late jobs run. Jobs run one at a time, in the order they came.
package final class SerialQueueExecutor: SerialExecutor, @unchecked Sendable {
    private let queue: DispatchQueue

    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    package func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
