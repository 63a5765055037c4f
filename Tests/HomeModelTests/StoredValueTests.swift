import Foundation
import TestSupport
import Testing
import VirtualDevices

@testable import HomeModel

/// Device values are stored apart from their accessories' services (migration "v3: characteristic
/// values"): a group commit writes one small row per changed characteristic, and whatever writes an
/// accessory's services folds its rows into them.
@Suite("Device values stored apart")
struct StoredValueTests {
    @Test("a group commit writes the values that changed as rows and leaves the accessory's services as they were")
    func rowsNotServices() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await GroupCommitTests.sensorHome(at: path, clock: clock)
            let services = try database.servicesText(of: "sensor")
            #expect(services?.contains("20") == true)

            for reading in [21.5, 22.0, 23.25] { sensor.report(reading) }
            try await Self.waitForStored(23.25, in: database, clock: clock)

            #expect(try database.storedValues().count == 1)
            #expect(try database.servicesText(of: "sensor") == services)
            #expect(try GroupCommitTests.reading(in: HomeDatabase.open(atPath: path)) == 23.25)
            #expect(database.failedValueCommits == 0)
            await manager.shutdown()
        }
    }

    @Test("a layout change that writes an accessory folds its stored values in; newer values go on as rows")
    func foldedByLayout() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await GroupCommitTests.sensorHome(at: path, clock: clock)
            sensor.report(41)
            try await Self.waitForStored(41, in: database, clock: clock)

            // When the accessory is renamed, its row (with its services) is written again
            try await manager.edit(.renameAccessory(home: "Home", accessory: "sensor", name: "Porch"), account: "alice")
            #expect(try database.storedValues().isEmpty)
            #expect(try database.servicesText(of: "sensor")?.contains("41") == true)

            // And a value after that is a row again, which a reopened file lays over the services
            sensor.report(42)
            try await Self.waitForStored(42, in: database, clock: clock)
            let reopened = try HomeDatabase.open(atPath: path).load().homes.first?.accessory("sensor")
            #expect(reopened?.name == "Porch")
            #expect(reopened?.characteristic("main", .currentTemperature)?.value == .float(42))
            await manager.shutdown()
        }
    }

    @Test("removing an accessory, or its home, removes its stored values")
    func removedWithAccessory() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock()
            let (manager, database, sensor) = try await GroupCommitTests.sensorHome(
                at: "\(directory)/home.sqlite", clock: clock)
            sensor.report(30)
            try await Self.waitForStored(30, in: database, clock: clock)
            try await manager.edit(.removeAccessory(home: "Home", accessory: "sensor"), account: "alice")
            #expect(try database.storedValues().isEmpty)

            try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
            sensor.report(31)
            try await Self.waitForStored(31, in: database, clock: clock)
            try await manager.edit(.removeHome(home: "Home"), account: "alice")
            #expect(try database.storedValues().isEmpty)
            await manager.shutdown()
        }
    }

    @Test("a writer that knows nothing of the stored values (an older gateway) leaves none older than its services")
    func olderWriter() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let clock = ManualClock()
            let (manager, database, sensor) = try await GroupCommitTests.sensorHome(at: path, clock: clock)
            sensor.report(60)
            try await Self.waitForStored(60, in: database, clock: clock)
            await manager.shutdown()

            // When an older gateway writes the accessory's services with a newer value, as it did
            let services = try #require(try database.servicesText(of: "sensor"))
            #expect(services.contains("{\"float\":{\"_0\":20}}"))
            try database.execute(
                sql: "UPDATE accessory SET services = ? WHERE id = ?",
                arguments: [services.replacingOccurrences(of: "{\"_0\":20}", with: "{\"_0\":61}"), "sensor"])

            // Then the row of 60 is gone, and a reopened file has 61
            #expect(try database.storedValues().isEmpty)
            #expect(try GroupCommitTests.reading(in: HomeDatabase.open(atPath: path)) == 61)
        }
    }

    @Test("a value of an accessory not yet on disk (a home being built) is left to the accessory's row")
    func accessoryNotOnDisk() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let database = try HomeDatabase.open(atPath: path)
            let manager = try HomeManager(database: database)
            let sensor = ReportingDriver()
            try await manager.attach(sensor)
            try await manager.building { manager in
                try await manager.edit(.addHome(name: "Home"), account: "alice")
                try await manager.edit(.addAccessory(home: "Home", id: "sensor"), account: "alice")
                // A reading while the home is only in memory, and its group commit
                let before = database.valueCommits
                sensor.report(55)
                try await eventually("the reading's group commit") { database.valueCommits > before }
            }
            #expect(database.failedValueCommits == 0)
            #expect(try database.storedValues().isEmpty)
            #expect(try GroupCommitTests.reading(in: HomeDatabase.open(atPath: path)) == 55)
            await manager.shutdown()
        }
    }

    @Test("every kind of value reads back as it was stored, whatever it would be in JSON")
    func everyKind() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let (manager, database, _) = try await GroupCommitTests.sensorHome(at: path)
            await manager.shutdown()
            let values: [CharacteristicValue] = [
                .bool(true), .bool(false), .int(-7), .int(Int.max), .float(21.5), .float(22), .float(-0.1),
                .string(""), .string("Küche \"7\""), .data(Data([0, 1, 0xFF])), .data(Data()),
                // Not finite, as in the services' JSON: 0 (SQLite would store NaN as NULL)
                .float(.nan), .float(.infinity),
            ]
            for value in values {
                let key = ValueKey(accessory: "sensor", service: "main", characteristic: .currentTemperature)
                try database.saveValues([(key, value)])
                let stored = try HomeDatabase.open(atPath: path).load().homes.first?.accessory("sensor")?
                    .characteristic("main", .currentTemperature)?.value
                let expected = value.doubleValue.map { $0.isFinite ? value : .float(0) } ?? value
                #expect(stored == expected, "\(value)")
            }
        }
    }

    /// Moves `clock` on, a group commit's window at a time, until the sensor's stored row holds `reading`.
    static func waitForStored(_ reading: Double, in database: HomeDatabase, clock: ManualClock) async throws {
        try await eventually("the sensor's stored row holding \(reading)") {
            clock.advance(by: .milliseconds(100))
            return try database.storedValues().contains { $0.accessoryID == "sensor" && $0.value == .float(reading) }
        }
    }
}
