import Broker
import Foundation
import Gateway
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `homegate run` where the broker is missing, silent, shared with another gateway or keeps
/// retained messages from wildcard subscriptions.
@Suite("The homegate process and its broker", .timeLimit(.minutes(3)))
struct GatewayBrokerTests {
    /// A gateway config in `directory` (data in `directory/data`), without a client id unless given;
    /// returns the `run` arguments.
    private func configure(
        _ directory: String, broker: String, baseTopic: String = "homegate", username: String? = nil,
        extra: String = ""
    ) throws -> [String] {
        let yaml = """
            mqtt:
              broker: \(broker)
              baseTopic: \(baseTopic)
              connectTimeout: 2
            \(username.map { "  username: \($0)\n  password: \($0)" } ?? "")
            data:
              directory: \(directory)/data
            logging:
              level: info
            web: null
            \(extra)
            """
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = "\(directory)/homegate.yml"
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        return ["run", "--config", file]
    }

    @Test(
        "SIGTERM ends the gateway while no broker answers: nothing listening, or a listener silent after CONNECT",
        arguments: [false, true])
    func sigtermWithoutABroker(silentListener: Bool) async throws {
        try await withTemporaryDirectory { directory in
            // Given a gateway whose broker is not there (or never answers its CONNECT)
            let silent = silentListener ? try ScriptedBroker { _ in .init(bytes: [], close: false) } : nil
            defer { silent?.stop() }
            let port = try silent?.port ?? LoopbackPort.free()
            let logFile = "\(directory)/homegate.log"
            let gateway = try ChildProcess(
                try homegateExecutable(), try configure(directory, broker: "mqtt://127.0.0.1:\(port)"),
                outputFile: logFile)
            defer { gateway.send(SIGKILL) }
            try await waitForLine(in: logFile, containing: "retrying")

            // When it is told to stop
            gateway.send(SIGTERM)

            // Then it exits cleanly, without a broker ever answering
            let status = await waitForExit(gateway, within: .seconds(60))
            #expect(status == 0, "wait status \(String(describing: status)):\n\(log(logFile))")
        }
    }

    @Test("two gateways without a client id on one broker each keep their own connection and answer")
    func twoGatewaysKeepTheirSessions() async throws {
        try await withBroker { broker in
            try await withTemporaryDirectory { directory in
                // Given two gateways, each with its own data folder and base topic, and no clientId
                let watcher = try makeClient(broker, name: "watcher")
                try await withConnected(watcher) { inbox in
                    try await watcher.subscribe(to: ["one/$status", "two/$status"])
                    var gateways: [ChildProcess] = []
                    defer { for gateway in gateways { gateway.send(SIGKILL) } }
                    for name in ["one", "two"] {
                        gateways.append(
                            try ChildProcess(
                                try homegateExecutable(),
                                try configure(
                                    "\(directory)/\(name)", broker: "mqtt://127.0.0.1:\(broker.port)", baseTopic: name),
                                outputFile: "\(directory)/\(name).log"))
                        _ = try await inbox.next("\(name) online") {
                            $0.topic == "\(name)/$status" && $0.payloadString == "online"
                        }
                    }

                    // Then their client ids are their installations' own, kept in their data folders
                    let ids = try ["one", "two"].map {
                        try String(contentsOfFile: "\(directory)/\($0)/data/client-id", encoding: .utf8)
                            .trimmingCharacters(in: .whitespacesAndNewlines)
                    }
                    #expect(ids[0] != ids[1])
                    #expect(ids.allSatisfy { $0.hasPrefix("homegate-") })

                    // and both answer a request, after which neither has taken the other's session
                    for name in ["one", "two"] {
                        let answer = try await request(broker, base: name, operation: "homes")
                        #expect(String(decoding: answer, as: UTF8.self).contains("\"ok\":true"))
                    }
                    #expect(!broker.log.contains("already connected, closing old connection"), "\(broker.log)")
                }
            }
        }
    }

    @Test("a request sent the moment the gateway says online is answered", arguments: 1...10)
    func onlineMeansAnswering(round: Int) async throws {
        try await withBroker { broker in
            try await withTemporaryDirectory { directory in
                // Given a client waiting for the gateway's online, ready to send a request at once
                let client = try makeClient(broker, name: "eager") { $0.protocolVersion = .v311 }
                try await withConnected(client) { inbox in
                    try await client.subscribe(to: ["homegate/$status", "homegate/$response/eager"])
                    let gateway = try ChildProcess(
                        try homegateExecutable(), try configure(directory, broker: "mqtt://127.0.0.1:\(broker.port)"),
                        outputFile: "\(directory)/homegate.log")
                    defer { gateway.send(SIGKILL) }

                    // When online comes, the request goes out in the same instant
                    _ = try await inbox.next("online") {
                        $0.topic == "homegate/$status" && $0.payloadString == "online"
                    }
                    try await client.publish("homegate/$request/eager/homes", "{}", qos: .atLeastOnce)

                    // Then it is answered
                    let answer = try await inbox.next("the answer") { $0.topic == "homegate/$response/eager" }
                    #expect(!answer.payload.isEmpty)
                }
            }
        }
    }

    @Test("a broker that keeps retained messages from a wildcard subscription is named in the log")
    func retainedViewCheck() async throws {
        // Given a broker where the gateway's account reads its topics three levels deep and more only
        // (and the read-back's marker): `homegate/$status` is not delivered to its read-back's `homegate/#`
        let rules = """
            user homegate
            topic write homegate/#
            topic read homegate/+/+/#
            topic read homegate/$sync

            user watcher
            topic read #
            """
        try await withBroker(
            .init(allowAnonymous: false, passwords: ["homegate": "homegate", "watcher": "watcher"], accessRules: rules)
        ) { broker in
            try await withTemporaryDirectory { directory in
                let watcher = try makeClient(broker, name: "watcher") {
                    $0.username = "watcher"
                    $0.password = "watcher"
                }
                try await withConnected(watcher) { inbox in
                    try await watcher.subscribe(to: ["homegate/$status"])
                    let logFile = "\(directory)/homegate.log"
                    let gateway = try ChildProcess(
                        try homegateExecutable(),
                        try configure(directory, broker: "mqtt://127.0.0.1:\(broker.port)", username: "homegate"),
                        outputFile: logFile)
                    defer { gateway.send(SIGKILL) }
                    _ = try await inbox.next("online") {
                        $0.topic == "homegate/$status" && $0.payloadString == "online"
                    }

                    // Then the gateway says what the broker did and what to do
                    try await waitForLine(in: logFile, containing: "did not deliver the retained 'homegate/$status'")
                }
            }
        }
    }

    @Test("with a dead broker first in mqtt.brokers, the gateway serves through the next and $health names it")
    func gatewayFailsOver() async throws {
        try await withBroker { broker in
            let dead = try LoopbackPort.free()
            let brokers = "[\"mqtt://127.0.0.1:\(dead)\", \"mqtt://127.0.0.1:\(broker.port)\"]"
            try await withOnlineGateway(broker, brokers: brokers, watching: ["homegate/$health"]) { _, inbox in
                let health = try await inbox.next("health") { $0.topic == "homegate/$health" }
                #expect(health.payloadString?.contains("\"address\":\"127.0.0.1:\(broker.port)\"") == true)
                let answer = try await request(broker, base: "homegate", operation: "homes")
                #expect(String(decoding: answer, as: UTF8.self).contains("\"ok\":true"))
            }
        }
    }

    @Test("MQTT 5: a command larger than the gateway takes is dropped by the broker, and the next is answered")
    func hugeCommandNeverReachesTheGateway() async throws {
        try await withBroker { broker in
            try await withOnlineGateway(broker, watching: ["homegate/$response/probe"]) { gateway, inbox in
                // When a client sends a 4 MiB request, Then no answer comes for it (the gateway never
                // read it), and a request after it is answered
                let sender = try makeClient(broker, name: "sender") { $0.protocolVersion = .v311 }
                try await withConnected(sender) { _ in
                    try await sender.publish(
                        "homegate/$request/probe/homes", payload: Array(repeating: 0x20, count: 4 << 20),
                        qos: .atLeastOnce)
                }
                let answer = try await request(broker, base: "homegate", operation: "homes")
                #expect(!answer.isEmpty)
                #expect(await inbox.all.filter { $0.topic == "homegate/$response/probe" }.count == 1)
                #expect(gateway.isRunning)
            }
        }
    }

    @Test("a broker that takes packets of 256 bytes at most: the gateway subscribes in several and answers")
    func smallBrokerPackets() async throws {
        try await withBroker(.init(extraLines: ["max_packet_size 256"])) { broker in
            try await withOnlineGateway(broker) { gateway, _ in
                let answer = try await request(broker, base: "homegate", operation: "homes")
                #expect(String(decoding: answer, as: UTF8.self).contains("\"ok\":true"))
                #expect(gateway.isRunning)
            }
        }
    }

    @Test("an answer larger than the broker's maximum packet is answered answerTooLarge, with the request's id")
    func answerTooLargeForTheBroker() async throws {
        try await withBroker(.init(extraLines: ["max_packet_size 2500"])) { broker in
            try await withOnlineGateway(broker) { _, _ in
                // When a request's answer would be over 2,500 bytes (an unknown operation of 1,500
                // characters, which the answer names twice)
                let operation = String(repeating: "x", count: 1500)
                let answer = try await request(
                    broker, base: "homegate", operation: operation, body: "{\"id\":\"big\"}")

                // Then a short answer says so, with the request's id
                let text = String(decoding: answer, as: UTF8.self)
                #expect(text.contains("\"code\":\"answerTooLarge\""), "\(text)")
                #expect(text.contains("\"id\":\"big\""), "\(text)")
            }
        }
    }

    /// Runs `body` with `homegate run` on `broker` (or on the `brokers` list given as YAML) once it said
    /// `online`, and the inbox of a watcher of `$status` and the `watching` filters; kills it afterwards.
    private func withOnlineGateway(
        _ broker: MosquittoBroker, brokers: String? = nil, watching filters: [String] = [],
        _ body: (ChildProcess, Inbox<MQTTMessage>) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let watcher = try makeClient(broker, name: "watcher")
            try await withConnected(watcher) { inbox in
                try await watcher.subscribe(to: ["homegate/$status"] + filters)
                let address = "mqtt://127.0.0.1:\(broker.port)"
                let arguments = try configure(directory, broker: address)
                if let brokers {
                    let text = try String(contentsOfFile: arguments[2], encoding: .utf8)
                        .replacingOccurrences(of: "broker: \(address)", with: "brokers: \(brokers)")
                    try text.write(toFile: arguments[2], atomically: true, encoding: .utf8)
                }
                let gateway = try ChildProcess(
                    try homegateExecutable(), arguments, outputFile: "\(directory)/homegate.log")
                defer { gateway.send(SIGKILL) }
                _ = try await inbox.next("online") { $0.topic == "homegate/$status" && $0.payloadString == "online" }
                try await body(gateway, inbox)
            }
        }
    }

    /// Sends `operation` as a request of account `probe` and returns the answer's payload.
    private func request(
        _ broker: MosquittoBroker, base: String, operation: String, body: String = "{}"
    ) async throws -> [UInt8] {
        let client = try makeClient(broker, name: "probe") { $0.protocolVersion = .v311 }
        return try await withConnected(client) { inbox in
            try await client.subscribe(to: ["\(base)/$response/probe"])
            try await client.publish("\(base)/$request/probe/\(operation)", body, qos: .atLeastOnce)
            return try await inbox.next("the answer of \(base)") { $0.topic == "\(base)/$response/probe" }.payload
        }
    }

    private func log(_ file: String) -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }

    /// Waits until the log file holds a line with `text`.
    private func waitForLine(in file: String, containing text: String, within timeout: Duration = .seconds(60))
        async throws
    {
        try await eventually("a line with '\(text)':\n\(log(file))", timeout: timeout) { log(file).contains(text) }
    }

    /// The wait status once `process` exited, or nil if it still runs after `timeout`.
    private func waitForExit(_ process: ChildProcess, within timeout: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await process.waitForExit() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if first == nil { process.send(SIGKILL) }
            return first
        }
    }
}
