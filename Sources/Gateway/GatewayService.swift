import AsyncMailbox
import Execution
import History
import HomeModel
import JSON
import Logging
import MQTT
import ServiceLifecycle

/// The home on MQTT: keeps the retained view in step with the model, publishes its events, and
/// answers commands and requests. One way in, one way out: the model never sees MQTT.
package struct GatewayService: ServiceLifecycle.Service, Sendable, CustomStringConvertible {
    private let manager: HomeManager
    private let client: MQTTClient
    private let topics: Topics
    /// The one command path: the web page hands its commands to it too.
    package let router: CommandRouter
    private let publisher: RetainedPublisher
    private let statistics: GatewayStatistics
    private let accessKeeper: AccessKeeper?
    private let protectionProblems: (@Sendable (HomeManager) async -> [String])?
    private let homeAssistant: HomeAssistantDiscovery?
    private let eventsQoS: MQTTQoS
    private let logger: Logger
    /// Requests not answered yet: a change of the broker's access rules waits for their answers.
    private let answersInFlight = AnswersInFlight()
    private let commands: CommandServer
    /// What service-lifecycle logs for the service: its name, never the accounts and settings
    /// it holds (the default account is an account).
    package var description: String { "GatewayService" }

    /// - Parameters:
    ///   - defaultAccount: the account for command topics without the trailing `/<account>`.
    ///   - homeAssistant: announce the homes to Home Assistant (MQTT discovery), and again whenever
    ///     it says `online` on its status topic.
    ///   - rateLimit: how many commands and requests one account may send; nil admits all.
    ///   - eventsQoS: the QoS of `$events` (`mqtt.eventsQoS`); every other topic goes at QoS 1.
    ///   - history: what the `history` and `timeline` requests read; nil refuses them.
    ///   - protectionProblems: what is wrong with the broker's protection for the homes as they are
    ///     (`AccessSettings.brokerProtectionProblems`), logged at start and whenever the users change.
    ///   - readBack: lists the topics the broker holds retained under the base topic (see
    ///     `RetainedTopics.read`), so a resync can clear what no longer belongs to the home.
    ///   - clock: the clock of the publisher's timers (a home's late `$layout` after reachability
    ///     changes), so a test can move it by hand.
    package init(
        manager: HomeManager, client: MQTTClient, topics: Topics, defaultAccount: String?,
        homeAssistant: HomeAssistantDiscovery? = nil, statistics: GatewayStatistics = GatewayStatistics(),
        accessKeeper: AccessKeeper? = nil, logger: Logger, rateLimit: RateLimit? = .standard,
        eventsQoS: MQTTQoS = .atMostOnce, history: HistoryStore? = nil,
        protectionProblems: (@Sendable (HomeManager) async -> [String])? = nil, clock: AnyClock = .continuous,
        readBack: @escaping @Sendable () async throws -> Set<String>
    ) {
        self.protectionProblems = protectionProblems
        self.manager = manager
        self.homeAssistant = homeAssistant
        self.eventsQoS = eventsQoS
        self.statistics = statistics
        self.accessKeeper = accessKeeper
        self.client = client
        self.topics = topics
        self.logger = logger
        router = CommandRouter(
            manager: manager, topics: topics, defaultAccount: defaultAccount, rateLimit: rateLimit, history: history)
        let echoes = client.configuration.protocolVersion == .v5 ? nil : ClearingEchoes()
        publisher = RetainedPublisher(
            client: client, topics: topics, homeAssistant: homeAssistant, statistics: statistics, logger: logger,
            echoes: echoes, clock: clock, layoutState: { [manager] in await HomeSnapshot(of: manager) },
            readBack: readBack)
        commands = CommandServer(
            client: client, router: router, publisher: publisher, echoes: echoes,
            homeAssistant: homeAssistant, accessKeeper: accessKeeper, statistics: statistics,
            answersInFlight: answersInFlight, logger: logger)
    }

    package func run() async throws {
        let (accessChanges, accessChanged) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await followConnection(accessChanged) }
                // The publisher and the command server are actors on the client's loop (if it has
                // one): a command is read, applied, published and answered on one thread, in one
                // pass. The publisher's task is urgent there, so changes do not pile up behind
                // commands (each holds its homes).
                group.addTask(priority: .high) { await followModel(accessChanged) }
                group.addTask { await commands.serve() }
                if let accessKeeper {
                    group.addTask {
                        await accessKeeper.run(
                            manager: manager, changes: accessChanges, trigger: accessChanged, statistics: statistics,
                            logger: logger,
                            beforeSync: { [answersInFlight] in
                                await answersInFlight.settled(within: .milliseconds(500))
                            })
                    }
                } else if let protectionProblems {
                    group.addTask { await reportProtection(protectionProblems, changes: accessChanges) }
                }
            }
        }
        // What a reachability change left stale goes out before the client disconnects.
        await publisher.renderDueLayouts()
    }

    /// Logs what is wrong with the broker's protection after every change of homes or users, each
    /// problem once until it changes.
    private func reportProtection(
        _ problems: @Sendable (HomeManager) async -> [String], changes: AsyncStream<Void>
    ) async {
        var reported: [String] = []
        for await _ in changes {
            let now = await problems(manager)
            guard now != reported else { continue }
            reported = now
            for problem in now { logger.warning("the broker's access rules: \(problem)") }
        }
    }

    /// On the first connection subscribes to the command topics (the client renews them after a
    /// reconnect, before it tells of the connection), and on every connection then says `online` and
    /// republishes the whole home.
    private func followConnection(_ accessChanged: AsyncStream<Void>.Continuation) async {
        var subscribed = false
        for await event in client.connectionEvents() {
            guard case .connected = event else { continue }
            if !subscribed {
                do {
                    // Retained as published, so that a command retained right now is told from one
                    // sent plainly and cleared; not our own messages (the clearings among them).
                    // MQTT 3.1.1 has neither option: there a retained command is seen as retained
                    // only at the next connection, and the clearings come back (`ClearingEchoes`).
                    let v5 = client.configuration.protocolVersion == .v5
                    try await client.subscribe(
                        to: topics.commandFilters + (v5 ? ["\(topics.responseRoot)/#"] : []),
                        qos: .atLeastOnce, options: [.noLocal, .retainAsPublished])
                    if let homeAssistant {
                        try await client.subscribe(to: [homeAssistant.statusTopic], qos: .atLeastOnce)
                    }
                    subscribed = true
                } catch {
                    logger.error("could not subscribe to the command topics", metadata: ["error": "\(error)"])
                }
            }
            // Acknowledged before the read-back starts, so that the read-back must find it: a broker
            // that keeps it from a wildcard subscription is told in the log.
            let online: String?
            do {
                try await client.publish(topics.status, AvailabilityService.online, qos: .atLeastOnce, retain: true)
                online = topics.status
            } catch {
                logger.error(
                    "could not publish availability", metadata: ["topic": "\(topics.status)", "error": "\(error)"])
                online = nil
            }
            await publisher.synchronize(retainedBefore: online) { [manager] in await HomeSnapshot(of: manager) }
            accessChanged.yield()
        }
    }

    /// Publishes what the model reports (``RetainedPublisher/follow(_:observe:)``), and every event on
    /// its `$events` topic.
    private func followModel(_ accessChanged: AsyncStream<Void>.Continuation) async {
        await publisher.follow(await manager.changes()) { change in
            switch change.event {
            case .didAddUser, .didRemoveUser, .didAddHome, .didRemoveHome, .didUpdateNameForHome:
                accessChanged.yield()
            default:
                break
            }
            if let message = EventMessage(change.event, homes: change.homes, topics: topics) {
                _ = publisher.send(message.topic, message.payload, qos: eventsQoS, retain: false)
            }
        }
    }
}
