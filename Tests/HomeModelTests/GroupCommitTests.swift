import AsyncMailbox
import Foundation
import TestSupport
import Testing
import VirtualDevices

@testable import HomeModel

/// Device values are written in groups (the manager's `valueCommitWindow`), off the manager's actor:
/// they reach the file without any other change, in fewer transactions than values, and a layout
/// change writes the waiting ones before it is answered.
@Suite("Group commit of device values")
struct GroupCommitTests {
    @Test("a burst of values reaches the file in fewer transactions than values, with no other change")
    func burst() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await Self.sensorHome(at: path, clock: clock)
            let before = database.valueCommits

            // Given 200 readings the sensor reports as fast as it can, the last one 77
            for reading in 1...200 { sensor.report(Double(reading % 50)) }
            sensor.report(77)

            // Then the file holds the last one, without a layout change or a shutdown to carry it
            let other = try HomeDatabase.open(atPath: path)
            try await eventually("the file holding 77") {
                clock.advance(by: .milliseconds(100))
                return try Self.reading(in: other) == 77
            }
            // And fewer transactions than readings were needed
            #expect(database.valueCommits - before < 201, "\(database.valueCommits - before) transactions")
            await manager.shutdown()
        }
    }

    @Test(
        "values a refused write left over reach the file once it takes writes again, with no other report or change",
        .timeLimit(.minutes(5)), arguments: [Duration.milliseconds(100), .zero])
    func retried(window: Duration) async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await Self.sensorHome(at: path, window: window, clock: clock)

            // Given a disk that refuses writes while the sensor reports 42, until a group commit has failed
            try await Self.failCommit(of: 42, sensor: sensor, database: database, clock: clock)

            // When it takes writes again, and nothing else happens
            try database.refuseWrites(false)

            // Then the reading reaches the file (a retry: no report, layout change or shutdown carries it)
            let other = try HomeDatabase.open(atPath: path)
            try await eventually("the file holding 42") {
                clock.advance(by: .seconds(1))
                return try Self.reading(in: other) == 42
            }
            await manager.shutdown()
        }
    }

    @Test("a layout change saved after a failed group commit ends the retry's wait", .timeLimit(.minutes(5)))
    func layoutEndsRetry() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await Self.sensorHome(at: path, clock: clock)
            // Given a group commit that failed
            try await Self.failCommit(of: 42, sensor: sensor, database: database, clock: clock)
            try await eventually("the manager retrying the values") { await manager.isRetryingValues }

            // When the disk takes writes again and a layout change is saved
            try database.refuseWrites(false)
            try await manager.edit(.addRoom(home: "Home", name: "Den"), account: "alice")

            // Then the reading is on disk with it, and group commits wait for their window again
            #expect(try Self.reading(in: HomeDatabase.open(atPath: path)) == 42)
            #expect(await !manager.isRetryingValues)
            await manager.shutdown()
        }
    }

    @Test("shutdown writes the values of a group commit that failed", .timeLimit(.minutes(5)))
    func shutdownWritesFailed() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await Self.sensorHome(at: path, clock: clock)
            try await Self.failCommit(of: 42, sensor: sensor, database: database, clock: clock)
            try database.refuseWrites(false)
            await manager.shutdown()
            #expect(try Self.reading(in: HomeDatabase.open(atPath: path)) == 42)
        }
    }

    /// Makes the database refuse writes, has the sensor report `reading` and moves `clock` on until a
    /// group commit has failed; the database still refuses writes.
    static func failCommit(
        of reading: Double, sensor: ReportingDriver, database: HomeDatabase, clock: ManualClock
    ) async throws {
        try database.refuseWrites(true)
        let before = database.failedValueCommits
        sensor.report(reading)
        try await eventually("a failed group commit of \(reading)") {
            clock.advance(by: .milliseconds(100))
            return database.failedValueCommits > before
        }
    }

    /// A home with the reporting sensor in it, in the file at `path`.
    static func sensorHome(
        at path: String, window: Duration = .milliseconds(100), clock: ManualClock = ManualClock()
    ) async throws -> (HomeManager, HomeDatabase, ReportingDriver) {
        let database = try HomeDatabase.open(atPath: path)
        let manager = try HomeManager(database: database, valueCommitWindow: window, clock: clock)
        let sensor = ReportingDriver()
        try await manager.attach(sensor)
        try await manager.edit(.addHome(name: "Home"), account: "alice")
        try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
        return (manager, database, sensor)
    }

    static func reading(in database: HomeDatabase) throws -> Double? {
        try database.load().homes.first?.accessory("sensor")?.characteristic("main", .currentTemperature)?.value?
            .doubleValue
    }

    @Test("the writer syncs every commit: synchronous is FULL, not the NORMAL that WAL set-up leaves")
    func fullSync() async throws {
        try await withTemporaryDirectory { directory in
            let database = try HomeDatabase.open(atPath: "\(directory)/home.sqlite")
            #expect(try database.synchronousMode() == 2)
        }
    }

    @Test(
        "while a layout change is being written the manager serves reports and reads, and keeps the reports",
        .timeLimit(.minutes(5)))
    func layoutSaveAwaited() async throws {
        try await withTemporaryDirectory { directory in
            let (manager, database, sensor) = try await Self.sensorHome(at: "\(directory)/home.sqlite")
            // Given a disk that holds the next write until the test lets it go
            let disk = DispatchSemaphore(value: 0)
            database.holdWrites(until: disk)

            // When a room is added, and the sensor reports 33 while the room is being written
            let adding = Task { try await manager.edit(.addRoom(home: "Home", name: "Den"), account: "alice") }
            try await eventually("the room being written") { await manager.isSavingLayout }
            sensor.report(33)

            // Then the reading is in the model at once, the room not yet (nothing is current before it is saved)
            try await eventually("the reading in the model") {
                try await manager.home("Home", account: "alice").accessory("sensor")?
                    .characteristic("main", .currentTemperature)?.value == .float(33)
            }
            #expect(try await manager.home("Home", account: "alice").rooms.isEmpty)

            // And once the disk goes on, both are in the model and the room is on disk
            disk.signal()
            try await adding.value
            let home = try await manager.home("Home", account: "alice")
            #expect(home.rooms.map(\.name) == ["Den"])
            #expect(home.accessory("sensor")?.characteristic("main", .currentTemperature)?.value == .float(33))
            #expect(try database.load().homes.first?.rooms.map(\.name) == ["Den"])
            await manager.shutdown()
        }
    }

    @Test(
        "an accessory lost while the edit that adds it is being written is in the home unreachable",
        .timeLimit(.minutes(5)))
    func lostWhileBeingAdded() async throws {
        try await withTemporaryDirectory { directory in
            let database = try HomeDatabase.open(atPath: "\(directory)/home.sqlite")
            let manager = try HomeManager(database: database, clock: ManualClock())
            let sensor = ReportingDriver()
            try await manager.attach(sensor)
            try await manager.edit(.addHome(name: "Home"), account: "alice")
            let disk = DispatchSemaphore(value: 0)
            database.holdWrites(until: disk)

            // When the sensor is lost while the edit adding it is being written
            let adding = Task { try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice") }
            try await eventually("the sensor being added") { await manager.isSavingLayout }
            sensor.lose()
            try await eventually("the loss taken in") { await !manager.hasFound("sensor") }
            disk.signal()
            try await adding.value

            // Then the home has it, shown unreachable, not as it was when the edit began
            let home = try await manager.home("Home", account: "alice")
            #expect(home.accessory("sensor")?.isReachable == false)
            await manager.shutdown()
        }
    }

    @Test("a layout change writes the values waiting for their group before it is answered")
    func layoutCarriesValues() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let f = try await Fixture.make(database: HomeDatabase.open(atPath: path), clock: ManualClock())
            let manager = f.manager
            // Given a value written just now (its group commit waits for a window the clock never ends)
            try await manager.writeValue(
                .int(13), to: Fixture.lampBrightness, home: Fixture.home, account: Fixture.admin)
            try await manager.edit(.addRoom(home: Fixture.home, name: "Den"), account: Fixture.admin)
            // Then, with the answer to the layout change, the file holds the value too
            #expect(try Self.brightness(in: HomeDatabase.open(atPath: path)) == 13)
            await manager.shutdown()
        }
    }

    @Test("with no window every value is written before it is answered")
    func noWindow() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let database = try HomeDatabase.open(atPath: path)
            let manager = try HomeManager(database: database, valueCommitWindow: .zero)
            let driver = VirtualDriver(devices: Fixture.devices, tick: .seconds(86_400))
            try await manager.attach(driver)
            try await manager.edit(.addHome(name: Fixture.home), account: Fixture.admin)
            try await manager.edit(.addAccessory(home: Fixture.home, id: "lamp"), account: Fixture.admin)
            try await manager.writeValue(
                .int(21), to: Fixture.lampBrightness, home: Fixture.home, account: Fixture.admin)
            #expect(try Self.brightness(in: HomeDatabase.open(atPath: path)) == 21)
            await manager.shutdown()
        }
    }

    /// The lamp's brightness as the file holds it.
    static func brightness(in database: HomeDatabase) throws -> Int? {
        try database.load().homes.first?.accessory("lamp")?.services.first?.characteristic(.brightness)?.value?.intValue
    }
}

/// Building a home from a file writes it in one transaction at the end.
@Suite("Building in one transaction")
struct BuildingTests {
    @Test("changes made while building are checked and announced at once, and on disk only at the end")
    func oneTransaction() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let manager = try HomeManager(database: HomeDatabase.open(atPath: path))
            try await manager.attach(VirtualDriver(devices: Fixture.devices, tick: .seconds(86_400)))
            let onDisk = try HomeDatabase.open(atPath: path)
            let changes = await manager.changes()
            try await manager.building { manager in
                try await manager.edit(.addHome(name: "Home"), account: "alice")
                for room in 1...50 {
                    try await manager.edit(.addRoom(home: "Home", name: "Room \(room)"), account: "alice")
                }
                try await manager.edit(.addAccessory(home: "Home", id: "lamp", room: "Room 7"), account: "alice")
                // Checked as always
                #expect(
                    await errorCode { try await manager.edit(.addRoom(home: "Home", name: "room 7"), account: "alice") }
                        != nil)
                // Visible in the model at once, not yet on disk
                #expect(try await manager.home("Home", account: "alice").rooms.count == 50)
                #expect(try onDisk.load().homes.isEmpty)
            }
            // And each announced change carries the model it left (not the emptied one building works beside)
            for await change in changes {
                guard case .didAddAccessory = change.event else { continue }
                #expect(change.homes.first?.rooms.count == 50)
                #expect(change.homes.first?.accessory("lamp") != nil)
                break
            }
            let saved = try onDisk.load().homes
            #expect(saved.first?.rooms.count == 50)
            #expect(saved.first?.accessory("lamp")?.room == saved.first?.rooms[6].id)
            await manager.shutdown()
        }
    }
}

/// What the group commit's tests watch of the manager.
extension HomeManager {
    /// Whether group commits wait for a retry's delay (a write of values failed last).
    var isRetryingValues: Bool { store.valueCommits.retryDelay != nil }
    /// Whether a layout edit is being written.
    var isSavingLayout: Bool { store.pendingLayout != nil }
    /// Whether a driver reports `id` now.
    func hasFound(_ id: AccessoryID) -> Bool { drivers.browser.knows(id) }
}
