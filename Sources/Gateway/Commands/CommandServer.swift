import AsyncMailbox
import Execution
import HomeModel
import JSON
import Logging
import MQTT

/// Takes the gateway's MQTT messages and answers the commands among them: the command path's
/// entrance. It runs on the client's loop (if it has one), where a write or a scene runs from the
/// PUBLISH that carried it to its answer, in one pass; a request (a layout change, whose commit waits
/// for the disk) runs beside the loop.
actor CommandServer: ExecutorChoosingActor {
    nonisolated let executorChoice: ExecutorChoice
    nonisolated var unownedExecutor: UnownedSerialExecutor { executorChoice.unownedExecutor }

    private let client: MQTTClient
    private let router: CommandRouter
    private let publisher: RetainedPublisher
    private let echoes: ClearingEchoes?
    private let homeAssistant: HomeAssistantDiscovery?
    private let accessKeeper: AccessKeeper?
    private let statistics: GatewayStatistics
    private let answersInFlight: AnswersInFlight
    private let logger: Logger
    private let admission = CommandAdmission()
    /// Each sender's cleared retained messages are logged once a minute at most (with a count), so
    /// a client cannot fill a hub's SD card with the gateway's log.
    private let clutterLog = LogThrottle()

    init(
        client: MQTTClient, router: CommandRouter, publisher: RetainedPublisher, echoes: ClearingEchoes?,
        homeAssistant: HomeAssistantDiscovery?, accessKeeper: AccessKeeper?,
        statistics: GatewayStatistics, answersInFlight: AnswersInFlight, logger: Logger
    ) {
        executorChoice = ExecutorChoice(client.loop, otherwise: "homegate-commands")
        self.client = client
        self.router = router
        self.publisher = publisher
        self.echoes = echoes
        self.homeAssistant = homeAssistant
        self.accessKeeper = accessKeeper
        self.statistics = statistics
        self.answersInFlight = answersInFlight
        self.logger = logger
    }

    /// Takes the client's messages until it closes, and handles commands side by side, so one slow
    /// device does not hold up the others.
    func serve() async {
        // Prefers the loop, so each wait resumes here (ExecutorChoice.taskExecutor says why).
        await preferringChosenExecutor { await serveMessages() }
    }

    private func serveMessages() async {
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
                    // The publisher notes a command topic's clearing for its echo (MQTT 3.1.1).
                    _ = publisher.send(clutter.topic, [])
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
                if router.topics.isRequestTopic(message.topic) {
                    // A request's task is not the server's, and prefers the global executor.
                    answersInFlight.enter()
                    group.addTask(executorPreference: globalConcurrentExecutor) {
                        defer { self.answersInFlight.leave() }
                        await self.handle(message, admitted: admitted)
                    }
                } else {
                    // A write's or a scene's task is the server's: it starts on the loop.
                    group.addTask(operation: onThisActor { await self.handle(message, admitted: admitted) })
                }
            }
        }
    }

    /// Runs one command and sends its answer, where its task runs.
    private nonisolated(nonsending) func handle(_ message: MQTTMessage, admitted: Bool) async {
        defer { if admitted { admission.leave() } }
        let handling =
            admitted ? await router.handle(message) : router.refuseWhileBusy(message, limit: admission.limit)
        statistics.handled(handling.outcome)
        guard let answer = handling.answer else { return }
        let properties =
            client.configuration.protocolVersion == .v5
            ? MQTTProperties(correlationData: answer.correlationData, contentType: "application/json")
            : MQTTProperties()
        let payload = answer.payload.bytes
        do {
            do {
                try client.send(answer.topic, payload: payload, qos: .atLeastOnce, properties: properties)
            } catch let error as MQTTError where error.code == .packetTooLarge {
                // Said in a few bytes instead, so the client is not left waiting.
                logger.warning(
                    "an answer is larger than the broker takes; sent answerTooLarge instead",
                    metadata: ["topic": "\(answer.topic)", "bytes": "\(payload.count)"])
                try client.send(
                    answer.topic, payload: Self.answerTooLarge(answer.payload, bytes: payload.count).bytes,
                    qos: .atLeastOnce, properties: properties)
            }
        } catch {
            logger.error("could not answer", metadata: ["topic": "\(answer.topic)", "error": "\(error)"])
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
}
