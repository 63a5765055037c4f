import MQTT
import Testing

@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    @Test("delays grow exponentially, stay within the upper half of their step, and stop at the maximum")
    func bounds() {
        let backoff = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(2))
        let ceilings: [Duration] = [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
            .seconds(2), .seconds(2),
        ]
        for (attempt, ceiling) in ceilings.enumerated() {
            for _ in 0..<200 {
                let delay = backoff.delay(forAttempt: attempt)
                #expect(delay <= ceiling && delay >= ceiling / 2, "attempt \(attempt): \(delay)")
            }
        }
        #expect(backoff.delay(forAttempt: 10_000) <= .seconds(2))
    }

    @Test("delays are jittered, so clients that lost the same broker do not return together")
    func jitter() {
        let backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(30))
        let delays = Set((0..<50).map { _ in backoff.delay(forAttempt: 3) })
        #expect(delays.count > 40)
    }
}

@Suite("Broker URLs")
struct BrokerURLTests {
    @Test(
        "valid addresses",
        arguments: [
            ("mqtt://127.0.0.1", "127.0.0.1", 1883, false),
            ("mqtt://hub.local:1884", "hub.local", 1884, false),
            ("mqtts://broker.example", "broker.example", 8883, true),
            ("MQTTS://[::1]:9999/", "::1", 9999, true),
            ("mqtt://[fe80::1]", "fe80::1", 1883, false),
        ])
    func valid(url: String, host: String, port: Int, tls: Bool) throws {
        let configuration = try MQTTConfiguration(brokerURL: url, clientID: "x")
        #expect(configuration.brokers == [.init(host: host, port: port)])
        #expect((configuration.tls != nil) == tls)
        #expect(configuration.tls?.verifyServer ?? true)
    }

    @Test(
        "invalid addresses say what is wrong",
        arguments: [
            ("http://host", "mqtt://"),
            ("mqtt://", "expected"),
            ("mqtt://host:port", "not a number"),
            ("mqtt://host:0", "outside"),
            ("mqtt://host:70000", "outside"),
            ("mqtt://user:pw@host", "credentials"),
            ("mqtt://[::1", "unclosed"),
        ])
    func invalid(url: String, expected: String) {
        #expect {
            try MQTTConfiguration(brokerURL: url, clientID: "x")
        } throws: { error in
            guard let error = error as? MQTTError else { return false }
            return error.code == .invalidArgument && error.message.contains(expected)
        }
    }
}

@Suite("Errors and values")
struct MQTTValueTests {
    @Test("error codes travel by name")
    func codeNames() {
        #expect(MQTTError.Code.badCredentials.name == "badCredentials")
        #expect(MQTTError.Code.subscriptionRefused.name == "subscriptionRefused")
        #expect(MQTTError(.tls, "certificate verify failed").description == "tls: certificate verify failed")
    }

    @Test("payloads that are not UTF-8 have no string form")
    func payloadString() {
        #expect(MQTTMessage(topic: "t", payload: Array("héllo".utf8)).payloadString == "héllo")
        #expect(MQTTMessage(topic: "t", payload: [0xFF, 0xFE]).payloadString == nil)
    }

    @Test("a client that never connected refuses to publish, and shuts down at once")
    func notConnected() async throws {
        let client = try MQTTClient(MQTTConfiguration(clientID: "idle"))
        let error = try await #require(throws: MQTTError.self) { try await client.publish("t", "x") }
        #expect(error.code == .notConnected)
        await client.disconnect()
        let after = try await #require(throws: MQTTError.self) { try await client.connect() }
        #expect(after.code == .clientClosed)
    }

    @Test("a persistent session without a client id is refused")
    func persistentSessionNeedsID() {
        #expect(throws: MQTTError.self) {
            try MQTTClient(MQTTConfiguration(clientID: "", cleanSession: false))
        }
    }
}
