import ArgumentParser
import Config
import Foundation
import Gateway
import Logging
import MQTT
import VirtualDevices

/// `--config FILE` and the flags that override it, shared by the subcommands that read a config.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "The gateway's config file (YAML; Config/homegate.yml documents every key).")
    var config: String?

    @Option(help: "Override mqtt.broker(s): mqtt://host[:port] or mqtts://host[:port], several separated by commas.")
    var broker: String?

    @Option(help: "Override data.directory, the folder of the home database.")
    var data: String?

    @Option(help: "Override mqtt.baseTopic.")
    var baseTopic: String?

    @Option(help: "Override logging.level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level?

    /// The configuration: the file (or the defaults without one), the environment, then the flags.
    /// Problems are printed to stderr with file, line and fix, and end the command with exit code 1.
    func load() throws -> GatewayConfiguration {
        try loadWithDemoHome().configuration
    }

    /// The configuration and the demo home (virtual devices) it names, read once: the file with the
    /// flags laid over it, then the demo home and the settings that only together can be wrong.
    func loadWithDemoHome() throws -> (configuration: GatewayConfiguration, demoHome: DemoHome?) {
        var configuration: GatewayConfiguration
        do {
            if let config {
                configuration = try GatewayConfiguration.load(file: config)
            } else {
                configuration = try GatewayConfiguration.parse(yaml: "{}", file: "(defaults)")
            }
        } catch {
            printError(error.description)
            throw ExitCode.failure
        }
        if let broker { configuration.mqtt.brokers = broker.split(separator: ",").map(String.init) }
        if let data { configuration.data.directory = data }
        if let baseTopic { configuration.mqtt.baseTopic = baseTopic }
        if let logLevel { configuration.logging.level = logLevel }
        do {
            _ = try configuration.mqttConfiguration()
        } catch {
            throw ValidationError("--broker: \(error.message)")
        }
        do {
            try BaseTopic.validate(configuration.mqtt.baseTopic)
        } catch {
            throw ValidationError("--base-topic: \(error)")
        }
        return (configuration, try checkTogether(configuration))
    }

    /// Reads the demo-home file the config names and checks the settings that only together can
    /// be wrong; prints every problem with file, line and fix and ends with exit code 1.
    private func checkTogether(_ configuration: GatewayConfiguration) throws -> DemoHome? {
        var problems: [ConfigurationError] = []
        var demoHome: DemoHome?
        if let file = configuration.accessories.virtual {
            do {
                demoHome = try DemoHomeLoading.load(file: file)
            } catch {
                problems += error.errors
            }
        }
        let file = config ?? "(defaults)"
        let yaml = config.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        problems += configuration.consistencyProblems(file: file, yaml: yaml, demoHome: demoHome)
        guard problems.isEmpty else {
            printError(ConfigurationErrors(problems).description)
            throw ExitCode.failure
        }
        return demoHome
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

func makeLogger(_ level: Logger.Level) -> Logger {
    var logger = Logger(label: "homegate")
    logger.logLevel = level
    return logger
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
