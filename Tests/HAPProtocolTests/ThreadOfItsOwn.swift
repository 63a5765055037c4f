import Foundation

/// A thread for a test's blocking work (a child process's pipe, blocking sockets): a task started
/// on it (`Task(executorPreference:)`, which inherits the test's task-local context, so its
/// expectations are the test's) does not hold one of the few threads Swift's concurrency shares
/// among every test of the process.
/// The HAP-python test ran on one of the two for its whole length (seconds, more under load); in the
/// whole-suite run beside two busy processes where a 0.2 s virtual device of another suite missed
/// its 10 s timeout it was one of the tests holding them (which one starved the device is not known).
final class ThreadOfItsOwn: TaskExecutor, @unchecked Sendable {
    static let shared = ThreadOfItsOwn()

    /// Guards `jobs`; signalled when one is added.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        Thread { [unowned self] in serve() }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func serve() -> Never {
        Thread.current.name = "test-blocking"
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
