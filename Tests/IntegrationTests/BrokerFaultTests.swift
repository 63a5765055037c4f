import Broker
import Foundation
import Gateway
import HomeModel
import JSON
import Logging
import MQTT
import Synchronization
import TestSupport
import Testing
import VirtualDevices

#if canImport(Glibc)
    import Glibc
#endif

/// The resident memory of process `pid` in bytes, from /proc.
func residentBytes(of pid: pid_t) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return nil }
    return kilobytes * 1024
}

/// The retained topics a gateway publishes for a fresh database with the demo home.
func demoHomeRetainedTopics(_ topics: Topics) async throws -> Set<String> {
    let demo = try DemoHome.load(contentsOf: demoHomeFile)
    let manager = try HomeManager(database: .inMemory())
    try await manager.attach(VirtualDriver(devices: demo.devices))
    _ = try await demo.seed(manager)
    let snapshot = await HomeSnapshot(of: manager)
    await manager.shutdown()
    return RetainedView(homes: snapshot.homes, discovered: snapshot.discovered, topics: topics).topics
        .union([topics.status, topics.health])
}

/// Sends commands as one account as fast as the broker takes them (each awaits its PUBACK), every
/// one with its own correlation data, and collects the answers. A command counts as accepted once
/// the broker acknowledged it.
final class CommandLoad: Sendable {
    let account: Account
    private let state = Mutex<(accepted: Set<Int>, answered: [Int: String], running: Bool)>(([], [:], true))

    init(account: Account) { self.account = account }

    var accepted: Set<Int> { state.withLock { $0.accepted } }

    /// Waits until the broker has accepted `count` commands in all (a state, not a time: on a loaded
    /// machine the load runs slower, and the test waits longer).
    func waitUntilAccepted(_ count: Int, within timeout: Duration = .seconds(60)) async throws {
        try await eventually("the broker accepting \(count) commands (\(accepted.count) so far)", timeout: timeout) {
            accepted.count >= count
        }
    }
    var answered: [Int: String] { state.withLock { $0.answered } }
    func stop() { state.withLock { $0.running = false } }

    /// Runs until `stop()`, pacing one command every `interval`, alternating two accessories.
    func run(interval: Duration) async {
        let topics = [
            "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness/set/\(account.name)",
            "homegate/Main House/Bedroom/Ceiling Fan/Fan/RotationSpeed/set/\(account.name)",
        ]
        var index = 0
        while state.withLock({ $0.running }) {
            let correlation = Array("load-\(index)".utf8)
            do {
                try await account.client.publish(
                    topics[index % 2], "\(index % 101)", qos: .atLeastOnce,
                    properties: MQTTProperties(responseTopic: account.answers, correlationData: correlation))
                state.withLock { _ = $0.accepted.insert(index) }
            } catch {
                // Not accepted (the connection was lost before the PUBACK): the client may not count on it.
            }
            index += 1
            try? await Task.sleep(for: interval)
        }
    }

    /// Collects answers from the account's inbox until every accepted command has one or `timeout`
    /// passes; a timeout is no error here: the test then counts what was lost.
    func collect(within timeout: Duration) async throws {
        _ = try? await eventually("every accepted command answered", timeout: timeout) {
            for message in await account.inbox.all where message.topic == account.answers {
                guard let data = message.properties.correlationData,
                    let text = String(bytes: data, encoding: .utf8), text.hasPrefix("load-"),
                    let index = Int(text.dropFirst(5)), let answer = try? JSON.parse(message.payload)
                else { continue }
                state.withLock { $0.answered[index] = answer.code ?? "ok" }
            }
            return state.withLock { $0.accepted.subtracting($0.answered.keys).isEmpty && !$0.running }
        }
    }
}

@Suite("Broker faults with the homegate process", .serialized, .timeLimit(.minutes(5)))
struct BrokerFaultTests {
    /// Seconds the broker stays down: 5 in `make test`, 30 in `make soak` (HOMEGATE_OUTAGE_SECONDS).
    static let outage = Duration.seconds(Int(ProcessInfo.processInfo.environment["HOMEGATE_OUTAGE_SECONDS"] ?? "") ?? 5)

    @Test(
        "the broker stopped under command load and started again: every accepted command answered, the view complete, no crash"
    )
    func brokerStoppedUnderLoad() async throws {
        try await withBroker(.init(persistence: true)) { broker in
            try await withTemporaryDirectory { directory in
                let (gateway, before) = try await Self.startGateway(on: broker, directory: directory)
                defer { gateway.send(SIGKILL) }
                let topics = Topics()
                let startRSS = residentBytes(of: gateway.pid) ?? 0

                // Given a client sending commands at 40 a second, with a session that survives the broker
                let load = CommandLoad(
                    account: try await Account.connect("guest", port: broker.port) {
                        $0.cleanSession = false
                        $0.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .milliseconds(500))
                    })
                let sender = Task { await load.run(interval: .milliseconds(25)) }
                try await load.waitUntilAccepted(60)

                // When the broker stops for the outage and starts again
                await broker.stop()
                try await Task.sleep(for: Self.outage)
                let restarted = ContinuousClock.now
                try await broker.start()

                // Then the retained view is whole again within seconds
                try await waitForRetainedTopics(port: broker.port, account: nil, topics: topics, within: .seconds(60)) {
                    before
                }
                let recovered = ContinuousClock.now - restarted
                // and the load goes on after it: 60 more commands through the restarted broker
                try await load.waitUntilAccepted(load.accepted.count + 60)
                load.stop()
                await sender.value
                try await load.collect(within: .seconds(60))

                // Every command the broker accepted was answered (ok or a code), and the gateway runs on
                let accepted = load.accepted
                let answered = load.answered
                let lost = accepted.subtracting(answered.keys).sorted()
                #expect(gateway.isRunning)
                #expect(accepted.count >= 120)
                let log = (try? String(contentsOfFile: "\(directory)/homegate.log", encoding: .utf8)) ?? ""
                #expect(
                    lost.isEmpty,
                    "\(lost.count) of \(accepted.count) accepted commands were never answered: \(lost.prefix(20)); the gateway's log:\n\(log.suffix(3000))"
                )
                let endRSS = residentBytes(of: gateway.pid) ?? 0
                let codes = Dictionary(grouping: answered.values, by: { $0 }).mapValues(\.count)
                print(
                    "broker-outage: outage \(Self.outage), accepted \(accepted.count), answered \(answered.count) \(codes), lost \(lost.count), view whole \(recovered) after restart, RSS \(startRSS / 1_048_576) -> \(endRSS / 1_048_576) MiB"
                )
                #expect(endRSS < startRSS + 30 * 1_048_576, "RSS grew from \(startRSS) to \(endRSS)")
                await load.account.disconnect()
            }
        }
    }

    @Test("the broker killed and its persistence wiped: the gateway restores every retained topic")
    func brokerKilledAndWiped() async throws {
        try await withBroker(.init(persistence: true)) { broker in
            try await withTemporaryDirectory { directory in
                let (gateway, before) = try await Self.startGateway(on: broker, directory: directory)
                defer { gateway.send(SIGKILL) }
                let topics = Topics()

                await broker.stop(with: SIGKILL)
                for file in (try? FileManager.default.contentsOfDirectory(atPath: broker.directory)) ?? []
                where file.hasSuffix(".db") {
                    try FileManager.default.removeItem(atPath: "\(broker.directory)/\(file)")
                }
                let restarted = ContinuousClock.now
                try await broker.start()

                try await waitForRetainedTopics(port: broker.port, account: nil, topics: topics, within: .seconds(60)) {
                    before
                }
                print(
                    "broker-wiped: \(before.count) retained topics restored \(ContinuousClock.now - restarted) after the restart"
                )
                #expect(gateway.isRunning)
            }
        }
    }

    /// Starts `homegate run` on the demo home against `broker`, waits until the broker holds the
    /// demo's retained view, and returns the process and the topics the broker holds.
    private static func startGateway(on broker: MosquittoBroker, directory: String) async throws
        -> (ChildProcess, Set<String>)
    {
        let arguments = try runArguments(
            port: broker.port, clientID: "gateway-under-test", directory: directory, devices: true)
        let gateway = try ChildProcess(try homegateExecutable(), arguments, outputFile: "\(directory)/homegate.log")
        do {
            let topics = Topics()
            let demo = try await demoHomeRetainedTopics(topics)
            try await waitForRetainedTopics(port: broker.port, account: nil, topics: topics) { demo }
            return (gateway, try await retainedTopicsOnBroker(port: broker.port, account: nil, topics: topics))
        } catch {
            gateway.send(SIGKILL)
            throw error
        }
    }
}
