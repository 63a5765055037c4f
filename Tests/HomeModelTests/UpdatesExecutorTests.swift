import Synchronization
import TestSupport
import Testing

@testable import HomeModel

/// A driver's updates are taken into the model on the executor it names (zigbee2mqtt's: the loop
/// that read them), not on the global executor.
@Suite("Driver updates on the driver's executor")
struct UpdatesExecutorTests {
    @Test("the manager reads a driver's updates on the driver's executor")
    func updatesOnExecutor() async throws {
        let executor = CountingExecutor()
        let sensor = ReportingDriver(updatesExecutor: executor)
        let manager = try HomeManager(database: .inMemory())
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
        await manager.shutdown()
    }

    @Test("with no commit window (every value synced as it comes), not on the driver's executor")
    func noWindowNotOnExecutor() async throws {
        let executor = CountingExecutor()
        let sensor = ReportingDriver(updatesExecutor: executor)
        let manager = try HomeManager(database: .inMemory(), valueCommitWindow: .zero)
        try await manager.attach(sensor)
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
        sensor.report(34)
        try await eventually("the model showing the reading 34") {
            try await manager.home("Home", account: "alice").accessory("sensor")?
                .characteristic("main", .currentTemperature)?.value == .float(34)
        }
        #expect(executor.jobs == 0)
        await manager.shutdown()
    }
}

/// Runs jobs on the global executor and counts them.
final class CountingExecutor: TaskExecutor, Sendable {
    private let count = Mutex(0)
    var jobs: Int { count.withLock { $0 } }

    func enqueue(_ job: consuming ExecutorJob) {
        count.withLock { $0 += 1 }
        let job = UnownedJob(job)
        globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }
}
