import Broker
import Foundation
import Logging
import MQTT
import Testing

/// Starts a private mosquitto for one test, runs `body`, and stops the broker and removes its files
/// whether the body succeeded or threw. On failure the broker's log is recorded with the issue.
func withBroker<T>(
    _ configuration: MosquittoBroker.Configuration = .init(),
    _ body: (MosquittoBroker) async throws -> T
) async throws -> T {
    let broker = try await MosquittoBroker.start(configuration)
    do {
        let result = try await body(broker)
        await broker.stop(removingFiles: true)
        return result
    } catch {
        Issue.record("broker log:\n\(broker.log)")
        await broker.stop(removingFiles: true)
        throw error
    }
}

/// A client for `broker` with a unique client id and a fast reconnect, not yet connected.
func makeClient(
    _ broker: MosquittoBroker, name: String = "test", loop: EventLoopThread? = nil,
    configure: (inout MQTTConfiguration) -> Void = { _ in }
) throws -> MQTTClient {
    var configuration = MQTTConfiguration(port: broker.port, clientID: "\(name)-\(UUID().uuidString.prefix(8))")
    configuration.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
    configure(&configuration)
    var logger = Logger(label: "test.\(name)")
    logger.logLevel = .critical
    return try MQTTClient(configuration, logger: logger, loop: loop)
}

/// Connects `client`, runs `body` with an inbox of its messages, and disconnects it afterwards.
@discardableResult
func withConnected<T>(
    _ client: MQTTClient, _ body: (Inbox<MQTTMessage>) async throws -> T
) async throws -> T {
    let inbox = await Inbox.draining(client.messages)
    do {
        try await client.connect()
        let result = try await body(inbox)
        await client.disconnect()
        return result
    } catch {
        await client.disconnect()
        throw error
    }
}

/// A scratch folder for one test, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("homegate-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// The UTF-8 bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
