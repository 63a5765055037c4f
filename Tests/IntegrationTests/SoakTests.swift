import AsyncMailbox
import Broker
import Foundation
import Gateway
import JSON
import Logging
import MQTT
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The load scenarios of docs/reliability.md (scenario 7) on the homegate process: the soak (`make
/// soak` only; 1,000 virtual lights, commands at a steady rate from 20 accounts for minutes, every one
/// answered) and, in `make test`, a gateway frozen under load. Soak settings: HOMEGATE_SOAK=1 enables
/// it; HOMEGATE_SOAK_MINUTES (10), HOMEGATE_SOAK_RATE (2000 commands/s), HOMEGATE_SOAK_ACCESSORIES (1000).
@Suite("Sustained command load on the homegate process", .serialized)
struct SoakTests {
    static let environment = ProcessInfo.processInfo.environment
    static let enabled = environment["HOMEGATE_SOAK"] != nil
    static let minutes = Int(environment["HOMEGATE_SOAK_MINUTES"] ?? "") ?? 10
    static let rate = Int(environment["HOMEGATE_SOAK_RATE"] ?? "") ?? 2000
    static let accessories = Int(environment["HOMEGATE_SOAK_ACCESSORIES"] ?? "") ?? 1000
    static let accounts = (1...20).map { "load\($0)" }

    /// A demo-home file with `count` lights in 20 rooms of one home, and the load accounts as guests.
    static func homeFile(count: Int) -> String {
        var yaml = "devices:\n"
        for index in 0..<count { yaml += "  - { id: l\(index), name: Light \(index), kind: lightbulb }\n" }
        yaml +=
            "homes:\n  - name: Load\n    primary: true\n    administrator: { account: owner, name: Owner }\n    guests:\n"
        for account in accounts { yaml += "      - { account: \(account), name: User \(account) }\n" }
        yaml += "    rooms: [\((0..<20).map { "Room \($0)" }.joined(separator: ", "))]\n    accessories:\n"
        for index in 0..<count { yaml += "      - { id: l\(index), room: Room \(index % 20) }\n" }
        return yaml
    }

    /// Send times and answers by command number.
    final class Ledger: Sendable {
        private let state = Mutex<
            (sent: [Int: ContinuousClock.Instant], latencies: [Int: Duration], failed: [String: Int])
        >(
            ([:], [:], [:]))

        func sent(_ index: Int, at instant: ContinuousClock.Instant) { state.withLock { $0.sent[index] = instant } }

        func answered(_ index: Int, code: String?, at instant: ContinuousClock.Instant) {
            state.withLock { state in
                guard let sent = state.sent[index], state.latencies[index] == nil else { return }
                state.latencies[index] = instant - sent
                if let code { state.failed[code, default: 0] += 1 }
            }
        }

        var counts: (sent: Int, answered: Int, failed: [String: Int]) {
            state.withLock { ($0.sent.count, $0.latencies.count, $0.failed) }
        }

        /// Latencies of the commands sent in [from, to).
        func latencies(sentFrom from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> [Duration] {
            state.withLock { state in
                state.sent.compactMap { index, sent in sent >= from && sent < to ? state.latencies[index] : nil }
            }
        }

        var unanswered: [Int] {
            state.withLock { state in state.sent.keys.filter { state.latencies[$0] == nil }.sorted() }
        }
    }

    /// The homegate process with `accessories` lights (rate limits sized for `rate` commands/s over
    /// the load accounts) and one MQTT 5 client that sends as every load account and files each
    /// answer in the ledger by its correlation data. Stops both at the end.
    static func withLoadedGateway(
        accessories: Int, rate: Int,
        _ body: (_ gateway: ChildProcess, _ load: LoadClient) async throws -> Void
    ) async throws {
        try await withBroker { broker in
            try await withTemporaryDirectory { directory in
                try homeFile(count: accessories).write(
                    toFile: "\(directory)/home.yml", atomically: true, encoding: .utf8)
                try """
                mqtt:
                  broker: mqtt://127.0.0.1:\(broker.port)
                  clientId: soak-gateway
                data:
                  directory: \(directory)/data
                accessories:
                  virtual: \(directory)/home.yml
                commands:
                  rateLimit:
                    perSecond: \(max(50, rate / Self.accounts.count * 2))
                    burst: \(max(100, rate / Self.accounts.count * 4))
                logging:
                  level: warning
                web: null

                """.write(toFile: "\(directory)/homegate.yml", atomically: true, encoding: .utf8)
                let gateway = try ChildProcess(
                    try homegateExecutable(), ["run", "--config", "\(directory)/homegate.yml"],
                    outputFile: "\(directory)/homegate.log")
                defer { gateway.send(SIGKILL) }

                var configuration = MQTTConfiguration(port: broker.port, clientID: "soak-load")
                configuration.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
                var logger = Logger(label: "soak")
                logger.logLevel = .critical
                let client = try MQTTClient(configuration, logger: logger)
                let ledger = Ledger()
                try await client.connect()
                try await withCleanup {
                    try await client.subscribe(to: ["homegate/$response/#", "homegate/$status"], qos: .atLeastOnce)
                    let reader = Task {
                        for await message in client.messages {
                            guard message.topic.hasPrefix("homegate/$response/"),
                                let data = message.properties.correlationData,
                                data.count == 8
                            else { continue }
                            let index = data.withUnsafeBytes { Int(bigEndian: $0.loadUnaligned(as: Int.self)) }
                            ledger.answered(index, code: (try? JSON.parse(message.payload))?.code, at: .now)
                        }
                    }
                    defer { reader.cancel() }
                    _ = try await Self.waitUntilServing(client, port: broker.port)
                    try await body(gateway, LoadClient(client: client, ledger: ledger, accessories: accessories))
                } cleanup: {
                    await client.disconnect()
                }
            }
        }
    }

    /// Sends numbered brightness commands round robin over the lights and the load accounts.
    struct LoadClient {
        let client: MQTTClient
        let ledger: Ledger
        let accessories: Int
        private(set) var sent = 0

        init(client: MQTTClient, ledger: Ledger, accessories: Int) {
            (self.client, self.ledger, self.accessories) = (client, ledger, accessories)
        }

        mutating func send() throws {
            let (topic, payload, properties) = next()
            try client.send(topic, payload: payload, qos: .atLeastOnce, properties: properties)
        }

        /// Sends the next command and waits for the broker's acknowledgement: the broker has then
        /// taken every command sent before it on this connection too.
        mutating func sendConfirmed() async throws {
            let (topic, payload, properties) = next()
            try await client.publish(topic, payload: payload, qos: .atLeastOnce, properties: properties)
        }

        /// The next numbered command, entered in the ledger as sent.
        private mutating func next() -> (topic: String, payload: [UInt8], properties: MQTTProperties) {
            let index = sent
            let account = SoakTests.accounts[index % SoakTests.accounts.count]
            let light = index % accessories
            let topic = "homegate/Load/Room \(light % 20)/Light \(light)/Lightbulb/Brightness/set/\(account)"
            let correlation = withUnsafeBytes(of: index.bigEndian) { Array($0) }
            ledger.sent(index, at: .now)
            sent += 1
            return (
                topic, Array("\(index % 101)".utf8),
                MQTTProperties(responseTopic: "homegate/$response/\(account)/soak", correlationData: correlation)
            )
        }

        /// Sends `count` commands at `rate` a second, in ticks of 10 ms (pacing only: on a loaded
        /// machine they go out more slowly, still all of them).
        mutating func send(_ count: Int, rate: Int) async throws {
            let perTick = max(1, rate / 100)
            var tick = ContinuousClock.now
            var left = count
            while left > 0 {
                for _ in 0..<min(perTick, left) { try send() }
                left -= min(perTick, left)
                tick += .milliseconds(10)
                try await Task.sleep(until: tick, clock: .continuous)
            }
        }

        /// Sends `rate` commands a second, in ticks of 10 ms, until `end`; `everyTick` runs after each tick.
        mutating func run(
            rate: Int, until end: ContinuousClock.Instant, everyTick: () async throws -> Void = {}
        ) async throws {
            let perTick = max(1, rate / 100)
            var tick = ContinuousClock.now
            while ContinuousClock.now < end {
                for _ in 0..<perTick { try send() }
                tick += .milliseconds(10)
                try await everyTick()
                try await Task.sleep(until: tick, clock: .continuous)
            }
        }

        /// Waits up to `timeout` until every command sent has its answer; a timeout is no error here:
        /// the test then counts what was lost.
        func waitForAnswers(within timeout: Duration = .seconds(60)) async throws {
            _ = try? await eventually("every command answered", timeout: timeout) { ledger.unanswered.isEmpty }
        }
    }

    @Test(
        "minutes at thousands of commands a second: none lost, memory flat, p99 latency per minute",
        .enabled(if: enabled))
    func soak() async throws {
        try await Self.withLoadedGateway(accessories: Self.accessories, rate: Self.rate) { gateway, load in
            var load = load
            let ledger = load.ledger
            let start = ContinuousClock.now
            let end = start + .seconds(60 * Self.minutes)
            var minuteReports: [String] = []
            var nextMinute = start + .seconds(60)
            let startRSS = residentBytes(of: gateway.pid) ?? 0
            var warmRSS: Int?
            try await load.run(rate: Self.rate, until: end) {
                if ContinuousClock.now >= nextMinute {
                    if warmRSS == nil { warmRSS = residentBytes(of: gateway.pid) }
                    minuteReports.append(
                        Self.report(ledger, from: nextMinute - .seconds(60), to: nextMinute, pid: gateway.pid))
                    print("soak: " + minuteReports.last!)
                    nextMinute += .seconds(60)
                }
            }
            try await load.waitForAnswers()
            if nextMinute - .seconds(60) < end {
                minuteReports.append(Self.report(ledger, from: nextMinute - .seconds(60), to: end, pid: gateway.pid))
                print("soak: " + minuteReports.last!)
            }
            let endRSS = residentBytes(of: gateway.pid) ?? 0
            let counts = ledger.counts
            let lost = ledger.unanswered
            let achieved = Double(counts.sent) / Double(60 * Self.minutes)
            print(
                "soak: \(Self.minutes) min, \(Self.accessories) accessories, target \(Self.rate)/s, sent \(counts.sent) (\(Int(achieved))/s), answered \(counts.answered), failed \(counts.failed), lost \(lost.count), RSS \(startRSS / 1_048_576) before the load, \((warmRSS ?? 0) / 1_048_576) after the first minute, \(endRSS / 1_048_576) MiB at the end"
            )
            #expect(lost.count == 0, "\(lost.count) commands never answered, first \(lost.prefix(10))")
            #expect(gateway.isRunning)
            let refused = counts.failed["tooManyRequests", default: 0]
            #expect(
                refused == 0,
                "the gateway shed \(refused) of \(counts.sent) commands: it applies fewer than \(Self.rate)/s")
            let warm = warmRSS ?? startRSS
            #expect(endRSS < warm + 20 * 1_048_576, "RSS grew from \(warm) after the first minute to \(endRSS)")
        }
    }

    /// In `make test`: the gateway process frozen (SIGSTOP) under commands at 500 a second, as a slow
    /// SD card or a swapping hub can freeze it: 1,000 commands before, 1,500 while it is frozen (the
    /// broker holds them: with mosquitto's default `max_queued_messages` of 1,000 it dropped the
    /// rest) and 1,000 after. Counted, not timed: a loaded machine sends them more slowly, and the
    /// gateway is thawed only once the broker has taken all 1,500.
    @Test("a gateway frozen under load: every command the broker accepted is answered afterwards")
    func frozenGateway() async throws {
        try await Self.withLoadedGateway(accessories: 200, rate: 500) { gateway, load in
            var load = load
            try await load.send(1_000, rate: 500)
            gateway.send(SIGSTOP)
            try await load.send(1_499, rate: 500)
            try await load.sendConfirmed()
            gateway.send(SIGCONT)
            try await load.send(1_000, rate: 500)
            try await load.waitForAnswers()
            let counts = load.ledger.counts
            let lost = load.ledger.unanswered
            print(
                "stall: sent \(counts.sent), answered \(counts.answered), failed \(counts.failed), lost \(lost.count)")
            #expect(counts.sent == 3_500)
            #expect(
                lost.count == 0, "\(lost.count) of \(counts.sent) commands never answered, first \(lost.prefix(10))")
            #expect(counts.answered == counts.sent)
            #expect(gateway.isRunning)
        }
    }

    /// Waits until the gateway answers a request.
    static func waitUntilServing(_ client: MQTTClient, port: Int) async throws -> Bool {
        let started = ContinuousClock.now
        let owner = try await GatewayKillTests.connectWhenOnline(port: port, within: .seconds(600))
        print("soak: the gateway built the home and answered after \(ContinuousClock.now - started)")
        await owner.disconnect()
        return true
    }

    static func report(_ ledger: Ledger, from: ContinuousClock.Instant, to: ContinuousClock.Instant, pid: pid_t)
        -> String
    {
        let latencies = ledger.latencies(sentFrom: from, to: to).sorted()
        func percentile(_ p: Double) -> String {
            guard !latencies.isEmpty else { return "-" }
            let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            return "\(Int(value / .milliseconds(1))) ms"
        }
        let counts = ledger.counts
        return
            "answered \(latencies.count) sent in this minute, p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1)), total sent \(counts.sent), answered \(counts.answered), RSS \((residentBytes(of: pid) ?? 0) / 1_048_576) MiB"
    }
}
