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

/// Writes a gateway config for a test into `directory` and returns the `run` arguments that use it.
func runArguments(port: Int, clientID: String, directory: String, devices: Bool = false) throws -> [String] {
    var yaml = """
        mqtt:
          broker: mqtt://127.0.0.1:\(port)
          clientId: \(clientID)
        data:
          directory: \(directory)/data
        logging:
          level: warning
        web: null

        """
    if devices { yaml += "accessories:\n  virtual: \(demoHomeFile.path)\n" }
    let file = "\(directory)/homegate.yml"
    try yaml.write(toFile: file, atomically: true, encoding: .utf8)
    return ["run", "--config", file]
}

/// The `homegate` executable built next to this test bundle, or `HOMEGATE_EXECUTABLE` when set
/// (`make soak` points it at the release build).
func homegateExecutable() throws -> String {
    if let chosen = ProcessInfo.processInfo.environment["HOMEGATE_EXECUTABLE"], !chosen.isEmpty { return chosen }
    let buildFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [buildFolder, buildFolder.deletingLastPathComponent()].map {
        $0.appendingPathComponent("homegate").path
    }
    guard let found = candidates.first(where: FileManager.default.isExecutableFile) else {
        throw TimedOut("homegate is not built next to the tests (looked at \(candidates)); run `swift build` first")
    }
    return found
}

@Suite("The homegate process and its availability", .timeLimit(.minutes(5)))
struct GatewayProcessTests {
    /// Starts `homegate run` against `broker` and waits until it announced itself online.
    private func startGateway(
        _ broker: MosquittoBroker, watcher: Inbox<MQTTMessage>, logFile: String
    ) async throws -> ChildProcess {
        let gateway = try ChildProcess(
            try homegateExecutable(),
            try runArguments(port: broker.port, clientID: "gateway-under-test", directory: broker.directory),
            outputFile: logFile)
        _ = try await watcher.next("online status") { $0.topic == "homegate/$status" && $0.payloadString == "online" }
        return gateway
    }

    /// Runs `body` with a broker, a watcher subscribed to `homegate/$status`, and a gateway that
    /// announced itself online.
    private func withOnlineGateway(
        _ body: (MosquittoBroker, ChildProcess, Inbox<MQTTMessage>, String) async throws -> Void
    ) async throws {
        try await withBroker { broker in
            let watcher = try makeClient(broker, name: "watcher")
            try await withConnected(watcher) { inbox in
                try await watcher.subscribe(to: ["homegate/$status"])
                let logFile = "\(broker.directory)/homegate.log"
                let gateway = try await startGateway(broker, watcher: inbox, logFile: logFile)
                try await body(broker, gateway, inbox, logFile)
            }
        }
    }

    @Test("the will publishes offline when the gateway dies without DISCONNECT")
    func willOnKill() async throws {
        // Given a running gateway that announced itself online
        try await withOnlineGateway { broker, gateway, inbox, _ in
            // When it is killed, so it cannot send DISCONNECT
            gateway.send(SIGKILL)
            await gateway.waitForExit()

            // Then the broker publishes its will: offline, retained
            let will = try await inbox.next("will") { $0.topic == "homegate/$status" }
            #expect(will.payloadString == "offline")
            let late = try makeClient(broker, name: "late")
            try await withConnected(late) { lateInbox in
                try await late.subscribe(to: ["homegate/$status"])
                let retained = try await lateInbox.next { $0.topic == "homegate/$status" }
                #expect(retained.payloadString == "offline")
                #expect(retained.retain)
            }
        }
    }

    @Test("libmosquitto serves plain TCP too; without HAP the gateway maps no Avahi (loaded on use)")
    func librariesLoadedOnUse() async throws {
        try await withOnlineGateway { _, gateway, _, _ in
            defer { gateway.send(SIGKILL) }
            // Read to the end: a /proc file says its size is 0, and a read by size stops early.
            let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(gateway.pid)/maps"))
            let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
            #expect(maps.contains("libsqlite3"), "the maps were read: SQLite is always mapped")
            #expect(maps.contains("libmosquitto"), "libmosquitto is the one MQTT engine")
            for library in ["libavahi", "libdbus"] {
                #expect(!maps.contains(library), "\(library) is mapped")
            }
        }
    }

    @Test("SIGTERM shuts the gateway down gracefully: offline published, clean exit")
    func gracefulShutdown() async throws {
        try await withOnlineGateway { broker, gateway, inbox, logFile in
            gateway.send(SIGTERM)
            let status = await gateway.waitForExit()

            let offline = try await inbox.next("offline") { $0.topic == "homegate/$status" }
            #expect(offline.payloadString == "offline")
            #expect(
                status == 0,
                "homegate exited with wait status \(status):\n\((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "")"
            )
            // A clean DISCONNECT: the broker did not have to publish the will.
            #expect(broker.log.contains("Client gateway-under-test disconnected."))
        }
    }

    @Test("the gateway waits for a broker that starts after it, then comes online")
    func brokerStartsLater() async throws {
        let port = try LoopbackPort.free()
        try await withTemporaryDirectory { directory in
            let gateway = try ChildProcess(
                try homegateExecutable(),
                try runArguments(port: port, clientID: "early-gateway", directory: directory),
                outputFile: "\(directory)/homegate.log")
            defer { gateway.send(SIGKILL) }
            try await withBroker(.init(port: port)) { broker in
                let watcher = try makeClient(broker, name: "watcher")
                try await withConnected(watcher) { inbox in
                    try await watcher.subscribe(to: ["homegate/$status"])
                    _ = try await inbox.next("online status") {
                        $0.topic == "homegate/$status" && $0.payloadString == "online"
                    }
                    #expect(gateway.isRunning)
                }
            }
        }
    }

    @Test("a bad --broker is refused with a clear message and a non-zero exit")
    func badBrokerURL() async throws {
        try await withTemporaryDirectory { directory in
            let log = "\(directory)/out.log"
            let gateway = try ChildProcess(try homegateExecutable(), ["run", "--broker", "http://x"], outputFile: log)
            let status = await gateway.waitForExit()
            #expect(status != 0)
            let output = try String(contentsOfFile: log, encoding: .utf8)
            #expect(output.contains("must start with mqtt:// or mqtts://"))
        }
    }

    @Test("killed with SIGKILL and started again, the gateway leaves the broker holding exactly the database")
    func sigkillAndRestart() async throws {
        try await withBroker { broker in
            try await withTemporaryDirectory { directory in
                let arguments = try runArguments(
                    port: broker.port, clientID: "gateway-under-test", directory: directory, devices: true)
                let log = "\(directory)/homegate.log"
                let watcher = try makeClient(broker, name: "watcher")
                try await withConnected(watcher) { inbox in
                    try await watcher.subscribe(to: ["homegate/$status"])
                    let first = try ChildProcess(try homegateExecutable(), arguments, outputFile: log)
                    _ = try await inbox.next("online") { $0.payloadString == "online" }

                    // Given an acknowledged layout change
                    let owner = try await Account.connect("owner", to: broker)
                    let renamed = try await owner.request(
                        "renameRoom", #"{"home":"Main House","room":"Kitchen","name":"Cookhouse"}"#)
                    #expect(renamed.isOK, "\(renamed.serialized)")

                    // When the gateway is killed at once and started again
                    first.send(SIGKILL)
                    await first.waitForExit()
                    _ = try await inbox.next("will") { $0.payloadString == "offline" }
                    let second = try ChildProcess(try homegateExecutable(), arguments, outputFile: log)
                    defer { second.send(SIGKILL) }
                    _ = try await inbox.next("online again") { $0.payloadString == "online" }

                    // Then the broker's retained view equals the database's
                    let manager = try HomeManager(
                        database: try HomeDatabase.open(atPath: "\(directory)/data/home.sqlite"))
                    let homes = await manager.allHomes()
                    #expect(homes.first?.rooms.contains { $0.name == "Cookhouse" } == true)
                    let topics = Topics()
                    let expected = RetainedView(homes: homes, discovered: [], topics: topics).topics.union([
                        topics.status, topics.health,
                    ])
                    try await waitForRetainedTopics(port: broker.port, account: "owner", topics: topics) { expected }
                    let held = try await retainedTopicsOnBroker(port: broker.port, account: "owner", topics: topics)
                    #expect(!held.contains { $0.contains("/Kitchen/") })
                    await owner.disconnect()
                }
            }
        }
    }
}
