import Broker
import Foundation
import Logging
import MQTT
import Testing

/// Starts a private mosquitto for one test, runs `body`, and stops the broker and removes its files
/// whether the body succeeded or threw. On failure the broker's log is recorded with the issue.
///
/// Under ``Transport/tls`` the broker also has a TLS listener, with ``sharedTestCertificates``.
package func withBroker<T>(
    _ configuration: MosquittoBroker.Configuration = .init(),
    _ body: (MosquittoBroker) async throws -> T
) async throws -> T {
    var configuration = configuration
    if Transport.current == .tls && configuration.tls == nil {
        configuration.tls = .init(
            certificateFile: sharedTestCertificates.serverCertificateFile, keyFile: sharedTestCertificates.serverKeyFile
        )
    }
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

extension MosquittoBroker {
    /// Runs `mosquitto_ctrl dynsec ARGUMENTS` against this broker as its dynamic-security admin, e.g.
    /// `["createClient", "alice", "-p", "secret"]`, and returns what it printed.
    @discardableResult
    package func dynamicSecurity(_ arguments: [String]) throws -> String {
        guard let admin = configuration.dynamicSecurity else {
            throw BrokerError("this broker runs without the dynamic-security plugin")
        }
        return try Command.run(
            "mosquitto_ctrl",
            ["-h", "127.0.0.1", "-p", "\(port)", "-u", admin.adminUsername, "-P", admin.adminPassword, "dynsec"]
                + arguments)
    }
}

/// Plain TCP or TLS for the brokers and clients a test makes: under `.tls` (``run(_:)``),
/// ``withBroker(_:_:)`` adds a TLS listener and ``makeClient(_:name:loop:configure:)`` connects to it,
/// trusting the test authority. libmosquitto serves both; the client tests run on each.
package enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case tcp, tls
    package var testDescription: String { rawValue }

    @TaskLocal package static var current = Transport.tcp

    package func run<T>(_ body: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self) { try await body() }
    }
}

/// A certificate authority and a server certificate for 127.0.0.1, made once per test run.
package let sharedTestCertificates: TestCertificates = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "homegate-test-certificates-\(getpid())"
    ).path
    do {
        return try TestCertificates.make(in: directory)
    } catch {
        fatalError("could not make the test certificates in \(directory): \(error)")
    }
}()

/// A client for `broker` with a unique client id and a fast reconnect, not yet connected; on the
/// broker's TLS listener under ``Transport/tls``.
package func makeClient(
    _ broker: MosquittoBroker, name: String = "test", loop: EventLoopThread? = nil,
    configure: (inout MQTTConfiguration) -> Void = { _ in }
) throws -> MQTTClient {
    var configuration = MQTTConfiguration(port: broker.port, clientID: "\(name)-\(UUID().uuidString.prefix(8))")
    if Transport.current == .tls, let tlsPort = broker.tlsPort {
        configuration.brokers[0].port = tlsPort
        configuration.tls = .init(caFile: sharedTestCertificates.caFile)
    }
    configuration.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
    configure(&configuration)
    var logger = Logger(label: "test.\(name)")
    logger.logLevel = .critical
    return try MQTTClient(configuration, logger: logger, loop: loop)
}

/// Connects `client`, runs `body` with an inbox of its messages, and awaits its disconnect
/// afterwards, also when the connect or the body threw.
@discardableResult
package func withConnected<T>(
    _ client: MQTTClient, _ body: (Inbox<MQTTMessage>) async throws -> T
) async throws -> T {
    let inbox = await Inbox.draining(client.messages)
    return try await withCleanup {
        try await client.connect()
        return try await body(inbox)
    } cleanup: {
        await client.disconnect()
    }
}

/// A scratch folder for one test, removed afterwards.
package func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("homegate-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// The UTF-8 bytes of `text`.
package func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
