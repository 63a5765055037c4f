import Broker
import Foundation
import HomeKitBridge
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing

/// The hub's HomeKit bridge against aiohomekit, the controller library Home Assistant uses: a real
/// controller pairing over loopback with the demo home's Main House, on a real broker.
@Suite("HomeKit bridge with aiohomekit", .serialized)
struct HomeKitBridgeTests {
    @Test("pairs (a wrong code first), lists, reads, writes, hears an event caused over MQTT, manages pairings")
    func wholeSession() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                try await withTemporaryDirectory { folder in
                    let controller = HomeKitController(port: port, folder: folder)
                    let code = await bridge.setupCode
                    let wrong = try await controller.run("pair", Self.otherCode(than: code))
                    #expect(!wrong.succeeded)
                    #expect(wrong.lines.last?["type"] as? String == "AuthenticationError")
                    let paired = try await controller.expect("pair", code)
                    #expect(paired["event"] as? String == "paired")

                    let database = try await controller.expect("accessories")
                    let accessories = try #require(database["accessories"] as? [[String: Any]])
                    let on = try #require(Self.address(of: "Floor Lamp", "25", in: accessories))
                    let brightness = try #require(Self.address(of: "Floor Lamp", "8", in: accessories))
                    #expect(Self.address(of: "Main House", "37", in: accessories) != nil, "the bridge's own aid 1")

                    // A write reaches the model as the owner's command
                    _ = try await controller.expect("put", "\(on)=true,\(brightness)=35")
                    let lamp = try await gateway.manager.home("Main House", account: "owner").accessory(
                        named: "Floor Lamp")
                    #expect(lamp.services.first { $0.type == .lightbulb }?.characteristic(.on)?.value == .bool(true))
                    let read = try await controller.expect("get", "\(on),\(brightness),99.1")
                    let values = try #require(read["values"] as? [String: [String: Any]])
                    #expect(values[on]?["value"] as? Bool == true)
                    #expect(values[brightness]?["value"] as? Int == 35)
                    #expect(values["99.1"]?["status"] as? Int == -70409)

                    // A change made over MQTT comes to the subscribed controller as an event
                    let watch = try controller.start(["watch", "\(on),\(brightness)", "1"])
                    _ = try await watch.line("subscribed")
                    let owner = try await Account.connect("owner", to: gateway.broker)
                    _ = try await owner.command(
                        "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness/set/owner", "62")
                    let event = try await watch.line("event")
                    #expect((event["changes"] as? [String: [String: Any]])?[brightness]?["value"] as? Int == 62)
                    await owner.client.disconnect()

                    // Pairings: listed with the identifier as sent, added, removed
                    let listed = try await controller.expect("list-pairings")
                    let pairings = try #require(listed["pairings"] as? [[String: Any]])
                    #expect(pairings.count == 1 && pairings.first?["controllerType"] as? String == "admin")
                    let guestID = "3F7D1D7C-2B9A-4E5E-9C1B-\(UUID().uuidString.suffix(12))"
                    let key = String(repeating: "ab", count: 32)
                    _ = try await controller.expect("add-pairing", guestID, key, "user")
                    let afterAdd = try #require(
                        try await controller.expect("list-pairings")["pairings"] as? [[String: Any]])
                    #expect(
                        afterAdd.contains {
                            $0["pairingId"] as? String == guestID && $0["controllerType"] as? String == "regular"
                        })
                    _ = try await controller.expect("remove-pairing", guestID)
                    let afterRemove = try #require(
                        try await controller.expect("list-pairings")["pairings"] as? [[String: Any]])
                    #expect(afterRemove.count == 1)
                }
            }
        }
    }

    @Test(
        "the pairing, aids and iids outlive the bridge; c# moves when an accessory is added, not for a room or a name")
    func lastingIdentity() async throws {
        try await withGateway(zigbee2mqtt: ["bulb"]) { gateway in
            try await withTemporaryDirectory { folder in
                let (port, on, number) = try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                    let controller = HomeKitController(port: port, folder: folder)
                    _ = try await controller.expect("pair", await bridge.setupCode)
                    let accessories = try await Self.accessories(controller)
                    return (
                        port, try #require(Self.address(of: "Floor Lamp", "25", in: accessories)),
                        await bridge.advertisement.configurationNumber
                    )
                }
                _ = port
                try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                    let controller = HomeKitController(port: port, folder: folder)
                    let accessories = try await Self.accessories(controller)
                    #expect(Self.address(of: "Floor Lamp", "25", in: accessories) == on, "the same aid and iid")
                    #expect(await bridge.advertisement.configurationNumber == number, "nothing changed")
                    #expect(await bridge.advertisement.isPaired)

                    // A room and a name are no part of the database's structure: c# stays, the numbers too
                    _ = try await gateway.manager.edit(.addRoom(home: "Main House", name: "Attic"), account: "owner")
                    _ = try await gateway.manager.edit(
                        .renameAccessory(home: "Main House", accessory: "Floor Lamp", name: "Reading Lamp"),
                        account: "owner")
                    let renamed = try await eventuallyValue("the rename served") {
                        Self.address(of: "Reading Lamp", "25", in: try await Self.accessories(controller))
                    }
                    #expect(renamed == on)
                    #expect(await bridge.advertisement.configurationNumber == number)

                    // An accessory added: c# moves
                    let bulb = AccessoryID("0x000b57fffec6a5b2")
                    try await eventually("the zigbee2mqtt bulb found") {
                        await gateway.manager.discoveredAccessories().contains { $0.id == bulb }
                    }
                    _ = try await gateway.manager.edit(
                        .addAccessory(home: "Main House", id: bulb, room: "Attic", name: "Attic Bulb"), account: "owner"
                    )
                    try await eventually("c# moves with the added accessory") {
                        await bridge.advertisement.configurationNumber == number + 1
                    }
                    #expect(Self.address(of: "Attic Bulb", "25", in: try await Self.accessories(controller)) != nil)
                }
            }
        }
    }

    @Test("a guest's bridge writes what the guest may, and nothing once the guest is removed")
    func guestRights() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(account: "guest", manager: gateway.manager) { bridge, port in
                try await withTemporaryDirectory { folder in
                    let controller = HomeKitController(port: port, folder: folder)
                    _ = try await controller.expect("pair", await bridge.setupCode)
                    let accessories = try await Self.accessories(controller)
                    let on = try #require(Self.address(of: "Floor Lamp", "25", in: accessories))
                    let written = try await controller.expect("put", "\(on)=true")
                    #expect((written["results"] as? [String: Any])?.isEmpty == true)

                    _ = try await gateway.manager.edit(
                        .removeUser(home: "Main House", user: "Gabriel"), account: "owner")
                    let refused = try await controller.expect("put-raw", "\(on)=false")
                    let status = (refused["results"] as? [String: [String: Any]])?[on]?["status"] as? Int
                    // -70401 when the manager refused the write, -70409 when the bridge had already
                    // stopped serving the home's accessories: the guest's rights went either way.
                    #expect(status == -70401 || status == -70409, "\(refused)")
                    let lamp = try await gateway.manager.home("Main House", account: "owner").accessory(
                        named: "Floor Lamp")
                    #expect(lamp.services.first { $0.type == .lightbulb }?.characteristic(.on)?.value == .bool(true))
                    try await eventually("the guest's bridge serving itself alone") {
                        try await Self.accessories(controller).count == 1
                    }
                }
            }
        }
    }

    @Test(
        "advertised over mDNS with HAP's TXT record (c#, ff, id, md, pv, s#, sf, ci, sh), sf=0 once paired, withdrawn at stop; by default on a routed interface, not lo or docker0",
        .timeLimit(.minutes(3)))
    func advertised() async throws {
        try await withTemporaryDirectory { folder in
            let output = "\(folder)/homekit-mdns-test.log"
            let script = try ChildProcess(
                repositoryRoot.appendingPathComponent("scripts/homekit-mdns-test.sh").path,
                [try homegateExecutable(), "\(folder)/work"], outputFile: output)
            let status = await script.waitForExit()
            let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            #expect(status == 0, "\(log)")
            #expect(log.contains("by default on hub0, not lo or docker0"), "\(log)")
        }
    }

    @Test(
        "a backup taken while the gateway runs, restored into a new data folder: the paired controller verifies again and finds the same aids and iids"
    )
    func backupAndRestore() async throws {
        try await withTemporaryDirectory { folder in
            let port = try LoopbackPort.free()
            let first = try Self.configuration(in: folder, data: "first", port: port)
            let second = try Self.configuration(in: folder, data: "second", port: port)
            let controller = HomeKitController(port: port, folder: folder)
            let on = try await Self.whileRunning(first, port: port, folder: folder) {
                let code = try #require(
                    try await Self.homegate(
                        ["homekit-code", "--config", first, "--home", "Main House"], folder: folder
                    )
                    .output.firstMatch(of: /setup code of Main House: (\d{3}-\d{2}-\d{3})/)?.1)
                _ = try await controller.expect("pair", String(code))
                let on = try #require(Self.address(of: "Floor Lamp", "25", in: try await Self.accessories(controller)))
                let backup = try await Self.homegate(
                    ["backup", "--config", first, "\(folder)/backup.sqlite"], folder: folder)
                #expect(backup.status == 0, "\(backup.output)")
                return on
            }
            let restored = try await Self.homegate(
                ["restore", "--config", second, "\(folder)/backup.sqlite"], folder: folder)
            #expect(restored.status == 0, "\(restored.output)")
            // Nothing already stored is replaced, and a file that is no backup is refused
            let again = try await Self.homegate(
                ["restore", "--config", second, "\(folder)/backup.sqlite"], folder: folder)
            #expect(again.status != 0 && again.output.contains("exists"), "\(again.output)")
            try "not a database".write(toFile: "\(folder)/junk.sqlite", atomically: true, encoding: .utf8)
            let third = try Self.configuration(in: folder, data: "third", port: port)
            let junk = try await Self.homegate(["restore", "--config", third, "\(folder)/junk.sqlite"], folder: folder)
            #expect(junk.status != 0 && junk.output.contains("cannot restore"), "\(junk.output)")
            #expect(!FileManager.default.fileExists(atPath: "\(folder)/third/home.sqlite"))

            try await Self.whileRunning(second, port: port, folder: folder) {
                let accessories = try await Self.accessories(controller)
                #expect(Self.address(of: "Floor Lamp", "25", in: accessories) == on)
                let listed = try #require(try await controller.expect("list-pairings")["pairings"] as? [[String: Any]])
                #expect(listed.count == 1)
            }
        }
    }

    // MARK: Helpers

    /// A config file for `homegate run` with the demo home in `folder/data`, Main House served on
    /// `port` (no broker, no advert: the bridge needs neither).
    static func configuration(in folder: String, data: String, port: Int) throws -> String {
        let file = "\(folder)/\(data).yml"
        try """
        mqtt:
          broker: mqtt://127.0.0.1:9
        data:
          directory: \(folder)/\(data)
        accessories:
          virtual: \(demoHomeFile.path)
        web: null
        homekit:
          advertise: false
          bridges:
            - {home: Main House, account: owner, port: \(port), listen: 127.0.0.1}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Runs `homegate run --config configuration` while `body` runs, then stops it with SIGTERM.
    static func whileRunning<T>(
        _ configuration: String, port: Int, folder: String, _ body: () async throws -> T
    ) async throws -> T {
        let gateway = try ChildProcess(
            try homegateExecutable(), ["run", "--config", configuration],
            outputFile: "\(folder)/gateway-\(UUID().uuidString.prefix(6)).log")
        return try await stopGracefully(gateway) {
            try await eventually("the bridge listening on \(port)") { LoopbackPort.isListening(port) }
            return try await body()
        }
    }

    /// Runs a `homegate` subcommand to its end: its exit status and output.
    static func homegate(_ arguments: [String], folder: String) async throws -> (status: Int32, output: String) {
        let output = "\(folder)/homegate-\(UUID().uuidString.prefix(6)).log"
        let process = try ChildProcess(try homegateExecutable(), arguments, outputFile: output)
        let status = await process.waitForExit()
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    static func accessories(_ controller: HomeKitController) async throws -> [[String: Any]] {
        try #require(try await controller.expect("accessories")["accessories"] as? [[String: Any]])
    }

    /// "aid.iid" of the characteristic of short type `type` on the accessory named `name`.
    static func address(of name: String, _ type: String, in accessories: [[String: Any]]) -> String? {
        func short(_ uuid: Any?) -> String? {
            (uuid as? String).map { String($0.prefix(8).drop { $0 == "0" }) }
        }
        for accessory in accessories {
            let services = accessory["services"] as? [[String: Any]] ?? []
            let characteristics = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
            guard characteristics.contains(where: { short($0["type"]) == "23" && $0["value"] as? String == name })
            else { continue }
            if let found = characteristics.first(where: { short($0["type"]) == type }),
                let aid = accessory["aid"] as? Int, let iid = found["iid"] as? Int
            {
                return "\(aid).\(iid)"
            }
        }
        return nil
    }

    static func otherCode(than code: String) -> String {
        let last = code.last!.wholeNumberValue!
        return String(code.dropLast()) + String((last + 1) % 10)
    }
}
