import HomeModel
import ServiceLifecycle

/// Serves one device driver for the gateway's lifetime (``HomeManager/serve(_:)``): its connection,
/// clock or discovery, and its updates into the model. In the service group after the home's
/// service, so it ends before the home stops its drivers and closes the database. A driver whose
/// updates end first (zigbee2mqtt's, when its client stops before it) stays in the group until the
/// group stops it: a service that returns before that fails the whole group.
package struct DriverService: ServiceLifecycle.Service {
    package let manager: HomeManager
    package let driver: RegisteredDriver

    package init(manager: HomeManager, driver: RegisteredDriver) {
        self.manager = manager
        self.driver = driver
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await manager.serve(driver) }
        try? await gracefulShutdown()
    }
}
