import Broker
import Foundation
import Gateway
import JSON
import Logging
import MQTT
import TestSupport
import Testing

/// A client connected as one account, with an inbox, that sends commands and waits for answers on
/// an MQTT v5 response topic of its own (so successful commands are answered too).
struct Account {
    let name: String
    let client: MQTTClient
    let inbox: Inbox<MQTTMessage>
    let answers: String

    static func connect(
        _ name: String, to broker: MosquittoBroker, version: MQTTConfiguration.ProtocolVersion = .v5
    ) async throws -> Account {
        try await connect(name, port: broker.port, version: version)
    }

    /// Connects as `name` (password = name) to a broker on 127.0.0.1:`port`, with answers below its
    /// own `B/$response/<name>/`, the only place the generated access rules let it read them.
    static func connect(
        _ name: String, port: Int, version: MQTTConfiguration.ProtocolVersion = .v5,
        configure: (inout MQTTConfiguration) -> Void = { _ in }
    ) async throws -> Account {
        var configuration = MQTTConfiguration(port: port, clientID: "\(name)-\(UUID().uuidString.prefix(8))")
        configuration.username = name
        configuration.password = name
        configuration.protocolVersion = version
        configuration.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        configure(&configuration)
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .critical
        let client = try MQTTClient(configuration, logger: logger)
        let inbox = await Inbox.draining(client.messages)
        let answers = "homegate/$response/\(name)/\(UUID().uuidString.prefix(6))"
        do {
            try await client.connect()
            if version == .v5 { try await client.subscribe(to: [answers], qos: .atLeastOnce) }
        } catch {
            await client.disconnect()
            throw error
        }
        return Account(name: name, client: client, inbox: inbox, answers: answers)
    }

    /// Publishes `payload` on `topic` asking for the answer, and returns the answer (waiting for it
    /// up to `timeout`).
    func command(_ topic: String, _ payload: String = "", within timeout: Duration = .seconds(60)) async throws
        -> JSON
    {
        try await command(topic, bytes: Array(payload.utf8), within: timeout)
    }

    /// Publishes raw `bytes` on `topic` asking for the answer, and returns the answer.
    func command(_ topic: String, bytes payload: [UInt8], within timeout: Duration = .seconds(60)) async throws -> JSON
    {
        let correlation = Array(UUID().uuidString.utf8)
        try await client.publish(
            topic, payload: payload, qos: .atLeastOnce,
            properties: MQTTProperties(responseTopic: answers, correlationData: correlation))
        let answer = try await inbox.next(within: timeout, "answer to \(topic)") {
            $0.topic == answers && $0.properties.correlationData == correlation
        }
        return try JSON.parse(answer.payload)
    }

    /// Sends request `operation` with `body` as this account and returns the answer.
    func request(_ operation: String, _ body: String = "{}", within timeout: Duration = .seconds(60)) async throws
        -> JSON
    {
        try await command("homegate/$request/\(name)/\(operation)", body, within: timeout)
    }

    /// The current retained payload of `topic`, as a fresh subscription sees it (nil if none).
    func retained(_ topic: String) async throws -> String? {
        try await retainedCopies(subscribing: topic) { $0 == topic }.last?.payloadString
    }

    /// Waits for a message on `topic` with `payload` (subscribe first).
    func receive(_ payload: String, on topic: String, within timeout: Duration = .seconds(60)) async throws {
        _ = try await inbox.next(within: timeout, "\(payload) on \(topic)") {
            $0.topic == topic && $0.payloadString == payload
        }
    }

    /// Whether the retained payload of `topic` becomes `expected` within `timeout` (a command's answer
    /// and the value it changed travel separately, so the value may reach the broker just after the
    /// answer). A Bool, for `#expect`.
    func retained(_ topic: String, becomes expected: String, within timeout: Duration = .seconds(60)) async throws
        -> Bool
    {
        do {
            try await eventually("\(topic) retained as \(expected)", timeout: timeout) {
                try await retained(topic) == expected
            }
            return true
        } catch is TimedOut {
            return false
        }
    }

    /// Every retained message under `filter` (a filter ending in `/#`) as a fresh subscription sees it.
    func retainedMessages(under filter: String) async throws -> [(topic: String, payload: [UInt8])] {
        let prefix = String(filter.dropLast())
        return try await retainedCopies(subscribing: filter) { $0.hasPrefix(prefix) }
            .filter { !$0.payload.isEmpty }.map { ($0.topic, $0.payload) }
    }

    /// Subscribes to `filter`, takes every message on a topic that `belongs` from the inbox and
    /// returns the retained ones, then unsubscribes. The broker sends retained copies right after
    /// its SUBACK; the answer to a request sent after that comes later on the same connection, so it
    /// marks the end (and, unlike a marker topic of the test's own, the access rules let every
    /// account use it).
    private func retainedCopies(subscribing filter: String, belongs: @escaping @Sendable (String) -> Bool)
        async throws -> [MQTTMessage]
    {
        try await client.subscribe(to: [filter])
        _ = try await request("homes")
        var held: [MQTTMessage] = []
        while let message = await inbox.take(where: { belongs($0.topic) }) {
            if message.retain { held.append(message) }
        }
        try await client.unsubscribe(from: [filter])
        return held
    }

    func disconnect() async { await client.disconnect() }
}

/// Connects as `name` (password = name) to `broker`, runs `body` with the account, and awaits its
/// disconnect afterwards, also when the body threw.
func withAccount<T>(
    _ name: String, to broker: MosquittoBroker, version: MQTTConfiguration.ProtocolVersion = .v5,
    _ body: (Account) async throws -> T
) async throws -> T {
    let account = try await Account.connect(name, to: broker, version: version)
    return try await withCleanup {
        try await body(account)
    } cleanup: {
        await account.disconnect()
    }
}

extension JSON {
    var isOK: Bool { self["ok"] == .bool(true) }
    var code: String? { self["code"]?.stringValue }
}
