import ArgumentParser

@main
struct Homegate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homegate",
        abstract: "A HomeKit-style home on MQTT, with permissions checked per user.",
        subcommands: [
            Run.self, CheckConfig.self, Acl.self, TopicsCommand.self, HomeKitCode.self, Backup.self, Restore.self,
            Demo.self, BenchHistory.self,
        ]
    )
}
