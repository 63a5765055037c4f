import Broker
import Foundation
import Gateway
import HomeModel
import TestSupport
import Testing
import VirtualDevices

/// The subcommands that read a config and the database: what a user sees, and the exit codes.
@Suite("homegate check-config, acl and topics", .timeLimit(.minutes(5)))
struct CommandLineTests {
    /// Runs homegate with `arguments`; returns its exit status and everything it printed.
    private func homegate(_ arguments: [String], in directory: String) async throws -> (status: Int32, output: String) {
        let log = "\(directory)/out-\(UUID().uuidString.prefix(6)).txt"
        let process = try ChildProcess(try homegateExecutable(), arguments, outputFile: log)
        let status = await process.waitForExit()
        return (status, try String(contentsOfFile: log, encoding: .utf8))
    }

    /// A database with the demo home, and a config that points at it.
    private func demoDatabase(in directory: String) async throws -> String {
        let demo = try DemoHome.load(contentsOf: demoHomeFile)
        try FileManager.default.createDirectory(atPath: "\(directory)/data", withIntermediateDirectories: true)
        let manager = try HomeManager(database: try HomeDatabase.open(atPath: "\(directory)/data/home.sqlite"))
        try await manager.attach(VirtualDriver(devices: demo.devices))
        try await demo.seed(manager)
        await manager.shutdown()
        let config = "\(directory)/homegate.yml"
        try "mqtt:\n  username: homegate\ndata:\n  directory: \(directory)/data\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        return config
    }

    @Test("check-config reports every problem with file, line and fix, and exits non-zero")
    func checkConfigErrors() async throws {
        try await withTemporaryDirectory { directory in
            let config = "\(directory)/bad.yml"
            try """
            mqtt:
              broker: http://hub
              baseTopic: home/+/x
              keepAlive: soon
            loging:
              level: info
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let (status, output) = try await homegate(["check-config", "--config", config], in: directory)
            #expect(status != 0)
            #expect(output.contains("\(config):2:"), "\(output)")
            #expect(output.contains("\(config):3:"))
            #expect(output.contains("\(config):4:"))
            #expect(output.contains("\(config):5:"))
            #expect(output.contains("logging"), "a near miss gets a suggestion")
            #expect(output.contains("fix:"))
        }
    }

    @Test("check-config accepts the sample config")
    func checkConfigSample() async throws {
        try await withTemporaryDirectory { directory in
            let sample = demoHomeFile.deletingLastPathComponent().appendingPathComponent("homegate.yml").path
            let (status, output) = try await homegate(["check-config", "--config", sample], in: directory)
            #expect(status == 0, "\(output)")
            #expect(output.contains("ok"))
        }
    }

    @Test("acl prints rules for the database's users; topics prints the tree")
    func aclAndTopics() async throws {
        try await withTemporaryDirectory { directory in
            let config = try await demoDatabase(in: directory)
            let (status, acl) = try await homegate(["acl", "--config", config], in: directory)
            #expect(status == 0, "\(acl)")
            #expect(acl.contains("pattern write homegate/$request/%u/+"))
            #expect(acl.contains("user guest\ntopic read homegate/$status\ntopic read homegate/Main House/#"))
            #expect(acl.contains("topic write homegate/Main House/+/+/+/+/set/guest\n"))
            #expect(acl.contains("topic read homegate/Lake Cabin/#"))
            #expect(!acl.contains("user stranger"), "stranger is a member of nothing")

            let (treeStatus, tree) = try await homegate(["topics", "--config", config], in: directory)
            #expect(treeStatus == 0, "\(tree)")
            #expect(tree.contains("Floor Lamp\n"))
            #expect(tree.contains("        On  (retained)"))
            #expect(tree.contains("set\n"))
            #expect(tree.contains("<account>  (command: bool)"))
        }
    }

    @Test("check-config warns when nothing protects the broker, and when the acl_file is missing or out of date")
    func checkConfigProtection() async throws {
        try await withTemporaryDirectory { directory in
            let config = try await demoDatabase(in: directory)
            let base = try String(contentsOfFile: config, encoding: .utf8)
            func check() async throws -> String {
                let (status, output) = try await homegate(["check-config", "--config", config], in: directory)
                #expect(status == 0, "warnings do not fail the check: \(output)")
                return output
            }
            // Neither an acl_file nor dynamic security
            #expect(try await check().contains("warning: neither access.aclFile nor access.dynamicSecurity.enabled"))

            // An acl_file that is not there
            let acl = "\(directory)/acl"
            try (base + "access:\n  aclFile: \(acl)\n").write(toFile: config, atomically: true, encoding: .utf8)
            #expect(try await check().contains("warning: access.aclFile '\(acl)' cannot be read by the gateway"))

            // The acl_file homegate acl writes: no warning
            let database = try HomeDatabase.open(atPath: "\(directory)/data/home.sqlite")
            let manager = try HomeManager(database: database)
            let rules = AccessRules(
                topics: Topics(), gatewayAccount: "homegate",
                members: await manager.memberships().map(AccessRules.Member.init))
            try rules.aclFile().write(toFile: acl, atomically: true, encoding: .utf8)
            #expect(!(try await check().contains("warning")))

            // A member added since: out of date
            try await manager.edit(.addUser(home: "Main House", account: "visitor", name: "Vera"), account: "owner")
            await manager.shutdown()
            let output = try await check()
            #expect(output.contains("warning: access.aclFile '\(acl)' is out of date"), "\(output)")
            #expect(output.contains("homegate acl --config \(config) > \(acl)"))
        }
    }

    /// docs/scaling.md builds a bridged hub's acl_file with `homegate acl` alone (issue 52: with a read
    /// grant added by hand, the gateway warned at every start that the file was out of date).
    @Test("a bridged hub's acl_file as docs/scaling.md builds it raises no warning; the central part has no pattern")
    func bridgedHubAclFile() async throws {
        try await withTemporaryDirectory { directory in
            let config = try await demoDatabase(in: directory)
            let acl = "\(directory)/acl"
            let base = try String(contentsOfFile: config, encoding: .utf8)
            try (base + "access:\n  aclFile: \(acl)\n  bridgeClientID: hub1\n").write(
                toFile: config, atomically: true, encoding: .utf8)
            // `homegate acl --config … > acl`: what it prints on stdout, without its note on stderr
            func printed(_ arguments: [String]) async throws -> String {
                let (status, output) = try await homegate(arguments, in: directory)
                #expect(status == 0, "\(output)")
                return output.split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.hasPrefix("note: ") }.joined(separator: "\n")
            }
            let hub = try await printed(["acl", "--config", config])
            try hub.write(toFile: acl, atomically: true, encoding: .utf8)
            #expect(
                hub.contains("user guest\ntopic read $SYS/broker/connection/hub1/state\ntopic read homegate/$status\n"))
            #expect(hub.split(separator: "\n").filter { $0.hasPrefix("pattern ") }.allSatisfy { $0.contains("%u") })
            let (_, checked) = try await homegate(["check-config", "--config", config], in: directory)
            #expect(!checked.contains("warning"), "\(checked)")

            let central = try await printed(["acl", "--central", "--config", config])
            #expect(central.hasPrefix("# Generated by homegate acl --central"))
            #expect(!central.contains("pattern "))
            #expect(
                central.contains(
                    "user homegate\ntopic readwrite homegate/#\ntopic readwrite $SYS/broker/connection/hub1/state\n"))
            #expect(central.contains("user guest\ntopic read $SYS/broker/connection/hub1/state\n"))
            #expect(central.contains("topic write homegate/$request/guest/+\n"))
            #expect(!central.contains("topic read homeassistant/#"), "Home Assistant's discovery stays on the hub")

            // A bridge client id that cannot be a topic level is refused with its line and a fix
            try (base + "access:\n  bridgeClientID: hub/1\n").write(toFile: config, atomically: true, encoding: .utf8)
            let (status, refused) = try await homegate(["check-config", "--config", config], in: directory)
            #expect(status != 0)
            #expect(refused.contains("\(config):6:"), "\(refused)")
            #expect(refused.contains("'access.bridgeClientID' 'hub/1' cannot be used"), "\(refused)")
        }
    }

    @Test("acl without a database says where it looked, and exits non-zero")
    func aclWithoutDatabase() async throws {
        try await withTemporaryDirectory { directory in
            let (status, output) = try await homegate(["acl", "--data", "\(directory)/nothing"], in: directory)
            #expect(status != 0)
            #expect(output.contains("no home database at \(directory)/nothing/home.sqlite"))
        }
    }
}
