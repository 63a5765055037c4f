import ArgumentParser
import Gateway
import Logging
import MQTT

/// Options shared by the subcommands that run a gateway.
struct GatewayOptions: ParsableArguments {
    @Option(help: "The topic every gateway topic starts with.")
    var baseTopic = "homegate"

    @Option(help: "The MQTT client id of the gateway.")
    var clientID = "homegate"

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        do {
            try BaseTopic.validate(baseTopic)
        } catch {
            throw ValidationError("--base-topic: \(error)")
        }
    }

    func makeLogger(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = logLevel
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
