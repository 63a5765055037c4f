import ArgumentParser
import Config
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT

/// `homegate run`: the long-running gateway service.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to the broker and run the gateway until SIGTERM or SIGINT.",
        discussion: "The MQTT password comes from the config or the environment variable HOMEGATE_MQTT_PASSWORD."
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let (configuration, demoHome) = try options.loadWithDemoHome()
        try await GatewayApplication(
            configuration: configuration, logger: makeLogger(configuration.logging.level), demoHome: demoHome
        )
        .run()
    }
}

/// `homegate check-config`: reads a config and says what is wrong with it.
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a config file: every problem with file, line and a fix; exit code 1 when there is one."
    )

    @OptionGroup var options: ConfigOptions

    func validate() throws {
        guard options.config != nil else { throw ValidationError("check-config needs --config FILE") }
    }

    func run() async throws {
        let configuration = try options.load()
        let source = AccessRuleSource(configuration: configuration)
        let rules =
            FileManager.default.fileExists(atPath: configuration.data.databaseFile) ? try await source.rules() : nil
        let problems = configuration.access.brokerProtectionProblems(
            rules: rules, regenerate: "homegate acl --config \(options.config ?? "<file>")")
        for problem in problems { printError("warning: \(problem)") }
        print(
            """
            \(options.config ?? ""): ok
              broker      \(configuration.mqtt.brokers.joined(separator: ", ")) as \(configuration.mqtt.username ?? "(anonymous)")
              client id   \(configuration.mqtt.clientId ?? "the installation's own (\(configuration.data.directory)/\(InstallationIdentity.fileName))")
              base topic  \(configuration.mqtt.baseTopic)
              database    \(configuration.data.databaseFile)
              devices     \(configuration.accessories.virtual ?? "(none)")
              homekit     \(configuration.homekit.map { $0.bridges.map { "\($0.home) on \($0.listen):\($0.port) as \($0.account)" } }?.joined(separator: ", ") ?? "(none)")
            """)
    }
}
