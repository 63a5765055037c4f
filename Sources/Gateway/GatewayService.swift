import AsyncMailbox
import HomeModel
import JSON
import Logging
import MQTT
import ServiceLifecycle

/// The home on MQTT: keeps the retained view in step with the model, publishes its events, and
/// answers commands and requests. One way in, one way out: the model never sees MQTT.
package struct GatewayService: ServiceLifecycle.Service, Sendable {
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
    private let admission = CommandAdmission()
    /// Requests not answered yet: a change of the broker's access rules waits for their answers.
    private let answersInFlight = AnswersInFlight()
    private let echoes: ClearingEchoes?
    /// Each sender's cleared retained messages are logged once a minute at most (with a count), so
    /// a client cannot fill a hub's SD card with the gateway's log.
    private let clutterLog = LogThrottle(interval: .seconds(60))

    /// - Parameters:
    ///   - defaultAccount: the account for command topics without the trailing `/<account>`.
    ///   - homeAssistant: announce the homes to Home Assistant (MQTT discovery), and again whenever
    ///     it says `online` on its status topic.
    ///   - rateLimit: how many commands and requests one account may send; nil admits all.
    ///   - eventsQoS: the QoS of `$events` (`mqtt.eventsQoS`); every other topic goes at QoS 1.
    ///   - protectionProblems: what is wrong with the broker's protection for the homes as they are
    ///     (the configuration's `BrokerProtection`), logged at start and whenever the users change.
    ///   - readBack: lists the topics the broker holds retained under the base topic (see
    ///     `RetainedTopics.read`), so a resync can clear what no longer belongs to the home.
    package init(
        manager: HomeManager, client: MQTTClient, topics: Topics, defaultAccount: String?,
        homeAssistant: HomeAssistantDiscovery? = nil, statistics: GatewayStatistics = GatewayStatistics(),
        accessKeeper: AccessKeeper? = nil, logger: Logger, rateLimit: RateLimit? = .standard,
        eventsQoS: MQTTQoS = .atMostOnce,
        protectionProblems: (@Sendable (HomeManager) async -> [String])? = nil,
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
        router = CommandRouter(manager: manager, topics: topics, defaultAccount: defaultAccount, rateLimit: rateLimit)
        let echoes = client.configuration.protocolVersion == .v5 ? nil : ClearingEchoes()
        self.echoes = echoes
        publisher = RetainedPublisher(
            client: client, topics: topics, homeAssistant: homeAssistant, statistics: statistics, logger: logger,
            echoes: echoes, layoutState: { [manager] in await HomeSnapshot(of: manager) }, readBack: readBack)
    }

    package func run() async throws {
        let (accessChanges, accessChanged) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                // A reload renders the whole home beside the loop, which writes it out meanwhile.
                group.addTask { await followConnection(accessChanged) }
                // Commands and the changes they make run on the client's loop (if it has one): a
                // command is read, applied, published and answered on one thread, in one pass. The
                // publisher goes first there, so changes do not pile up behind commands (each
                // holds its homes).
                group.addTask(executorPreference: client.loop, priority: .high) { await followModel(accessChanged) }
                group.addTask(executorPreference: client.loop) { await serveCommands() }
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
                send(message.topic, message.payload, qos: eventsQoS, retain: false)
            }
        }
    }

    /// Handles commands side by side, so one slow device does not hold up the others.
    private func serveCommands() async {
        await withDiscardingTaskGroup { group in
            for await message in client.messages {
                statistics.receivedMessage()
                if let accessKeeper, accessKeeper.sync.receive(message) { continue }
                if let homeAssistant, message.topic == homeAssistant.statusTopic {
                    // Home Assistant's birth message: it (re)started and needs the configs again.
                    if message.payloadString == "online" { await publisher.reannounce() }
                    continue
                }
                // MQTT 3.1.1: the gateway's own clearing of a command topic, coming back
                if let echoes, echoes.consume(message) { continue }
                if let clutter = router.retainedClutter(message) {
                    // (with 3.1.1, answers are not subscribed to: any clutter seen is a command's)
                    echoes?.expect(clutter.topic)
                    send(clutter.topic, [], qos: .atLeastOnce, retain: true)
                    let sender = clutter.sender ?? "unknown"
                    if let count = clutterLog.admit(sender) {
                        logger.warning(
                            "cleared a retained message on a command, request or response topic",
                            metadata: [
                                "topic": "\(clutter.topic)", "sender": "\(sender)", "clearedSinceLastLog": "\(count)",
                            ])
                    }
                }
                let admitted = admission.enter()
                // Writes and scenes stay on the loop (if the client has one). Requests change the
                // layout, whose commit waits for the disk (an SD card's fsync): they start on the
                // global executor, beside the loop. (The manager is one actor: a request that waits
                // for it while a write on the loop holds it may still be committed on the loop.)
                let isRequest = topics.isRequestTopic(message.topic)
                let executor: (any TaskExecutor)? =
                    client.loop != nil && isRequest ? globalConcurrentExecutor : client.loop
                if isRequest { answersInFlight.enter() }
                let command: @Sendable () async -> Void = {
                    defer {
                        if admitted { admission.leave() }
                        if isRequest { answersInFlight.leave() }
                    }
                    let handling =
                        admitted
                        ? await PreferredExecutor.$current.withValue(executor) { await router.handle(message) }
                        : router.refuseWhileBusy(message, limit: admission.limit)
                    statistics.handled(handling.outcome)
                    guard let answer = handling.answer else { return }
                    let properties =
                        client.configuration.protocolVersion == .v5
                        ? MQTTProperties(correlationData: answer.correlationData, contentType: "application/json")
                        : MQTTProperties()
                    let payload = answer.payload.bytes
                    do {
                        try client.send(answer.topic, payload: payload, qos: .atLeastOnce, properties: properties)
                    } catch let error as MQTTError where error.code == .packetTooLarge {
                        // Said in a few bytes instead, so the client is not left waiting.
                        logger.warning(
                            "an answer is larger than the broker takes; sent answerTooLarge instead",
                            metadata: ["topic": "\(answer.topic)", "bytes": "\(payload.count)"])
                        do {
                            try client.send(
                                answer.topic, payload: Self.answerTooLarge(answer.payload, bytes: payload.count).bytes,
                                qos: .atLeastOnce, properties: properties)
                        } catch {
                            logger.error(
                                "could not answer", metadata: ["topic": "\(answer.topic)", "error": "\(error)"])
                        }
                    } catch {
                        logger.error("could not answer", metadata: ["topic": "\(answer.topic)", "error": "\(error)"])
                    }
                }
                // A write starts at once, here on the loop, until it first waits; a request on its
                // executor.
                if isRequest {
                    group.addTask(executorPreference: executor, operation: command)
                } else {
                    group.addImmediateTask(executorPreference: executor, operation: command)
                }
            }
        }
    }

    /// The answer that stands for `answer` when the broker will not take it: its `id` and `topic`,
    /// `ok` false and the code `answerTooLarge`.
    static func answerTooLarge(_ answer: JSON, bytes: Int) -> JSON {
        var members: [(key: String, value: JSON)] = []
        if case .object(let original) = answer {
            for (key, value) in original where key == "id" || key == "topic" { members.append((key, value)) }
        }
        members += [
            ("ok", .bool(false)), ("code", .string("answerTooLarge")),
            (
                "message",
                .string(
                    "The answer is \(bytes) bytes, more than the broker takes in one packet (its maximum packet size)."
                )
            ),
        ]
        return .object(members)
    }

    /// Publishes one message. A QoS 0 event made while there is no connection is gone, as QoS 0 says
    /// (docs/mqtt.md): that is no error to log for every change a broker outage brings.
    private func send(_ topic: String, _ payload: [UInt8], qos: MQTTQoS, retain: Bool) {
        do {
            try client.send(topic, payload: payload, qos: qos, retain: retain)
            statistics.sentMessage()
        } catch let error as MQTTError where error.code == .notConnected && qos == .atMostOnce {
            return
        } catch {
            logger.error("could not publish", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }
}
