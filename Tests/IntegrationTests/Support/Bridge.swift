import Broker
import Foundation
import JSON
import Logging
import MQTT
import TestSupport
import Testing

/// A mosquitto bridge from a hub's broker to a central one, as docs/scaling.md configures it: the
/// document's own block (the hub's whole base topic out, the command and request topics in, MQTT
/// 3.1.1 with a persistent session on both sides, QoS 1, over TLS), with the test's address, password
/// and CA file put in.
struct MosquittoBridge {
    /// The connection's name, also its client id on the central broker.
    var name = "hub1"
    /// The central broker's TLS port on 127.0.0.1.
    var centralPort: Int
    /// The CA that signed the central broker's certificate.
    var caFile: String
    /// The bridge's account on the central broker (password = account): the gateway's account, so
    /// that the rules `homegate acl` generates serve both brokers.
    var account = "homegate"
    var base = "homegate"

    /// Where the bridge says whether it is connected ("1") or not ("0"), on both brokers.
    var stateTopic: String { "$SYS/broker/connection/\(name)/state" }

    /// The hub broker's settings and the bridge, as docs/scaling.md's block "The bridge (the hub's
    /// mosquitto.conf)" has them, comments and blank lines left out.
    static let documented: [String] = {
        let document = repositoryRoot.appendingPathComponent("docs/scaling.md")
        let text = try! String(contentsOf: document, encoding: .utf8)
        let section = text.components(separatedBy: "## The bridge (the hub's mosquitto.conf)")[1]
        let block = section.components(separatedBy: "```")[1]
        return block.split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }()

    /// The settings of docs/scaling.md's block "The central broker" that are no file, folder or port
    /// (those the tests choose themselves), comments left out.
    static let documentedCentralSettings: [String] = {
        let document = repositoryRoot.appendingPathComponent("docs/scaling.md")
        let text = try! String(contentsOf: document, encoding: .utf8)
        let block = text.components(separatedBy: "## The central broker")[1].components(separatedBy: "```")[1]
        let ownChoices = ["password_file", "acl_file", "persistence_location", "listener", "certfile", "keyfile"]
        return block.split(separator: "\n").map(String.init).filter { line in
            !line.isEmpty && !line.hasPrefix("#") && !ownChoices.contains { line.hasPrefix($0 + " ") }
        }
    }()

    /// The document's settings before its `connection` line, which every broker the tests start
    /// has already (MosquittoBroker writes them, persistence with a folder of its own).
    static var documentedBrokerSettings: [String] {
        Array(documented.prefix { !$0.hasPrefix("connection ") })
    }

    /// The hub's mosquitto.conf section: the document's bridge, from its `connection` line on, for
    /// this hub (`site/hub1` becomes the base topic, `hub1` the name), at the test's central broker.
    var configuration: [String] {
        Self.documented.drop { !$0.hasPrefix("connection ") }.map { line in
            if line.hasPrefix("address ") { return "address 127.0.0.1:\(centralPort)" }
            if line.hasPrefix("remote_username ") { return "remote_username \(account)" }
            if line.hasPrefix("remote_password ") { return "remote_password \(account)" }
            if line.hasPrefix("bridge_cafile ") { return "bridge_cafile \(caFile)" }
            return line.replacingOccurrences(of: "site/hub1", with: base).replacingOccurrences(of: "hub1", with: name)
        }
    }
}

/// A client of either broker as one account, for topics that crossed the bridge. The bridge speaks
/// MQTT 3.1.1, which has no response topic or correlation data, so answers come on the account's
/// own `B/$response/<account>` and are matched by the `id` in the request's body.
struct BridgedAccount {
    let name: String
    let client: MQTTClient
    let inbox: Inbox<MQTTMessage>
    /// The base topic of the hub it talks to.
    var base = "homegate"

    var responses: String { "\(base)/$response/\(name)" }

    /// Connects as `name` (password = name) to 127.0.0.1:`port` and subscribes to its answers under
    /// `base` (unless `subscribing` is false: an account that may not read them).
    static func connect(_ name: String, port: Int, base: String = "homegate", subscribing: Bool = true) async throws
        -> BridgedAccount
    {
        var configuration = MQTTConfiguration(port: port, clientID: "\(name)-\(UUID().uuidString.prefix(8))")
        configuration.username = name
        configuration.password = name
        configuration.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .critical
        let client = try MQTTClient(configuration, logger: logger)
        let inbox = await Inbox.draining(client.messages)
        do {
            try await client.connect()
            if subscribing { try await client.subscribe(to: ["\(base)/$response/\(name)"], qos: .atLeastOnce) }
        } catch {
            await client.disconnect()
            throw error
        }
        return BridgedAccount(name: name, client: client, inbox: inbox, base: base)
    }

    /// Sends request `operation` with `{"id": id}` (QoS 1) and waits for its answer.
    func request(_ operation: String, id: String, within timeout: Duration = .seconds(60)) async throws -> JSON {
        try await client.publish("\(base)/$request/\(name)/\(operation)", #"{"id":"\#(id)"}"#, qos: .atLeastOnce)
        return try await answer(id: id, within: timeout)
    }

    /// Waits for the answer carrying `id`.
    func answer(id: String, within timeout: Duration = .seconds(60)) async throws -> JSON {
        let responses = self.responses
        let message = try await inbox.next(within: timeout, "the answer with id \(id)") {
            $0.topic == responses && (try? JSON.parse($0.payload))?["id"] == .string(id)
        }
        return try JSON.parse(message.payload)
    }

    /// Waits for the next answer about `topic` (a command's answer names its topic).
    func answer(about topic: String, within timeout: Duration = .seconds(60)) async throws -> MQTTMessage {
        let responses = self.responses
        return try await inbox.next(within: timeout, "the answer about \(topic)") {
            $0.topic == responses && (try? JSON.parse($0.payload))?["topic"] == .string(topic)
        }
    }

    /// Waits for a message on `topic` with `payload` (subscribe first).
    func receive(_ payload: String, on topic: String, within timeout: Duration = .seconds(60)) async throws {
        _ = try await inbox.next(within: timeout, "\(payload) on \(topic)") {
            $0.topic == topic && $0.payloadString == payload
        }
    }

    /// Drops every message received so far on `topics`.
    func forget(_ topics: [String]) async {
        while await inbox.take(where: { topics.contains($0.topic) }) != nil {}
    }

    /// Every retained message under `filter` (ending in `/#`, or one topic) that this account may
    /// read, topic → payload, as a fresh subscription sees it. The broker sends retained copies right
    /// after its SUBACK; the answer to a request sent after that comes later on the same connection
    /// (from the gateway, across the bridge when this is the central broker), so it marks the end.
    func retained(under filter: String) async throws -> [String: String] {
        let prefix = filter.hasSuffix("/#") ? String(filter.dropLast()) : filter
        let belongs: @Sendable (String) -> Bool = { $0 == filter || $0.hasPrefix(prefix) }
        try await client.subscribe(to: [filter], qos: .atLeastOnce)
        // Sent again until answered: after a restart of the hub's broker its retained topics are back
        // before the gateway has subscribed again, and a request sent meanwhile is lost. Any answer
        // (they share one id) comes after the retained copies.
        let marker = "end-of-retained-\(UUID().uuidString.prefix(8))"
        try await eventually("the gateway answering \(name) across the bridge") {
            (try? await request("homes", id: marker, within: .seconds(2))) != nil
        }
        var held: [String: String] = [:]
        while let message = await inbox.take(where: { belongs($0.topic) }) {
            if message.retain && !message.payload.isEmpty { held[message.topic] = message.payloadString ?? "" }
        }
        try await client.unsubscribe(from: [filter])
        return held
    }

    func disconnect() async { await client.disconnect() }
}

/// Connects as `name` to 127.0.0.1:`port` (``BridgedAccount/connect(_:port:)``), runs `body`, and
/// awaits the disconnect afterwards, also when the body threw.
func withBridgedAccount<T>(
    _ name: String, port: Int, base: String = "homegate", subscribing: Bool = true,
    _ body: (BridgedAccount) async throws -> T
) async throws -> T {
    let account = try await BridgedAccount.connect(name, port: port, base: base, subscribing: subscribing)
    return try await withCleanup {
        try await body(account)
    } cleanup: {
        await account.disconnect()
    }
}
