import ArgumentParser
import Broker
import Foundation
import Gateway
import Logging
import MQTT
import ServiceLifecycle

/// `homegate demo`: a private mosquitto on loopback and the gateway connected to it.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a private mosquitto on loopback and the gateway connected to it (Ctrl-C stops both)."
    )

    @Option(help: "The broker's port on 127.0.0.1; when taken, a free port is used instead.")
    var port = 1883

    @Option(help: "The folder for the demo broker's config, log and persistence.")
    var data = ".homegate-demo"

    @OptionGroup var options: GatewayOptions

    func run() async throws {
        let logger = options.makeLogger(label: "homegate")
        let chosenPort = LoopbackPort.isListening(port) ? try LoopbackPort.free() : port
        if chosenPort != port {
            logger.notice("port \(port) is taken; the demo broker uses \(chosenPort) instead")
        }
        let broker = try await MosquittoBroker.start(
            .init(port: chosenPort, persistence: true), directory: URL(fileURLWithPath: data).standardizedFileURL.path)
        let topics = Topics(base: options.baseTopic)
        print(
            """

            homegate demo: mosquitto listens on 127.0.0.1:\(chosenPort) (config and log in \(broker.directory)).
            Watch everything the gateway publishes:
              mosquitto_sub -h 127.0.0.1 -p \(chosenPort) -t '\(topics.base)/#' -v
            The gateway's availability is retained on \(topics.status) (online now; offline after Ctrl-C).
            Press Ctrl-C to stop the gateway and the broker.

            """)
        fflush(nil)  // all C streams: the instructions must show at once, also when piped
        let mqtt = MQTTConfiguration(port: chosenPort, clientID: options.clientID)
        try await GatewayApplication(
            mqtt: mqtt, topics: topics, logger: logger, foundation: [BrokerService(broker: broker)]
        ).run()
    }
}

/// Keeps the demo's broker running for as long as the gateway runs, and stops it afterwards.
struct BrokerService: Service {
    let broker: MosquittoBroker

    func run() async throws {
        try? await gracefulShutdown()
        await broker.stop()
    }
}
