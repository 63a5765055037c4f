import ArgumentParser
import Config
import Foundation
import HomeModel

/// `homegate backup`: one consistent file of the home database, written while the gateway runs.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a backup of the home database (homes, users, automations, HomeKit pairings) to a new file.",
        discussion: """
            The gateway may keep running: the copy is the database as one moment left it. The file holds \
            the HomeKit bridges' keys and pairings: keep it as safe as the hub. See docs/homekit.md.
            """
    )

    @OptionGroup var options: ConfigOptions

    @Argument(help: "The backup file to write (it must not exist).")
    var file: String

    func run() async throws {
        let configuration = try options.load()
        do {
            try HomeDatabase.backup(databaseAt: configuration.data.databaseFile, to: file)
        } catch {
            printError("error: \(error)")
            throw ExitCode.failure
        }
        print("backed up \(configuration.data.databaseFile) to \(file)")
    }
}

/// `homegate restore`: a backup put in place as the home database of a new data folder.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put a backup in place as the home database (into a data folder without one).",
        discussion: """
            Run it before the gateway starts (on a new machine, or after moving the old database away). \
            HomeKit controllers paired before find the same bridge, accessories and numbers again.
            """
    )

    @OptionGroup var options: ConfigOptions

    @Argument(help: "The backup file (written by homegate backup).")
    var file: String

    func run() async throws {
        let configuration = try options.load()
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.data.directory, withIntermediateDirectories: true)
            try HomeDatabase.restore(from: file, toDatabaseAt: configuration.data.databaseFile)
        } catch {
            printError("error: \(error)")
            throw ExitCode.failure
        }
        print("restored \(file) as \(configuration.data.databaseFile)")
    }
}
