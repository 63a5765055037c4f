import Broker
import Foundation
import HomeModel
import TestSupport
import Testing

/// One malformed `homegate.yml` (and, if any, demo-home file) and where its problem must be reported.
struct ConfigFault: Sendable, CustomStringConvertible {
    var what: String
    var config: String
    var demoHome: String?
    /// The line of `homegate.yml` (or of the demo-home file when `inDemoHome`) the problem is at;
    /// nil when it concerns the whole file.
    var line: Int?
    var inDemoHome = false
    /// Words the message must contain.
    var mentions: String

    var description: String { what }
}

/// A minimal valid demo home: one device, one home with an administrator and a guest.
private let validDemoHome = """
    devices:
      - { id: lamp, name: Lamp, kind: lightbulb }
    homes:
      - name: Home
        administrator: { account: owner, name: Olivia }
        guests:
          - { account: guest, name: Gabriel }
        rooms: [Hall]
        accessories:
          - { id: lamp, room: Hall }

    """

/// The corpus of config faults (docs/reliability.md, scenario 5).
enum ConfigFaultCorpus {
    static let config: [ConfigFault] = [
        .init(what: "a tab in the indentation", config: "mqtt:\n\tbroker: mqtt://h\n", line: 2, mentions: "YAML"),
        .init(
            what: "an unclosed quote", config: "mqtt:\n  broker: \"mqtt://h\n  keepAlive: 3\n", line: 6,
            mentions: "quoted scalar at line 2"),
        .init(
            what: "a key twice", config: "mqtt:\n  keepAlive: 3\n  keepAlive: 4\n", line: 2, mentions: "more than once"),
        .init(what: "an unknown key", config: "mqtt:\n  brokr: mqtt://h\n", line: 2, mentions: "did you mean 'broker'"),
        .init(what: "a word for a number", config: "mqtt:\n  keepAlive: soon\n", line: 2, mentions: "keepAlive"),
        .init(what: "a section that is a number", config: "mqtt: 5\n", line: 1, mentions: "section"),
        .init(what: "a section that is a list", config: "mqtt:\n  - broker\n", line: 2, mentions: "section"),
        .init(what: "a broker that is not MQTT", config: "mqtt:\n  broker: http://hub\n", line: 2, mentions: "mqtt://"),
        .init(
            what: "a broker port out of range", config: "mqtt:\n  broker: mqtt://hub:70000\n", line: 2,
            mentions: "70000"),
        .init(
            what: "TLS with a plain broker", config: "mqtt:\n  broker: mqtt://hub\n  tls:\n    verifyServer: true\n",
            line: 3, mentions: "tls"),
        .init(
            what: "a missing password file", config: "mqtt:\n  username: gw\n  passwordFile: /nonexistent/pw\n",
            line: 3, mentions: "does not exist"),
        .init(
            what: "a base topic with a wildcard", config: "mqtt:\n  baseTopic: home/#\n", line: 2, mentions: "wildcard"),
        .init(what: "a base topic starting with $", config: "mqtt:\n  baseTopic: $SYS\n", line: 2, mentions: "$"),
        .init(what: "a negative timeout", config: "commands:\n  timeout: -5\n", line: 2, mentions: "timeout"),
        .init(
            what: "a rate limit burst of 0", config: "commands:\n  rateLimit:\n    burst: 0\n", line: 3,
            mentions: "burst"),
        .init(what: "an unknown log level", config: "logging:\n  level: loud\n", line: 2, mentions: "log level"),
        .init(
            what: "a missing demo-home file", config: "accessories:\n  virtual: /nonexistent/home.yml\n", line: 2,
            mentions: "does not exist"),
        .init(what: "unbalanced braces", config: "mqtt: {broker: mqtt://h\n", line: 2, mentions: "YAML"),
        // Settings that together would lock the administrators out or blur who is who
        .init(
            what: "dynamic security without a gateway account",
            config: "access:\n  dynamicSecurity:\n    enabled: true\n",
            line: 3, mentions: "mqtt.username"),
        .init(
            what: "Home Assistant with the gateway's account",
            config: "mqtt:\n  username: homegate\nhomeAssistant:\n  enabled: true\n  account: homegate\n", line: 5,
            mentions: "gateway's own account"),
        .init(
            what: "the default account is the gateway's",
            config: "mqtt:\n  username: homegate\ncommands:\n  defaultAccount: homegate\n", line: 4,
            mentions: "gateway's own account"),
    ]

    static let demoHome: [ConfigFault] = [
        .init(
            what: "an unknown device kind", config: "",
            demoHome: validDemoHome.replacingOccurrences(of: "kind: lightbulb", with: "kind: toaster"), line: 2,
            inDemoHome: true, mentions: "kind"),
        .init(
            what: "a home without an administrator", config: "",
            demoHome: "devices: []\nhomes:\n  - name: Home\n    rooms: [Hall]\n", line: 3, inDemoHome: true,
            mentions: "administrator"),
        .init(
            what: "a device id twice", config: "",
            demoHome: validDemoHome.replacingOccurrences(
                of: "  - { id: lamp, name: Lamp, kind: lightbulb }",
                with: "  - { id: lamp, name: Lamp, kind: lightbulb }\n  - { id: lamp, name: Lamp Two, kind: switch }"),
            line: 3, inDemoHome: true, mentions: "twice"),
        .init(
            what: "an accessory that is no device", config: "",
            demoHome: validDemoHome.replacingOccurrences(
                of: "{ id: lamp, room: Hall }", with: "{ id: lamp2, room: Hall }"),
            line: 10, inDemoHome: true, mentions: "lamp2"),
        .init(
            what: "an accessory in a room the home lacks", config: "",
            demoHome: validDemoHome.replacingOccurrences(
                of: "{ id: lamp, room: Hall }", with: "{ id: lamp, room: Attic }"),
            line: 10, inDemoHome: true, mentions: "Attic"),
        .init(
            what: "a home name with a wildcard", config: "",
            demoHome: validDemoHome.replacingOccurrences(of: "name: Home", with: "name: Home#1"), line: 4,
            inDemoHome: true, mentions: "Home#1"),
        .init(
            what: "an account with a newline", config: "",
            demoHome: validDemoHome.replacingOccurrences(of: "account: guest,", with: "account: \"gu\\nest\","),
            line: 7, inDemoHome: true, mentions: "control character"),
        .init(
            what: "the administrator also a guest", config: "",
            demoHome: validDemoHome.replacingOccurrences(of: "account: guest,", with: "account: owner,"), line: 7,
            inDemoHome: true, mentions: "already the administrator"),
        .init(
            what: "not YAML", config: "", demoHome: "homes: [\n", line: 2, inDemoHome: true, mentions: "YAML"),
        .init(what: "an empty file", config: "", demoHome: "", line: nil, inDemoHome: true, mentions: "is empty"),
        .init(
            what: "the gateway's account as administrator", config: "mqtt:\n  username: owner\n",
            demoHome: validDemoHome, line: 4, mentions: "gateway's own account"),
    ]
}

@Suite("Config faults: file, line, fix and a non-zero exit", .timeLimit(.minutes(3)))
struct ConfigFaultTests {
    /// Writes the fault's files and runs `homegate <command> --config` on them.
    private func run(_ fault: ConfigFault, command: String, in directory: String) async throws -> (
        status: Int32, output: String, config: String, demoHome: String
    ) {
        let config = "\(directory)/homegate.yml"
        let demoHome = "\(directory)/demo-home.yml"
        var yaml = fault.config
        if let home = fault.demoHome {
            try home.write(toFile: demoHome, atomically: true, encoding: .utf8)
            yaml = yaml.replacingOccurrences(of: "accessories:\n  virtual: /nonexistent/home.yml\n", with: "")
            yaml += "accessories:\n  virtual: \(demoHome)\n"
        }
        yaml += "data:\n  directory: \(directory)/data\n"
        try yaml.write(toFile: config, atomically: true, encoding: .utf8)
        let log = "\(directory)/out-\(command).txt"
        let process = try ChildProcess(try homegateExecutable(), [command, "--config", config], outputFile: log)
        let status = await process.waitForExit()
        return (status, try String(contentsOfFile: log, encoding: .utf8), config, demoHome)
    }

    @Test(
        "check-config and run refuse each fault at its line, with a fix",
        arguments: ConfigFaultCorpus.config + ConfigFaultCorpus.demoHome)
    func refused(fault: ConfigFault) async throws {
        try await withTemporaryDirectory { directory in
            for command in ["check-config", "run"] {
                let (status, output, config, demoHome) = try await run(fault, command: command, in: directory)
                let file = fault.inDemoHome ? demoHome : config
                #expect(status != 0, "\(command): \(output)")
                if let line = fault.line {
                    #expect(output.contains("\(file):\(line):"), "\(command): \(output)")
                } else {
                    #expect(output.contains("\(file): error:"), "\(command): \(output)")
                }
                #expect(output.contains("fix: "), "\(command): \(output)")
                #expect(output.contains(fault.mentions), "\(command): \(output)")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/data/home.sqlite"), "nothing was started")
            }
        }
    }

    @Test("a refused config leaves an older gateway's database unmigrated")
    func refusedConfigLeavesTheDatabase() async throws {
        try await withTemporaryDirectory { directory in
            // Given a database an older gateway wrote (before the driver secrets' migration)
            let database = "\(directory)/data/home.sqlite"
            try FileManager.default.createDirectory(atPath: "\(directory)/data", withIntermediateDirectories: true)
            try HomeDatabase.create(atPath: database, migratedUpTo: "v1")
            let before = try HomeDatabase.appliedMigrations(atPath: database)
            #expect(before == ["v1"])

            // When `run` refuses the config (its demo home names a room the home lacks)
            let fault = try #require(ConfigFaultCorpus.demoHome.first { $0.mentions == "Attic" })
            let (status, output, _, _) = try await run(fault, command: "run", in: directory)
            #expect(status != 0, "\(output)")

            // Then the database is as it was
            #expect(try HomeDatabase.appliedMigrations(atPath: database) == before)
            // And the opening after accepted checks migrates it
            _ = try HomeDatabase.open(atPath: database)
            #expect(try HomeDatabase.appliedMigrations(atPath: database).count > before.count)
        }
    }

    @Test("the valid demo home passes check-config")
    func validDemoHomePasses() async throws {
        try await withTemporaryDirectory { directory in
            let fault = ConfigFault(
                what: "none", config: "mqtt:\n  username: homegate\n", demoHome: validDemoHome, line: nil,
                mentions: "")
            let (status, output, _, _) = try await run(fault, command: "check-config", in: directory)
            #expect(status == 0, "\(output)")
        }
    }
}
