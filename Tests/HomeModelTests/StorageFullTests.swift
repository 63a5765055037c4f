import Foundation
import HomeModel
import TestSupport
import Testing
import VirtualDevices

/// A full disk, made with SQLite's page cap (mounting a small tmpfs needs privileges CI may not have):
/// changes fail with `storageFull`, nothing is half-written, and everything works again once there is
/// room.
@Suite("Storage full")
struct StorageFullTests {
    @Test("when the disk is full a change fails with storageFull, changes nothing, and works once space returns")
    func storageFull() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let database = try HomeDatabase.open(atPath: path)
            let f = try await Fixture.make(database: database)
            let (m, home, admin) = (f.manager, Fixture.home, Fixture.admin)
            try await m.edit(.addRoom(home: home, name: "Den"), account: admin)

            // Given a database that may not grow
            try database.limitSize(toPages: try database.pageCount())
            let before = await m.allHomes()

            // When changes need more room than there is (long names, so one page cannot hold them all)
            var refused: HomeError.Code?
            var added: [String] = []
            for index in 0..<400 where refused == nil {
                let name = "Room \(index) " + String(repeating: "x", count: 50)
                refused = await errorCode { try await m.edit(.addRoom(home: home, name: name), account: admin) }
                if refused == nil { added.append(name) }
            }

            // Then one fails with storageFull, and the model is exactly as the last acknowledged change left it
            #expect(refused == .storageFull)
            let after = await m.allHomes()
            #expect(after[0].rooms.map(\.name) == before[0].rooms.map(\.name) + added)
            // Reads and value writes that fit still work
            #expect(await m.homes(for: Fixture.guest).count == 1)

            // When space returns, the same change succeeds
            try database.limitSize(toPages: nil)
            try await m.edit(.addRoom(home: home, name: "Attic"), account: admin)
            let acknowledged = await m.allHomes()[0].rooms.map(\.name)
            await m.shutdown()

            // And the file is sound and holds exactly what was acknowledged
            let reopened = try HomeDatabase.open(atPath: path)
            #expect(try reopened.integrityCheck() == ["ok"])
            let reloaded = try HomeManager(database: reopened)
            #expect(await reloaded.allHomes()[0].rooms.map(\.name) == acknowledged)
            await reloaded.shutdown()
        }
    }
}
