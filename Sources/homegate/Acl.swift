import ArgumentParser
import Config
import Foundation
import Gateway
import HomeModel

/// `homegate acl`: the mosquitto acl_file for the homes' users.
struct Acl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a mosquitto acl_file that lets each account act only as itself and read only its homes.",
        discussion: """
            Reads the users from the home database. Install the output as mosquitto's acl_file and reload \
            mosquitto (SIGHUP); accounts and passwords stay in mosquitto's password file (mosquitto_passwd). \
            See docs/access-rules.md.
            """
    )

    @OptionGroup var options: ConfigOptions

    @Flag(
        help: """
            Print this hub's part of a central broker's acl_file (docs/scaling.md): every line names its \
            account, so hubs sharing the broker cannot reach each other's topics. Put the parts of all \
            hubs together.
            """)
    var central = false

    func run() async throws {
        let configuration = try options.load()
        let rules = try await AccessRuleSource(configuration: configuration).rules()
        for rejected in rules.rejected {
            printError("warning: no rules for \(rejected)")
        }
        let command = central ? "homegate acl --central" : "homegate acl"
        print(rules.aclFile(generatedBy: command, for: central ? .central : .hub), terminator: "")
        printError(
            central
                ? """
                note: concatenate this with the other hubs' `homegate acl --central` into the central broker's \
                acl_file; its password_file needs every account above, and this hub's bridge account \
                '\(rules.gatewayAccount)' (the bridge's remote_username).
                """
                : """
                note: add `acl_file <this file>` and a `password_file` (made with mosquitto_passwd, one entry per \
                account above and one for the gateway's account '\(rules.gatewayAccount)') to mosquitto.conf, \
                set `allow_anonymous false`, and reload mosquitto.
                """)
    }
}

/// The access rules for a configuration and the users in its database.
struct AccessRuleSource {
    let configuration: GatewayConfiguration

    func rules() async throws -> AccessRules {
        let members = try await HomeDatabaseReader(configuration: configuration).withManager { await $0.memberships() }
        return rules(memberships: members)
    }

    func rules(memberships: [Membership]) -> AccessRules {
        AccessRules(
            topics: configuration.topics, gatewayAccount: configuration.mqtt.username ?? "homegate",
            homeAssistant: configuration.homeAssistantDiscovery, defaultAccount: configuration.commands.defaultAccount,
            zigbee2mqtt: configuration.accessories.zigbee2mqtt.flatMap { settings in
                // Rules are for the gateway's broker; zigbee2mqtt on another broker is that broker's business.
                settings.broker == nil
                    ? AccessRules.Zigbee2MQTT(baseTopic: settings.baseTopic, account: settings.account) : nil
            },
            bridgeClientID: configuration.access.bridgeClientID, members: memberships.map(AccessRules.Member.init))
    }
}

/// Opens the configured home database for a subcommand that only reads it.
struct HomeDatabaseReader {
    let configuration: GatewayConfiguration

    func withManager<T>(_ body: (HomeManager) async throws -> T) async throws -> T {
        let file = configuration.data.databaseFile
        guard FileManager.default.fileExists(atPath: file) else {
            printError("error: no home database at \(file) (data.directory); start the gateway once, or pass --data")
            throw ExitCode.failure
        }
        let manager = try HomeManager(database: try HomeDatabase.open(atPath: file))
        let result = try await body(manager)
        await manager.shutdown()
        return result
    }
}
