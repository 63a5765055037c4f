import Foundation
import History
import HomeModel
import JSON
import MQTT

/// What became of one message: not a command at all, or a command that succeeded or failed (with
/// its error code), and the answer to send, if any.
package struct Handling: Sendable, Equatable {
    package enum Outcome: Sendable, Equatable {
        case ignored
        case succeeded
        case failed(code: String)
    }

    package var outcome: Outcome
    package var answer: Answer?

    static let ignored = Handling(outcome: .ignored, answer: nil)
}

/// An answer to a command or request: JSON `{"id","ok","code","message","topic","data"}` and where
/// it goes.
package struct Answer: Sendable, Equatable {
    package var topic: String
    package var payload: JSON
    /// Correlation data to echo (MQTT v5).
    package var correlationData: [UInt8]?
}

/// Turns command and request messages into permission-checked operations on the home model, and
/// says what to answer. The account comes from the topic (or the configured default account); the
/// model checks it against the home's users and roles.
///
/// Who gets an answer: every failure is answered, every request is answered, and a successful
/// command is answered when the client asked for it with an MQTT v5 response topic. Answers go only
/// to `B/$response/<account>` or below it: a command whose response topic points elsewhere is
/// refused unrun, and its refusal goes to the account's default response topic. Every answer
/// carries the request's `id` when one can be read, and the v5 correlation data.
package struct CommandRouter: Sendable {
    package let manager: HomeManager
    package let topics: Topics
    package let defaultAccount: String?
    /// The largest payload accepted; bigger ones are refused unread.
    let maximumPayloadSize = 65_536
    /// Refuses an account's messages beyond its rate (`tooManyRequests`); nil admits all.
    let rateLimiter: RateLimiter?
    /// Runs a request with an `id` once: a repeat gets the first answer (``RequestLedger``).
    let requestLedger = RequestLedger()
    /// What the `history` and `timeline` requests read; nil when history is off (they are then
    /// refused with `historyUnavailable`).
    package let history: HistoryStore?

    package init(
        manager: HomeManager, topics: Topics, defaultAccount: String?, rateLimit: RateLimit? = .standard,
        history: HistoryStore? = nil
    ) {
        self.history = history
        self.manager = manager
        self.topics = topics
        self.defaultAccount = defaultAccount
        rateLimiter = rateLimit.map { RateLimiter($0) }
    }

    /// Handles one message from the broker: runs the command it carries and says what to answer.
    /// Messages that are not commands (other topics, empty retained messages that clear one) are
    /// ignored; retained commands are refused unrun.
    nonisolated(nonsending) package func handle(_ message: MQTTMessage) async -> Handling {
        let command: CommandTopic
        do {
            guard let parsed = try topics.parse(message.topic) else { return .ignored }
            command = parsed
        } catch {
            let failure = HomeError(.invalidParameter, "Malformed command topic: \(error).")
            let isRequest = topics.isRequestTopic(message.topic)
            return Handling(
                outcome: .failed(code: failure.code.name),
                answer: answer(
                    to: message, account: topics.sender(ofMalformed: message.topic),
                    id: requestID(of: message, isRequest: isRequest), result: .failure(failure)))
        }
        // An empty retained message is a clearing, not a command.
        if message.retain && message.payload.isEmpty { return .ignored }
        let account = command.account ?? defaultAccount
        // Every refusal below counts against the account's rate too, so none of them is a way to
        // make the gateway work (or log) without limit.
        if let account, let rateLimiter, !rateLimiter.admit(account) {
            return refusal(message, command: command, RateLimiter.refusal(account, rateLimiter), respondingTo: true)
        }
        // A retained command would stay on the broker for every member of the home to see, and run
        // again on every reconnect: the gateway clears it (`retainedClutter(_:)`) and does not run it.
        if message.retain {
            let failure = HomeError(
                .invalidParameter,
                "Commands and requests must not be retained: the gateway cleared this one and did not run it; publish it without the retain flag."
            )
            return refusal(message, command: command, failure)
        }
        if let account, let responseTopic = message.properties.responseTopic,
            !isAllowedResponseTopic(responseTopic, account: account)
        {
            let failure = HomeError(
                .invalidParameter,
                "Answers go only to \(topics.response(account: account)) or below it, not to '\(responseTopic)'; nothing was done."
            )
            return refusal(message, command: command, failure)
        }
        guard let key = onceKey(message, command: command) else {
            return await run(message, command: command, account: account)
        }
        if let first = await requestLedger.admit(key) { return first }
        let handling = await run(message, command: command, account: account)
        requestLedger.finish(key, with: handling)
        return handling
    }

    /// The ledger's key for a message that runs at most once: a request with an `id` that changes
    /// something (a read asked again is read again; a pairing's `id` is its accessory's), or a `$run`
    /// whose body carries an `id`. Nil for everything else, which runs each time it comes.
    private func onceKey(_ message: MQTTMessage, command: CommandTopic) -> RequestLedger.Key? {
        switch command {
        case .request(_, let operation) where !Command.Request.runEveryTime.contains(operation): break
        case .runActionSet: break
        default: return nil
        }
        guard let id = RequestID.read(message.payload), id != .null else { return nil }
        return RequestLedger.Key(message)
    }

    /// Runs an admitted command and says what to answer.
    nonisolated(nonsending) private func run(_ message: MQTTMessage, command: CommandTopic, account: String?) async
        -> Handling
    {
        var id = JSON.null
        let result: Result<JSON?, HomeError>
        if let account {
            do throws(HomeError) {
                guard message.payload.count <= maximumPayloadSize else {
                    throw HomeError(
                        .invalidParameter,
                        "The payload is \(message.payload.count) bytes; at most \(maximumPayloadSize) are accepted.")
                }
                let action = try Self.action(command, payload: message.payload, id: &id)
                result = .success(Self.data(try await execute(Command(account: account, action))))
            } catch {
                if id == .null { id = requestID(of: message, isRequest: command.isRequest) }
                result = .failure(error)
            }
        } else {
            result = .failure(
                HomeError(
                    .insufficientPrivileges,
                    "The topic names no account and no default account is configured; add /<account> to the topic."))
        }
        let outcome: Handling.Outcome
        switch result {
        case .success:
            outcome = .succeeded
            // A command is answered when asked: with a v5 response topic, or an `id` in a `$run`.
            if !command.isRequest && message.properties.responseTopic == nil && id == .null {
                return Handling(outcome: outcome, answer: nil)
            }
        case .failure(let error):
            outcome = .failed(code: error.code.name)
        }
        return Handling(outcome: outcome, answer: answer(to: message, account: account, id: id, result: result))
    }

    /// The answer to a command refused before it ran, with the request's id: on the account's
    /// default response topic, or on the v5 response topic too when `respondingTo`.
    func refusal(_ message: MQTTMessage, command: CommandTopic, _ error: HomeError, respondingTo: Bool = false)
        -> Handling
    {
        Handling(
            outcome: .failed(code: error.code.name),
            answer: answer(
                to: message, account: command.account ?? defaultAccount,
                id: requestID(of: message, isRequest: command.isRequest), result: .failure(error),
                respondingTo: respondingTo))
    }

    /// The id a refused request's answer carries: read from the body alone (commands have none).
    private func requestID(of message: MQTTMessage, isRequest: Bool) -> JSON {
        isRequest ? RequestID.read(message.payload) ?? .null : .null
    }

    /// What to clear when `message` is retained on a topic where only commands, requests and answers
    /// belong: the topic and, for logging, the account that the topic names as its sender (nil for a
    /// response topic, which names whose answers it holds). Nil for every other message.
    func retainedClutter(_ message: MQTTMessage) -> (topic: String, sender: String?)? {
        guard message.retain, !message.payload.isEmpty else { return nil }
        if message.topic == topics.responseRoot || message.topic.hasPrefix(topics.responseRoot + "/") {
            return (message.topic, nil)
        }
        do {
            guard let command = try topics.parse(message.topic) else { return nil }
            return (message.topic, command.account ?? defaultAccount)
        } catch {
            return (message.topic, topics.sender(ofMalformed: message.topic))
        }
    }

    // MARK: Answers

    /// The answer to `message`, on its response topic when `respondingTo` and that topic is the
    /// account's own, else on the account's default response topic; with the correlation data.
    func answer(
        to message: MQTTMessage, account: String?, id: JSON, result: Result<JSON?, HomeError>,
        respondingTo: Bool = true
    ) -> Answer? {
        var members: [(key: String, value: JSON)] = [("id", id)]
        switch result {
        case .success(let data):
            members += [("ok", .bool(true)), ("topic", .string(message.topic))]
            if let data { members.append(("data", data)) }
        case .failure(let error):
            members += [
                ("ok", .bool(false)), ("code", .string(error.code.name)), ("message", .string(error.message)),
                ("topic", .string(message.topic)),
            ]
        }
        let payload = JSON.object(members)
        let correlationData = message.properties.correlationData
        if respondingTo, let responseTopic = message.properties.responseTopic,
            isAllowedResponseTopic(responseTopic, account: account)
        {
            return Answer(topic: responseTopic, payload: payload, correlationData: correlationData)
        }
        guard let account else { return nil }
        return Answer(topic: topics.response(account: account), payload: payload, correlationData: correlationData)
    }

    /// Whether the gateway may answer on `topic`: only the account's own response topic or below
    /// it. Anywhere else the gateway would publish with its own rights what a client chose: into
    /// the homes' trees, another account's answers, Home Assistant's discovery prefix, or the
    /// broker's `$CONTROL` topics.
    func isAllowedResponseTopic(_ topic: String, account: String?) -> Bool {
        guard let account, !topic.contains("+"), !topic.contains("#") else { return false }
        let own = topics.response(account: account)
        return topic == own || topic.hasPrefix(own + "/")
    }

    // MARK: Commands

    /// The action a command topic names, with its payload read as that command takes it; a request's
    /// `id` is kept in `id` as soon as its body is read, for the answer even when the rest is refused.
    static func action(_ topic: CommandTopic, payload: [UInt8], id: inout JSON) throws(HomeError) -> Command.Action {
        switch topic {
        case .setCharacteristic(let path, let service, let characteristic, _):
            return .write(CharacteristicPath(path, service: service, characteristic: characteristic), value: payload)
        case .setAccessory(let path, _): return .writeAccessory(path, values: try json(payload))
        case .setHomeAssistant(let path, let service, _):
            return .homeAssistantLight(path, service: service, command: try json(payload))
        case .identify(let path, _): return .identify(path)
        case .runActionSet(let home, let actionSet, _):
            // Its body is ignored (empty, or Home Assistant's `ON`) but for an `id`, which it echoes.
            id = RequestID.read(payload) ?? .null
            return .runActionSet(home: home, actionSet: actionSet)
        case .request(_, let operation):
            let body = try requestBody(payload)
            id = body["id"] ?? .null
            return .request(try Command.Request(operation: operation, body: body))
        }
    }

    // MARK: JSON bodies

    static func json(_ payload: [UInt8]) throws(HomeError) -> JSON {
        do {
            return try JSON.parse(payload)
        } catch {
            throw HomeError(.invalidParameter, "The payload is not valid JSON: \(error).")
        }
    }

    private static func requestBody(_ payload: [UInt8]) throws(HomeError) -> JSON {
        if payload.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .object([]) }
        let body = try json(payload)
        guard case .object = body else { throw HomeError(.invalidParameter, "A request body is a JSON object.") }
        return body
    }
}

extension CommandTopic {
    var isRequest: Bool { if case .request = self { true } else { false } }
}
