import Foundation
import Gateway
import JSON
import MQTT
import TestSupport
import Testing

/// Home Assistant as far as MQTT discovery goes, over a real connection: it reads the retained
/// discovery configs, sends an entity's commands the way Home Assistant does (the config's command
/// topic with Home Assistant's payload), and reads states the way it does (the config's state topic
/// through its template). Only the template forms the gateway uses, `{{ value_json.<field> }}` and
/// `{{ value_json.<field> if value_json.<field> is not none else '' }}`, are understood; any other
/// makes the test fail rather than guess.
struct HomeAssistantClient {
    let account: Account
    /// Object id → config, as the broker holds them.
    let configs: [String: JSON]
    /// Object id → config topic.
    let topics: [String: String]

    /// Connects as `homeassistant` and reads every retained config under `homeassistant/`.
    static func connect(port: Int) async throws -> HomeAssistantClient {
        let account = try await Account.connect("homeassistant", port: port)
        let held = try await account.retainedMessages(under: "homeassistant/#")
        var configs: [String: JSON] = [:]
        var topics: [String: String] = [:]
        for (topic, payload) in held {
            let levels = topic.split(separator: "/").map(String.init)
            guard levels.count == 5, levels[4] == "config" else { continue }
            configs[levels[3]] = try JSON.parse(payload)
            topics[levels[3]] = topic
        }
        return HomeAssistantClient(account: account, configs: configs, topics: topics)
    }

    func config(_ objectID: String) throws -> JSON {
        guard let config = configs[objectID] else { throw TimedOut("no discovery config for \(objectID)") }
        return config
    }

    /// Publishes `payload` on the topic the config names under `key` (`command_topic`,
    /// `brightness_command_topic`, ...), as Home Assistant does when a user acts.
    func send(_ objectID: String, _ payload: String, on key: String = "command_topic") async throws {
        guard let topic = try config(objectID)[key]?.stringValue else {
            throw TimedOut("\(objectID) has no \(key)")
        }
        try await account.client.publish(topic, payload, qos: .atLeastOnce)
    }

    /// The state Home Assistant shows for the entity: the retained payload of the config's
    /// `topicKey`, through its `templateKey` (the whole JSON when there is no template).
    func state(
        _ objectID: String, topic topicKey: String = "state_topic", template templateKey: String? = "value_template"
    )
        async throws -> JSON?
    {
        let config = try config(objectID)
        guard let topic = config[topicKey]?.stringValue else { throw TimedOut("\(objectID) has no \(topicKey)") }
        guard let payload = try await account.retained(topic) else { return nil }
        let json = try JSON.parse(payload)
        guard let templateKey, let template = config[templateKey]?.stringValue else { return json }
        return try Self.render(template, json)
    }

    /// Waits until the state read as in ``state(_:topic:template:)`` equals `expected`.
    func waitForState(
        _ objectID: String, topic topicKey: String = "state_topic", template templateKey: String? = "value_template",
        _ expected: JSON, within timeout: Duration = .seconds(60)
    ) async throws {
        try await waitForState(objectID, topic: topicKey, template: templateKey, within: timeout) { $0 == expected }
    }

    /// Waits until the state read as in ``state(_:topic:template:)`` satisfies `isExpected`.
    func waitForState(
        _ objectID: String, topic topicKey: String = "state_topic", template templateKey: String? = "value_template",
        within timeout: Duration = .seconds(60), until isExpected: (JSON?) -> Bool
    ) async throws {
        var last: JSON?
        try await eventually(
            "\(objectID) \(topicKey) in the state expected (it is \(last?.serialized ?? "nothing"))", timeout: timeout
        ) {
            last = try await state(objectID, topic: topicKey, template: templateKey)
            return isExpected(last)
        }
    }

    /// `{{ value_json.<field> }}` (or its form that renders empty for null) applied to `json`.
    static func render(_ template: String, _ json: JSON) throws -> JSON? {
        let trimmed = template.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("{{ value_json."), trimmed.hasSuffix(" }}") else {
            throw TimedOut("template \(template) is not of the form {{ value_json.<field> }}")
        }
        var field = String(trimmed.dropFirst("{{ value_json.".count).dropLast(" }}".count))
        if let space = field.firstIndex(of: " ") {
            let name = String(field[..<space])
            guard field == "\(name) if value_json.\(name) is not none else ''" else {
                throw TimedOut("template \(template) reads \(field)")
            }
            field = name
            if json[name] == .null { return .string("") }
        }
        guard field.allSatisfy({ $0.isLetter || $0 == "_" }) else {
            throw TimedOut("template \(template) reads \(field)")
        }
        return json[field]
    }

    func disconnect() async { await account.disconnect() }
}

/// Connects as Home Assistant to the broker on 127.0.0.1:`port` (see ``HomeAssistantClient/connect(port:)``),
/// runs `body`, and awaits the disconnect afterwards, also when the body threw.
func withHomeAssistant<T>(port: Int, _ body: (HomeAssistantClient) async throws -> T) async throws -> T {
    let homeAssistant = try await HomeAssistantClient.connect(port: port)
    return try await withCleanup {
        try await body(homeAssistant)
    } cleanup: {
        await homeAssistant.disconnect()
    }
}
