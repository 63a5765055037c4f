import Foundation
import HomeModel
import VirtualDevices

/// The demo home of `Config/demo-home.yml`, seeded into a model on an in-memory database.
enum DemoFixture {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/demo-home.yml")

    /// The model with the demo home, and the demo's driver attached to it (to make its devices act).
    static func seeded() async throws -> (manager: HomeManager, driver: VirtualDriver) {
        let demo = try DemoHome.load(contentsOf: file)
        let manager = try HomeManager(database: .inMemory())
        let driver = VirtualDriver(devices: demo.devices)
        try await manager.attach(driver)
        try await demo.seed(manager)
        return (manager, driver)
    }

    /// Main House as its owner sees it.
    static func mainHouse(in manager: HomeManager) async throws -> Home {
        try await manager.home("Main House", account: "owner")
    }
}
