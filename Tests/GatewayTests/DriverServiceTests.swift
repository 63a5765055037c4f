import Gateway
import HomeModel
import Logging
import ServiceLifecycle
import Testing
import VirtualDevices

@Suite("DriverService: a driver lives as long as the gateway's service group", .timeLimit(.minutes(5)))
struct DriverServiceTests {
    /// Stops the driver at once, as zigbee2mqtt's client does when the group stops it before its
    /// driver, lets the driver's service see its updates end, then says so.
    struct StopsTheDriverFirst: ServiceLifecycle.Service {
        let driver: VirtualDriver
        let stopped: AsyncStream<Void>.Continuation

        func run() async throws {
            await driver.stop()
            for _ in 0..<1_000 { await Task.yield() }
            stopped.yield()
            try? await gracefulShutdown()
        }
    }

    @Test("a driver whose updates end before the group stops it does not fail the group's graceful shutdown")
    func updatesEndingFirst() async throws {
        let manager = try HomeManager(database: .inMemory())
        let driver = VirtualDriver(devices: try DemoHome.load(contentsOf: DemoFixture.file).devices)
        let registered = try await manager.register(driver)
        let (stopped, signal) = AsyncStream.makeStream(of: Void.self)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: DriverService(manager: manager, driver: registered)),
                    .init(service: StopsTheDriverFirst(driver: driver, stopped: signal)),
                ],
                logger: Logger(label: "DriverServiceTests")))
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            for await _ in stopped { break }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        await manager.shutdown()
    }
}
