import ArgumentParser
import Foundation
import Gateway
import Logging
import MQTT
import ServiceLifecycle

/// `homegate run`: the long-running gateway service.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to the broker and run the gateway until SIGTERM or SIGINT.",
        discussion: "The MQTT password is read from the environment variable HOMEGATE_MQTT_PASSWORD."
    )

    @Option(help: "The broker: mqtt://host[:port] or mqtts://host[:port].")
    var broker = "mqtt://127.0.0.1:1883"

    @Option(help: "The MQTT username of the gateway.")
    var username: String?

    @Option(help: "CA certificates (PEM) to trust for mqtts:// instead of the system's.")
    var caFile: String?

    @Option(help: "The folder of the home database.")
    var data = "/var/lib/homegate"

    @Option(
        help:
            "Virtual devices (YAML, the format of Config/demo-home.yml); its homes are built while the database is empty."
    )
    var devices: String?

    @Option(help: "The account for command topics without a trailing /<account>.")
    var defaultAccount: String?

    @OptionGroup var options: GatewayOptions

    func run() async throws {
        let logger = options.makeLogger(label: "homegate")
        var mqtt: MQTTConfiguration
        do {
            mqtt = try MQTTConfiguration(brokerURL: broker, clientID: options.clientID)
        } catch {
            throw ValidationError("--broker: \(error.message)")
        }
        mqtt.username = username
        mqtt.password = ProcessInfo.processInfo.environment["HOMEGATE_MQTT_PASSWORD"]
        if let caFile { mqtt.tls?.caFile = caFile }
        try await GatewayApplication(
            mqtt: mqtt, topics: Topics(base: options.baseTopic), dataDirectory: data, devicesFile: devices,
            defaultAccount: defaultAccount, logger: logger
        ).run()
    }
}
