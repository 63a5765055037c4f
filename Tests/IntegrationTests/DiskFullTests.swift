import Broker
import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs for the gateway's data folder, unmounted afterwards. Nil when this user may not
/// mount (CI without root): the disk-full test then says so and does not run.
struct SmallDisk {
    let path: String

    static func mount(megabytes: Int) -> SmallDisk? {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("homegate-disk-\(UUID().uuidString)")
            .path
        guard (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)) != nil,
            run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) == 0
        else {
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
        return SmallDisk(path: path)
    }

    /// Fills the disk to the last byte with a file `name`.
    func fill(_ name: String = "filler") {
        guard
            let handle = FileHandle(forWritingAtPath: "\(path)/\(name)")
                ?? {
                    _ = FileManager.default.createFile(atPath: "\(path)/\(name)", contents: nil)
                    return FileHandle(forWritingAtPath: "\(path)/\(name)")
                }()
        else { return }
        let block = Data(count: 4096)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()
    }

    /// Runs `executable` quietly and returns its exit status (-1 when it cannot start).
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func free(_ name: String = "filler") { try? FileManager.default.removeItem(atPath: "\(path)/\(name)") }

    func unmount() {
        _ = Self.run("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}

@Suite("Disk full under the homegate process", .serialized, .timeLimit(.minutes(3)))
struct DiskFullTests {
    static let disk = SmallDisk.mount(megabytes: 4)

    @Test(
        "on a full disk layout changes fail with a clear error and nothing half-made; reads and device writes go on; space back, all is saved",
        .enabled(if: disk != nil, "needs permission to mount a tmpfs"))
    func diskFull() async throws {
        let disk = try #require(Self.disk)
        defer { disk.unmount() }
        try await withBroker { broker in
            let arguments = try runArguments(
                port: broker.port, clientID: "gateway-under-test", directory: disk.path, devices: true)
            let gateway = try ChildProcess(
                try homegateExecutable(), arguments, outputFile: "\(broker.directory)/homegate.log")
            defer { gateway.send(SIGKILL) }
            let owner = try await GatewayKillTests.connectWhenOnline(port: broker.port)
            let lamp = "homegate/Main House/Living Room/Floor Lamp"
            #expect(try await owner.request("addRoom", #"{"home":"Main House","name":"Before"}"#).isOK)
            let layoutBefore = try await owner.retained("homegate/Main House/$layout")

            // When the disk is full
            disk.fill()
            let added = try await owner.request("addRoom", #"{"home":"Main House","name":"Attic"}"#)
            let renamed = try await owner.request(
                "renameRoom", #"{"home":"Main House","room":"Kitchen","name":"Cookhouse"}"#)
            let written = try await owner.command("\(lamp)/Lightbulb/Brightness/set/owner", "33")

            // Then changes fail with a clear error, and none is half made
            for answer in [added, renamed] {
                #expect(answer["ok"] == .bool(false), "\(answer.serialized)")
                #expect(answer.code == "storageFull", "\(answer.serialized)")
                #expect(answer["message"]?.stringValue?.lowercased().contains("full") == true, "\(answer.serialized)")
            }
            print("disk-full: addRoom → \(added.serialized); brightness → \(written.serialized)")
            #expect(try await owner.retained("homegate/Main House/$layout") == layoutBefore)
            let homes = try await owner.request("homes")
            #expect(homes.isOK, "reads go on: \(homes.serialized)")
            let read = try await owner.request("read", #"{"home":"Main House","accessory":"Floor Lamp"}"#)
            #expect(read.isOK, "device reads go on: \(read.serialized)")
            #expect(try await owner.command("\(lamp)/$identify/owner").isOK, "identify needs no disk")
            // A device write needs no disk: the device acted, so the model and its topic follow it
            #expect(written.isOK, "\(written.serialized)")
            #expect(try await owner.retained("\(lamp)/Lightbulb/Brightness", becomes: "33"))
            #expect(gateway.isRunning)

            // And when space returns, so do changes
            disk.free()
            #expect(try await owner.request("addRoom", #"{"home":"Main House","name":"Attic"}"#).isOK)
            await owner.disconnect()
            gateway.send(SIGTERM)
            await gateway.waitForExit()

            // The file is sound and holds the changes, the value written while the disk was full too
            let store = try HomeDatabase.open(atPath: "\(disk.path)/data/home.sqlite")
            #expect(try store.integrityCheck() == ["ok"])
            let home = try #require(await HomeManager(database: store).allHomes().first { $0.name == "Main House" })
            #expect(home.rooms.map(\.name).contains("Attic"))
            #expect(home.rooms.map(\.name).contains("Kitchen"), "the rename on the full disk was not made")
            let brightness = home.accessories.first { $0.name == "Floor Lamp" }?.services.first?
                .characteristics.first { $0.type == .brightness }?.value
            #expect(brightness == .int(33))
        }
    }
}
