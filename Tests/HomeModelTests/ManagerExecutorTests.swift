import Dispatch
import Synchronization
import TestSupport
import Testing

@testable import HomeModel

/// The manager runs on the executor it is given (the gateway's loop): a driver's report is taken in
/// there, in the pass that read it.
@Suite("The manager on its executor")
struct ManagerExecutorTests {
    @Test("a driver's updates are taken in on the manager's executor")
    func updatesOnExecutor() async throws {
        let executor = CountingSerialExecutor()
        let sensor = ReportingDriver()
        let manager = try HomeManager(database: .inMemory(), executor: executor)
        try await manager.attach(sensor)
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
        let before = executor.jobs
        sensor.report(33)
        try await eventually("the model showing the reading 33") {
            try await manager.home("Home", account: "alice").accessory("sensor")?
                .characteristic("main", .currentTemperature)?.value == .float(33)
        }
        #expect(executor.jobs > before)
        #expect(await manager.isOnExecutor(executor))
        await manager.shutdown()
    }

    @Test("with no commit window (every value synced as it comes), not on the given executor")
    func noWindowNotOnExecutor() async throws {
        let executor = CountingSerialExecutor()
        let sensor = ReportingDriver()
        let manager = try HomeManager(database: .inMemory(), valueCommitWindow: .zero, executor: executor)
        try await manager.attach(sensor)
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
        sensor.report(34)
        try await eventually("the model showing the reading 34") {
            try await manager.home("Home", account: "alice").accessory("sensor")?
                .characteristic("main", .currentTemperature)?.value == .float(34)
        }
        #expect(executor.jobs == 0)
        #expect(!(await manager.isOnExecutor(executor)))
        await manager.shutdown()
    }
}

extension HomeManager {
    /// Whether the manager's code runs on `executor`'s queue now.
    fileprivate func isOnExecutor(_ executor: CountingSerialExecutor) -> Bool { executor.isCurrent }
}

/// A serial executor on a dispatch queue that counts its jobs and knows when it is the one running.
final class CountingSerialExecutor: SerialExecutor, Sendable {
    private let count = Mutex(0)
    private let queue = DispatchQueue(label: "counting-executor")
    private let key = DispatchSpecificKey<Bool>()
    var jobs: Int { count.withLock { $0 } }

    init() { queue.setSpecific(key: key, value: true) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        count.withLock { $0 += 1 }
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
