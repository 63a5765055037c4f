import Broker
import Crypto
import Foundation
import HAP
import HAPProtocol
import Logging
import MQTT
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The `bridge` section of `make bench` (`hap-bench --bridge`, run by bench/run.sh): homegate's
/// HomeKit bridge (`homegate run` with a `homekit` bridge of bench/make-bridge-home.sh's home) beside
/// HAP-python's accessory server (scripts/hap-accessory.py --bench-home, the same accessories) on
/// loopback, in the same run, with the same controller for both: this package's HAP controller
/// (`HAPConnection`, what the HAP driver uses), whose own share of each figure is small and the same
/// for both servers. Each figure alternates the two servers round by round:
/// - pair setup (SRP-6a 3072/SHA-512 and the exchange of long-term keys, M1 to M6 on an open
///   connection), a freshly started server with fresh state each round;
/// - pair verify: connect, M1 to M4, close;
/// - read: `GET /characteristics` of one switch's On on a verified session;
/// - write: `PUT /characteristics` of that On (true and false in turn) by a second paired
///   controller, to its `204`;
/// - event: from that write's start to the `EVENT` at the first controller, which subscribed to it
///   (the same value change for both servers: another controller's write);
/// - homegate only: from an MQTT write command (`…/On/set/owner` on a private mosquitto) to the
///   `EVENT` at the subscribed controller, through the broker, the gateway's command path, the virtual
///   device and the bridge.
/// HAP-python sends events without its 0.5 s coalescing window (`--event-window 0`), its fastest.
/// Prints one JSON object of figures: milliseconds, medians and p90s.
/// `--gateway-offline` (a diagnosis, not run by bench/run.sh): homegate's broker address leads
/// nowhere, so the gateway mirrors nothing to MQTT meanwhile; no MQTT row then.
///
/// `hap-bench --bridge-hold --port P --code C`: pairs with the bridge at 127.0.0.1:P, adds a second
/// controller, lets both read /accessories and subscribe to every characteristic that sends events,
/// prints `ready`, and then reads events until it is killed (the section's memory figure).
struct BridgeBench {
    static let hapPythonCode = "031-45-154"
    let root: String
    let folder: String
    let homegate: String
    let home: String
    let accessories: Int
    let brokerPort: Int
    var gatewayOffline = false

    static func main(_ arguments: [String]) async throws {
        func option(_ name: String, _ fallback: String) -> String {
            arguments.firstIndex(of: name).map { arguments[$0 + 1] } ?? fallback
        }
        if arguments.contains("--bridge-hold") {
            try await hold(port: Int(option("--port", "0"))!, code: option("--code", ""))
            return
        }
        let root = option("--root", FileManager.default.currentDirectoryPath)
        let given = option("--homegate", "\(root)/.build/release/homegate")
        let homegate = given.hasPrefix("/") ? given : "\(FileManager.default.currentDirectoryPath)/\(given)"
        let rounds = Int(option("--rounds", "500")) ?? 500
        let setups = Int(option("--setups", "10")) ?? 10
        let verifies = Int(option("--verifies", "100")) ?? 100
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer {
            if ProcessInfo.processInfo.environment["BENCH_KEEP"] != "1" {
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        let broker = try await MosquittoBroker.start(.init())
        let bench = BridgeBench(
            root: root, folder: folder, homegate: homegate, home: option("--home", ""),
            accessories: Int(option("--accessories", "100")) ?? 100, brokerPort: broker.port,
            gatewayOffline: arguments.contains("--gateway-offline"))
        do {
            let figures = try await bench.run(rounds: rounds, setups: setups, verifies: verifies)
            await broker.stop(removingFiles: true)
            print("{" + figures.map { "\"\($0.0)\":\(String(format: "%.3f", $0.1))" }.joined(separator: ",") + "}")
        } catch {
            await broker.stop(removingFiles: true)
            throw error
        }
    }

    // MARK: The servers

    enum Kind: String, CaseIterable { case homegate, hapPython }

    /// A running accessory server on loopback, and the code that pairs with it.
    struct Server {
        let kind: Kind
        let process: ChildProcess
        let port: Int
        let code: String

        func stop() async {
            process.send(SIGKILL)
            _ = await process.waitForExit()
        }
    }

    func start(_ kind: Kind, name: String, baseTopic: String = "homegate") async throws -> Server {
        switch kind {
        case .hapPython: try await startHAPPython(name: name)
        case .homegate: try await startHomegate(name: name, baseTopic: baseTopic)
        }
    }

    func startHAPPython(name: String) async throws -> Server {
        let port = try LoopbackPort.free()
        let output = "\(folder)/\(name).log"
        let process = try ChildProcess(
            "\(root)/.build/venv/bin/python",
            [
                "\(root)/scripts/hap-accessory.py", "--name", "Bench Bridge", "--port", "\(port)", "--setup-code",
                Self.hapPythonCode, "--state-dir", "\(folder)/\(name)", "--event-window", "0",
                "--bench-home", "\(accessories)",
            ], outputFile: output)
        try await Self.waitFor("HAP-python", process: process, output: output) {
            (try? String(contentsOfFile: output, encoding: .utf8))?.contains(#""event": "ready""#) == true
        }
        return Server(kind: .hapPython, process: process, port: port, code: Self.hapPythonCode)
    }

    func startHomegate(name: String, baseTopic: String) async throws -> Server {
        let port = try LoopbackPort.free()
        let configuration = "\(folder)/\(name).yml"
        try """
        mqtt:
          broker: mqtt://127.0.0.1:\(gatewayOffline ? 9 : brokerPort)
          clientId: bench-bridge-\(name)
          baseTopic: \(baseTopic)
        data:
          directory: \(folder)/\(name)
        accessories:
          virtual: \(home)
        commands:
          rateLimit: null
        logging:
          level: warning
        web: null
        homekit:
          advertise: false
          bridges:
            - {home: Bench, account: owner, port: \(port), listen: 127.0.0.1}

        """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let output = "\(folder)/\(name).log"
        let process = try ChildProcess(homegate, ["run", "--config", configuration], outputFile: output)
        try await Self.waitFor("homegate's bridge", process: process, output: output) { LoopbackPort.isListening(port) }
        // The setup code as the operator gets it (the bridge's state is made on first read).
        let codeOutput = "\(folder)/\(name)-code.log"
        let command = try ChildProcess(
            homegate, ["homekit-code", "--config", configuration, "--home", "Bench"], outputFile: codeOutput)
        _ = await command.waitForExit()
        let printed = (try? String(contentsOfFile: codeOutput, encoding: .utf8)) ?? ""
        guard let range = printed.range(of: "setup code of Bench: ") else {
            process.send(SIGKILL)
            throw BenchError("homegate homekit-code printed no code: \(printed)")
        }
        let code = String(printed[range.upperBound...].prefix(10))
        return Server(kind: .homegate, process: process, port: port, code: code)
    }

    static func waitFor(
        _ what: String, process: ChildProcess, output: String, _ ready: () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !ready() {
            guard ContinuousClock.now < deadline, process.isRunning else {
                process.send(SIGKILL)
                throw BenchError(
                    "\(what) did not start: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: The figures

    func run(rounds: Int, setups: Int, verifies: Int) async throws -> [(String, Double)] {
        var times: [Kind: [String: [Double]]] = [.homegate: [:], .hapPython: [:]]
        func add(_ kind: Kind, _ name: String, _ value: Double) {
            times[kind, default: [:]][name, default: []].append(value)
        }
        // The order of the two servers alternates round by round.
        func order(_ round: Int) -> [Kind] { round % 2 == 0 ? [.homegate, .hapPython] : [.hapPython, .homegate] }

        // Pair setup, each on a server started afresh (a paired accessory refuses another).
        for round in 0..<setups {
            for kind in order(round) {
                let server = try await start(kind, name: "setup-\(kind)-\(round)", baseTopic: "setup\(round)")
                let connection = try await HAPConnection.open(host: "127.0.0.1", port: server.port)
                let controller = Self.newController()
                add(
                    kind, "pairSetup",
                    try await measure {
                        _ = try await connection.pairSetup(setupCode: server.code, controller: controller)
                    })
                await connection.close()
                await server.stop()
            }
        }

        // The session servers: controller A (admin, set up) and B (added by A).
        var sessions: [Kind: Session] = [:]
        var servers: [Server] = []
        defer { for server in servers { server.process.send(SIGKILL) } }
        for kind in Kind.allCases {
            let server = try await start(kind, name: "session-\(kind)")
            servers.append(server)
            sessions[kind] = try await Session.open(server)
        }

        for round in 0..<verifies {
            for kind in order(round) {
                let session = sessions[kind]!
                add(
                    kind, "pairVerify",
                    try await measure {
                        let connection = try await HAPConnection.open(host: "127.0.0.1", port: session.port)
                        try await connection.pairVerify(controller: session.a, accessory: session.pairing)
                        await connection.close()
                    })
            }
        }

        // Reads on A's session, writes by B; A subscribed to the switch, its events stamped as they come.
        let warmUp = 20
        for round in 0..<(warmUp + rounds) {
            for kind in order(round) {
                let session = sessions[kind]!
                let read = try await measure { try await session.read() }
                let (write, event) = try await session.writeAndEvent(round % 2 == 0)
                if round >= warmUp {
                    add(kind, "read", read)
                    add(kind, "write", write)
                    add(kind, "event", event)
                }
            }
        }

        // homegate: an MQTT write command to the EVENT at A.
        let mqtt = try await session(mqttOf: sessions[.homegate]!)
        for round in 0..<(gatewayOffline ? 0 : warmUp + rounds) {
            let event = try await mqtt(round % 2 == 0)
            if round >= warmUp { add(.homegate, "mqttEvent", event) }
        }

        var figures: [(String, Double)] = []
        for name in ["pairSetup", "pairVerify", "read", "write", "event", "mqttEvent"] {
            for kind in Kind.allCases {
                guard let values = times[kind]?[name], !values.isEmpty else { continue }
                figures.append(("\(kind)_\(name)_p50", percentile(values, 0.5)))
                figures.append(("\(kind)_\(name)_p90", percentile(values, 0.9)))
                figures.append(("\(kind)_\(name)_n", Double(values.count)))
            }
        }
        figures.append(("accessories", Double(accessories)))
        return figures
    }

    /// A writer of the On of "Switch 1" over MQTT that returns the time to A's EVENT of it.
    func session(mqttOf session: Session) async throws -> @Sendable (Bool) async throws -> Double {
        let client = try MQTTClient(
            MQTTConfiguration(port: brokerPort, clientID: "bench-bridge-client"),
            logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        try await client.connect()
        let topic = "homegate/Bench/Room 1/Switch 1/Switch/On/set/owner"
        return { value in
            let seen = session.eventCount()
            let started = ContinuousClock.now
            try await client.publish(topic, payload: Array((value ? "true" : "false").utf8), qos: .atLeastOnce)
            return try await session.eventTime(after: seen, since: started)
        }
    }

    static func newController() -> ControllerIdentity {
        ControllerIdentity(identifier: UUID().uuidString.uppercased(), signingKey: Curve25519.Signing.PrivateKey())
    }

    /// Two verified controllers of one server, A subscribed to Switch 1's On.
    final class Session: Sendable {
        let port: Int
        let a: ControllerIdentity
        let pairing: AccessoryPairing
        let sessionA: HAPConnection
        let sessionB: HAPConnection
        let address: (aid: Int, iid: Int)
        /// When each of A's events came.
        private let stamps: Stamps
        private let reader: Task<Void, Never>

        private init(
            port: Int, a: ControllerIdentity, pairing: AccessoryPairing, sessionA: HAPConnection,
            sessionB: HAPConnection, address: (aid: Int, iid: Int)
        ) {
            self.port = port
            self.a = a
            self.pairing = pairing
            self.sessionA = sessionA
            self.sessionB = sessionB
            self.address = address
            let stamps = Stamps()
            self.stamps = stamps
            reader = Task {
                for await message in sessionA.events where message.kind == .event {
                    stamps.add(ContinuousClock.now)
                }
            }
        }

        static func open(_ server: Server) async throws -> Session {
            let a = BridgeBench.newController()
            let b = BridgeBench.newController()
            let setup = try await HAPConnection.open(host: "127.0.0.1", port: server.port)
            let pairing = try await setup.pairSetup(setupCode: server.code, controller: a)
            await setup.close()
            let sessionA = try await verified(server.port, a, pairing)
            let added = try await sessionA.send(
                .pairing(
                    "/pairings",
                    PairingsRequest.add(PairingEntry(identifier: b.identifier, publicKey: b.publicKey, isAdmin: false)))
            )
            try PairingsRequest.readResult(added.body)
            let sessionB = try await verified(server.port, b, pairing)
            let address = try await switchOn(sessionA, named: "Switch 1")
            _ = try await sessionB.send(.get("/accessories"))
            let subscribed = try await sessionA.send(
                .putJSON(
                    "/characteristics",
                    Array(#"{"characteristics":[{"aid":\#(address.aid),"iid":\#(address.iid),"ev":true}]}"#.utf8)))
            guard (200..<300).contains(subscribed.statusCode) else {
                throw BenchError("subscribing answered \(subscribed.statusCode)")
            }
            return Session(
                port: server.port, a: a, pairing: pairing, sessionA: sessionA, sessionB: sessionB, address: address)
        }

        static func verified(_ port: Int, _ controller: ControllerIdentity, _ pairing: AccessoryPairing) async throws
            -> HAPConnection
        {
            let connection = try await HAPConnection.open(host: "127.0.0.1", port: port)
            try await connection.pairVerify(controller: controller, accessory: pairing)
            return connection
        }

        func eventCount() -> Int { stamps.count }

        /// Milliseconds from `started` to the first event after the `seen`th.
        func eventTime(after seen: Int, since started: ContinuousClock.Instant) async throws -> Double {
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                if let instant = stamps.instant(seen) {
                    return milliseconds(instant - started)
                }
                guard ContinuousClock.now < deadline else { throw BenchError("no EVENT within 10 s at port \(port)") }
                try await Task.sleep(for: .microseconds(100))
            }
        }

        func read() async throws {
            let answer = try await sessionA.send(.get("/characteristics?id=\(address.aid).\(address.iid)"))
            guard answer.statusCode == 200 else { throw BenchError("a read answered \(answer.statusCode)") }
        }

        /// B writes `value`: the time to B's answer, and to A's event.
        func writeAndEvent(_ value: Bool) async throws -> (Double, Double) {
            let seen = eventCount()
            let body = #"{"characteristics":[{"aid":\#(address.aid),"iid":\#(address.iid),"value":\#(value)}]}"#
            let started = ContinuousClock.now
            let answer = try await sessionB.send(.putJSON("/characteristics", Array(body.utf8)))
            let written = milliseconds(ContinuousClock.now - started)
            guard answer.statusCode == 204 || answer.statusCode == 200 else {
                throw BenchError(
                    "a write answered \(answer.statusCode): \(String(decoding: answer.body, as: UTF8.self))")
            }
            return (written, try await eventTime(after: seen, since: started))
        }
    }

    /// The aid and iid of the On of the accessory named `name`.
    static func switchOn(_ session: HAPConnection, named name: String) async throws -> (aid: Int, iid: Int) {
        for accessory in try await accessoryList(session) {
            let characteristics = (accessory["services"] as? [[String: Any]] ?? []).flatMap {
                $0["characteristics"] as? [[String: Any]] ?? []
            }
            guard characteristics.contains(where: { short($0["type"]) == "23" && $0["value"] as? String == name }),
                let on = characteristics.first(where: { short($0["type"]) == "25" }),
                let aid = accessory["aid"] as? Int, let iid = on["iid"] as? Int
            else { continue }
            return (aid, iid)
        }
        throw BenchError("no \(name) with On in /accessories")
    }

    static func accessoryList(_ session: HAPConnection) async throws -> [[String: Any]] {
        let listing = try await session.send(.get("/accessories"))
        let json = try JSONSerialization.jsonObject(with: Data(listing.body)) as? [String: Any]
        return json?["accessories"] as? [[String: Any]] ?? []
    }

    /// A HAP type as its short form ("25" for On), from either form.
    static func short(_ type: Any?) -> String? {
        guard let type = type as? String else { return nil }
        let head = type.split(separator: "-").first.map(String.init) ?? type
        let trimmed = head.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed).uppercased()
    }

    // MARK: Holding two controllers for the memory figure

    static func hold(port: Int, code: String) async throws {
        let a = newController()
        let b = newController()
        let setup = try await HAPConnection.open(host: "127.0.0.1", port: port)
        let pairing = try await setup.pairSetup(setupCode: code, controller: a)
        await setup.close()
        let first = try await Session.verified(port, a, pairing)
        let added = try await first.send(
            .pairing(
                "/pairings",
                PairingsRequest.add(PairingEntry(identifier: b.identifier, publicKey: b.publicKey, isAdmin: false))))
        try PairingsRequest.readResult(added.body)
        let second = try await Session.verified(port, b, pairing)
        let received = Stamps()
        var subscribed = 0
        for connection in [first, second] {
            // As the Home app does: the database, then events of everything that sends them.
            var items: [String] = []
            for accessory in try await accessoryList(connection) {
                guard let aid = accessory["aid"] as? Int else { continue }
                for service in accessory["services"] as? [[String: Any]] ?? [] {
                    for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                        guard (characteristic["perms"] as? [String] ?? []).contains("ev"),
                            let iid = characteristic["iid"] as? Int
                        else { continue }
                        items.append(#"{"aid":\#(aid),"iid":\#(iid),"ev":true}"#)
                    }
                }
            }
            let answer = try await connection.send(
                .putJSON("/characteristics", Array(#"{"characteristics":[\#(items.joined(separator: ","))]}"#.utf8)))
            guard (200..<300).contains(answer.statusCode) else {
                throw BenchError("subscribing answered \(answer.statusCode)")
            }
            subscribed += items.count
            Task { for await _ in connection.events { received.add(ContinuousClock.now) } }
        }
        print(#"{"event":"ready","subscribed":\#(subscribed)}"#)
        fflush(nil)
        signal(SIGTERM, SIG_IGN)
        let stop = DispatchSource.makeSignalSource(signal: SIGTERM)
        let stopped = AsyncStream<Void>.makeStream()
        stop.setEventHandler { stopped.continuation.finish() }
        stop.resume()
        for await _ in stopped.stream {}
        print(#"{"event":"stopped","events":\#(received.count)}"#)
        fflush(nil)
        _ = (first, second)
    }
}

/// Instants, appended from one task and read from another.
final class Stamps: Sendable {
    private let instants = Mutex<[ContinuousClock.Instant]>([])
    func add(_ instant: ContinuousClock.Instant) { instants.withLock { $0.append(instant) } }
    var count: Int { instants.withLock { $0.count } }
    func instant(_ index: Int) -> ContinuousClock.Instant? { instants.withLock { $0.count > index ? $0[index] : nil } }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}
