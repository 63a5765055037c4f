import ArgumentParser
import Config
import Foundation
import HomeKitBridge
import HomeModel

/// `homegate homekit-code`: the setup code and QR code of a home's HomeKit bridge, for the hub's
/// operator (the web page shows them to the home's administrators).
struct HomeKitCode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homekit-code",
        abstract: "Print the setup code and QR code that add a home's HomeKit bridge to Apple's Home app.",
        discussion: """
            Reads the home database. In the Home app: Add Accessory, then scan the QR code or type the \
            code. See docs/homekit.md.
            """
    )

    @OptionGroup var options: ConfigOptions

    @Option(help: "The home whose bridge it is.")
    var home: String

    func run() async throws {
        let configuration = try options.load()
        let served = configuration.homekit?.bridges.contains { $0.home.lowercased() == home.lowercased() } ?? false
        let (name, setup) = try await HomeDatabaseReader(configuration: configuration).withManager { manager in
            guard let found = await manager.allHomes().first(where: { HomeName.key($0.name) == HomeName.key(home) })
            else {
                printError("error: there is no home '\(home)' in \(configuration.data.databaseFile)")
                throw ExitCode.failure
            }
            return (found.name, try BridgeSetup.load(home: found.id, manager: manager))
        }
        print("HomeKit setup code of \(name): \(setup.setupCode)")
        if let code = setup.qrCode { print(code.text) }
        print(setup.payload)
        if setup.isPaired {
            printError(
                "note: the bridge is paired already; add more people from the Home app of the one who paired it")
        }
        if !served {
            printError(
                "note: the configuration serves no HomeKit bridge for '\(home)': add it under homekit.bridges")
        }
    }
}
