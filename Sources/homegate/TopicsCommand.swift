import ArgumentParser
import Config
import Gateway
import HomeModel

/// `homegate topics`: the topic tree of the homes in the database.
struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Print the topic tree the gateway publishes for the homes in its database, and where commands go."
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try options.load()
        let topics = configuration.topics
        let tree = try await HomeDatabaseReader(configuration: configuration).withManager { manager in
            let homes = await manager.allHomes()
            return TopicTree(homes: homes, topics: topics).lines
        }
        print(tree.joined(separator: "\n"))
    }
}
