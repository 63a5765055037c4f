import BigInt
import Broker
import Crypto
import Foundation
import HAP
import HAPProtocol
import Logging
import MQTT

#if canImport(Glibc)
    import Glibc
#endif

/// The HAP part of `make bench` (bench/run.sh runs it): HAP-python (scripts/hap-accessory.py) on
/// loopback as the accessory. Measures, with the release build:
/// - pair setup (SRP-6a 3072/SHA-512, a fresh accessory each round) and pair verify (a new
///   connection each round), through `HAPConnection`, as the driver does them;
/// - read and write round trips on one verified session (`GET`/`PUT /characteristics`);
/// - through `homegate run` and a private mosquitto: a write command's round trip (MQTT v5 answer),
///   and the latency from the accessory's change (SIGUSR1 makes HAP-python warm its sensor) to the
///   retained value topic.
/// Prints one JSON object of figures (milliseconds).
@main
struct HAPBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        if arguments.contains("--bridge") || arguments.contains("--bridge-hold") {
            try await BridgeBench.main(arguments)
            return
        }
        func option(_ name: String, _ fallback: String) -> String {
            arguments.firstIndex(of: name).map { arguments[$0 + 1] } ?? fallback
        }
        let root = option("--root", FileManager.default.currentDirectoryPath)
        let given = option("--homegate", "\(root)/.build/release/homegate")
        let homegate = given.hasPrefix("/") ? given : "\(FileManager.default.currentDirectoryPath)/\(given)"
        let rounds = Int(option("--rounds", "200")) ?? 200
        let setups = Int(option("--setups", "3")) ?? 3
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hap-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bench = HAPBench(root: root, folder: folder, eventWindow: option("--event-window", "0"))

        var figures: [(String, Double)] = [("srpControllerMedianMs", try srpControllerShare())]
        // Pair setup, each on a fresh accessory; the last one stays for the session figures.
        var setupTimes: [Double] = []
        var accessory: Accessory?
        var pairing: AccessoryPairing?
        let controller = ControllerIdentity(
            identifier: UUID().uuidString.uppercased(), signingKey: Curve25519.Signing.PrivateKey())
        for round in 0..<setups {
            await accessory?.stop()
            let started = try await bench.start(name: "setup-\(round)")
            accessory = started
            let connection = try await HAPConnection.open(host: "127.0.0.1", port: started.port)
            let time = try await measure {
                pairing = try await connection.pairSetup(setupCode: HAPBench.code, controller: controller)
            }
            await connection.close()
            setupTimes.append(time)
        }
        figures.append(("pairSetupMedianMs", median(setupTimes)))
        guard let accessory, let pairing else { return }

        var verifyTimes: [Double] = []
        for _ in 0..<20 {
            verifyTimes.append(
                try await measure {
                    let connection = try await HAPConnection.open(host: "127.0.0.1", port: accessory.port)
                    try await connection.pairVerify(controller: controller, accessory: pairing)
                    await connection.close()
                })
        }
        figures.append(("pairVerifyMedianMs", median(verifyTimes)))

        let session = try await HAPConnection.open(host: "127.0.0.1", port: accessory.port)
        try await session.pairVerify(controller: controller, accessory: pairing)
        let light = try await bench.lightAddress(session)
        var reads: [Double] = []
        var writes: [Double] = []
        for index in 0..<rounds {
            reads.append(try await measure { _ = try await session.send(.get("/characteristics?id=\(light)")) })
            let body =
                #"{"characteristics":[{"aid":\#(light.split(separator: ".")[0]),"iid":\#(light.split(separator: ".")[1]),"value":\#(index % 2 == 0)}]}"#
            writes.append(
                try await measure { _ = try await session.send(.putJSON("/characteristics", Array(body.utf8))) })
        }
        await session.close()
        await accessory.stop()
        figures += [
            ("readP50Ms", percentile(reads, 0.5)), ("readP99Ms", percentile(reads, 0.99)),
            ("writeP50Ms", percentile(writes, 0.5)), ("writeP99Ms", percentile(writes, 0.99)),
        ]

        figures += try await bench.throughGateway(homegate: homegate, rounds: rounds)
        let json = figures.map { "\"\($0.0)\":\(String(format: "%.2f", $0.1))" }.joined(separator: ",")
        print("{\(json)}")
    }

    /// Pair setup's controller share: SRP's arithmetic alone (a key pair, the premaster secret, the
    /// session key and the proofs) against an accessory's key made beforehand, the median of 20.
    /// bench/hap/aiohomekit-srp.py measures aiohomekit's SRP client the same way, in the same run.
    static func srpControllerShare() throws -> Double {
        let group = SRPGroup.rfc5054Group3072
        var times: [Double] = []
        for _ in 0..<20 {
            let accessoryKey = SRPClient<SHA512>(group: group, username: [], password: []).publicKey
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255) }
            let started = ContinuousClock.now
            let client = SRPClient<SHA512>(
                group: group, username: Array("Pair-Setup".utf8), password: Array(code.utf8))
            _ = try client.respond(salt: salt, serverPublicKey: [UInt8](accessoryKey.serialize()))
            let elapsed = ContinuousClock.now - started
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
        return median(times)
    }

    static let code = "031-45-154"
    let root: String
    let folder: String
    /// HAP-python gathers events for 0.5 s before sending them; the benchmark sets 0 to measure
    /// homegate's own path (run with `--event-window 0.5` for what a stock HAP-python adds).
    var eventWindow = "0"

    /// HAP-python on a free port, with a fresh state, once it listens.
    struct Accessory {
        let process: ChildProcess
        let port: Int
        let output: String

        func stop() async {
            process.send(SIGKILL)
            await process.waitForExit()
        }

        func warm() { process.send(SIGUSR1) }
    }

    func start(name: String) async throws -> Accessory {
        let port = try LoopbackPort.free()
        let output = "\(folder)/\(name).log"
        let process = try ChildProcess(
            "\(root)/.build/venv/bin/python",
            [
                "\(root)/scripts/hap-accessory.py", "--name", "Bench Bridge", "--port", "\(port)", "--setup-code",
                Self.code, "--state-dir", "\(folder)/\(name)", "--event-window", eventWindow,
            ], outputFile: output)
        let deadline = ContinuousClock.now + .seconds(60)
        while (try? String(contentsOfFile: output, encoding: .utf8))?.contains(#""event": "ready""#) != true {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw BenchError(
                    "HAP-python did not start: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return Accessory(process: process, port: port, output: output)
    }

    /// `aid.iid` of the bridge's light's On.
    func lightAddress(_ session: HAPConnection) async throws -> String {
        let listing = try await session.send(.get("/accessories"))
        let json = try JSONSerialization.jsonObject(with: Data(listing.body)) as? [String: Any]
        for accessory in json?["accessories"] as? [[String: Any]] ?? [] {
            for service in accessory["services"] as? [[String: Any]] ?? [] where (service["type"] as? String) == "43" {
                for characteristic in service["characteristics"] as? [[String: Any]] ?? []
                where (characteristic["type"] as? String) == "25" {
                    return "\(accessory["aid"]!).\(characteristic["iid"]!)"
                }
            }
        }
        throw BenchError("no light in /accessories")
    }

    /// A write command's round trip and the event latency through `homegate run` on a private broker.
    func throughGateway(homegate: String, rounds: Int) async throws -> [(String, Double)] {
        let broker = try await MosquittoBroker.start(.init())
        defer { Task { await broker.stop(removingFiles: true) } }
        let accessory = try await start(name: "gateway")
        defer { Task { await accessory.stop() } }
        try """
        mqtt:
          broker: mqtt://127.0.0.1:\(broker.port)
          clientId: bench-gateway
        data:
          directory: \(folder)/data
        accessories:
          hap:
            discovery: false
            accessories: ["127.0.0.1:\(accessory.port)"]
        commands:
          rateLimit: null
        logging:
          level: warning
        web: null

        """.write(toFile: "\(folder)/homegate.yml", atomically: true, encoding: .utf8)
        let gateway = try ChildProcess(
            homegate, ["run", "--config", "\(folder)/homegate.yml"], outputFile: "\(folder)/homegate.log")
        defer { gateway.send(SIGKILL) }

        var configuration = MQTTConfiguration(port: broker.port, clientID: "bench-client")
        configuration.username = "bench"
        let client = try MQTTClient(configuration, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        let inbox = Inbox(client.messages)
        try await client.connect()
        defer { Task { await client.disconnect() } }
        let answers = "homegate/$response/bench/answers"
        try await client.subscribe(to: [answers, "homegate/$status", "homegate/$discovered"], qos: .atLeastOnce)
        _ = try await inbox.next { $0.topic == "homegate/$status" && $0.payloadString == "online" }
        // Offered once the driver found something listening at its address.
        _ = try await inbox.next {
            $0.topic == "homegate/$discovered" && ($0.payloadString ?? "").contains("hap@127.0.0.1:\(accessory.port)")
        }
        func request(_ topic: String, _ body: String) async throws -> String {
            let id = UUID().uuidString
            var properties = MQTTProperties()
            properties.responseTopic = answers
            properties.correlationData = Array(id.utf8)
            try await client.publish(topic, payload: Array(body.utf8), qos: .atLeastOnce, properties: properties)
            let answer = try await inbox.next { $0.properties.correlationData == Array(id.utf8) }
            return answer.payloadString ?? ""
        }
        _ = try await request("homegate/$request/bench/addHome", #"{"name":"Bench"}"#)
        let paired = try await request(
            "homegate/$request/bench/pairAccessory",
            #"{"id":"hap@127.0.0.1:\#(accessory.port)","setupCode":"\#(Self.code)","home":"Bench","name":"Bridge"}"#)
        guard paired.contains(#""ok":true"#) else { throw BenchError("pairing through homegate failed: \(paired)") }

        var commands: [Double] = []
        let on = "homegate/Bench/$default/Light/Lightbulb/On"
        for index in 0..<rounds {
            commands.append(
                try await measure {
                    let answer = try await request("\(on)/set/bench", index % 2 == 0 ? "true" : "false")
                    guard answer.contains(#""ok":true"#) else { throw BenchError("a write failed: \(answer)") }
                })
        }
        let temperature = "homegate/Bench/$default/Temperature/TemperatureSensor/CurrentTemperature"
        try await client.subscribe(to: [temperature], qos: .atLeastOnce)
        _ = try await inbox.next { $0.topic == temperature }
        var events: [Double] = []
        for _ in 0..<min(rounds, 100) {
            events.append(
                try await measure {
                    accessory.warm()
                    _ = try await inbox.next { $0.topic == temperature && !$0.retain }
                })
        }
        gateway.send(SIGTERM)
        _ = await gateway.waitForExit()
        return [
            ("gatewayWriteP50Ms", percentile(commands, 0.5)), ("gatewayWriteP99Ms", percentile(commands, 0.99)),
            ("eventToTopicP50Ms", percentile(events, 0.5)), ("eventToTopicP99Ms", percentile(events, 0.99)),
        ]
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Every message of a stream, for taking the next one that matches.
actor Inbox {
    private var received: [MQTTMessage] = []

    init(_ messages: some AsyncSequence<MQTTMessage, Never> & Sendable) {
        Task { for await message in messages { await self.add(message) } }
    }

    private func add(_ message: MQTTMessage) { received.append(message) }

    func next(within timeout: Duration = .seconds(60), _ matches: @Sendable (MQTTMessage) -> Bool) async throws
        -> MQTTMessage
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = received.firstIndex(where: matches) { return received.remove(at: index) }
            guard ContinuousClock.now < deadline else { throw BenchError("no matching message in time") }
            try await Task.sleep(for: .microseconds(200))
        }
    }
}

func measure(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void) async throws -> Double {
    let started = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - started
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func median(_ values: [Double]) -> Double { percentile(values, 0.5) }
