import Execution
import Foundation
import HomeModel
import JSON
import MQTT
import Synchronization

/// Brings mosquitto's dynamic-security plugin in step with `AccessRules` over MQTT: it asks the
/// broker for its clients and roles, computes a `DynamicSecurityPlan`, sends its commands to
/// `$CONTROL/dynamic-security/v1` and reads the answers on `$CONTROL/dynamic-security/v1/response`.
///
/// The client's account needs the plugin's admin role (`mosquitto_ctrl dynsec addClientRole
/// <gateway> admin`). The sync does not read the client's message stream itself, since the gateway
/// has one reader of it: hand it every message with `receive(_:)`.
package final class DynamicSecuritySync: Sendable {
    static let requestTopic = "$CONTROL/dynamic-security/v1"
    package static let responseTopic = "$CONTROL/dynamic-security/v1/response"

    /// What ends the wait for one request: its answers, or an error.
    private typealias Outcome = Result<[WireResponse], any Error>

    private struct State {
        /// The outcomes of each request waiting for its answers, by its batch: it takes the first.
        var waiters: [String: AsyncStream<Outcome>.Continuation] = [:]
        var subscribed = false
    }

    /// What ends the wait for a request to the own client whose connection the broker dropped and
    /// took back: the change took, and its answer will never come.
    private struct Reconnected: Error {}

    private let client: MQTTClient
    private let timeout: Duration
    /// Each exchange's timeout, on the clock it is given.
    private let deadlines: DeadlineTimer<AnyClock>
    // The waiters are finished from `receive`, called on the gateway's message loop, and from watchers.
    private let state = Mutex(State())

    /// `timeout` bounds each exchange with the broker (a broker without the plugin never answers).
    package init(client: MQTTClient, timeout: Duration = .seconds(10), clock: some Clock<Duration> = ContinuousClock())
    {
        self.client = client
        self.timeout = timeout
        deadlines = DeadlineTimer(clock: AnyClock(clock))
    }

    // MARK: Syncing

    /// Reads the broker's state, applies the commands that bring it in step with `rules`, and returns
    /// the plan it carried out. Throws when the broker does not answer or refuses any command (the
    /// others are still carried out; running the sync again retries what is left).
    ///
    /// - Parameter limiter: how often one account may be given new roles. The plugin disconnects a
    ///   client whose roles change, so an administrator adding and removing a member in a loop
    ///   would disconnect it again and again; grants beyond the limit are held for a later sync
    ///   (`heldGrants`). Revocations are never held, but count against the limit.
    @discardableResult
    package func sync(_ rules: AccessRules, limitingRoleChangesWith limiter: RateLimiter? = nil)
        async throws(DynamicSecurityError) -> DynamicSecurityPlan
    {
        var broker = DynamicSecurityPlan.BrokerState()
        for response in try await apply([.listClients, .listRoles]) {
            broker.clients.merge(response.listed.clients) { $1 }
            broker.roles.merge(response.listed.roles) { $1 }
        }
        var plan = DynamicSecurityPlan(rules: rules, broker: broker)
        let own = client.configuration.username
        if let limiter {
            let held = Set(plan.grantedAccounts.sorted().filter { $0 != own && !limiter.admit($0) })
            // A revocation disconnects the account too: it counts, once per account and sync.
            let revoked = Set(
                plan.commands.compactMap { if case .removeClientRole(let account, _) = $0 { account } else { nil } })
            for account in revoked.sorted() where account != own { _ = limiter.admit(account) }
            if !held.isEmpty { plan = DynamicSecurityPlan(rules: rules, broker: broker, holdingGrantsFor: held) }
        }
        let others = plan.commands.filter { $0.username == nil || $0.username != own }
        let mine = plan.commands.filter { $0.username != nil && $0.username == own }
        if !others.isEmpty { try await apply(others) }
        if !mine.isEmpty { _ = try await exchange(mine, changingOwnRoles: true) }
        return plan
    }

    /// Sends `commands` in one request and returns the answers: the sync's own exchanges, and setup
    /// the plan does not do (`setDefaultACLAccess`). Throws, naming every refused command with the
    /// broker's reason, when any was refused.
    @discardableResult
    package func apply(_ commands: [DynamicSecurityPlan.Command]) async throws(DynamicSecurityError)
        -> [WireResponse]
    {
        try await exchange(commands) ?? []
    }

    /// Throws, naming each refused command with the broker's reason, unless all succeeded.
    private func check(
        _ commands: [DynamicSecurityPlan.Command], _ responses: [WireResponse]
    ) throws(DynamicSecurityError) {
        guard responses.count == commands.count else {
            throw DynamicSecurityError(
                .invalidResponse, "the broker answered \(responses.count) of \(commands.count) commands")
        }
        let failures = zip(commands, responses).compactMap { command, response in
            response.error.map { "\(command.name) \(command.subject): \($0)" }
        }
        guard failures.isEmpty else {
            throw DynamicSecurityError(
                .commandsRefused,
                "the broker refused \(failures.count) of \(commands.count) commands: "
                    + failures.joined(separator: "; "))
        }
    }

    // MARK: Messages

    /// Takes the broker's answer if `message` is one; returns false for every other message, which
    /// the caller handles as usual.
    @discardableResult
    package func receive(_ message: MQTTMessage) -> Bool {
        guard message.topic == Self.responseTopic else { return false }
        guard let responses = WireResponse.all(in: message.payload),
            let batch = responses.first?.correlationData?.split(separator: ".").first.map(String.init)
        else { return true }
        finish(batch, .success(responses))
        return true
    }

    // MARK: Exchange

    /// Sends `commands` in one request, waits for the answers and checks them.
    ///
    /// `changingOwnRoles`: the commands change the roles of the client the sync runs on. The plugin
    /// disconnects a client whose roles change, before it answers, so the answer never comes when
    /// the change took: a `listClients` at the end tells a request that was answered (nothing
    /// changed) from one that got the client disconnected, and the exchange returns nil once the
    /// client is connected again.
    private func exchange(_ commands: [DynamicSecurityPlan.Command], changingOwnRoles: Bool = false)
        async throws(DynamicSecurityError) -> [WireResponse]?
    {
        do {
            if !state.withLock({ $0.subscribed }) {
                try await client.subscribe(to: [Self.responseTopic], qos: .atLeastOnce)
                state.withLock { $0.subscribed = true }
            }
        } catch {
            throw DynamicSecurityError(.transport, "cannot subscribe to \(Self.responseTopic): \(error)")
        }
        let batch = UUID().uuidString
        let (outcomes, waiter) = AsyncStream.makeStream(of: Outcome.self, bufferingPolicy: .bufferingOldest(1))
        state.withLock { $0.waiters[batch] = waiter }
        defer { _ = state.withLock { $0.waiters.removeValue(forKey: batch) } }
        // Follow the connection from before the commands go out: the broker may drop and take back
        // the connection faster than any polling would notice, and the stream misses no event.
        let events = changingOwnRoles ? client.connectionEvents() : nil
        let watcher = events.map { events in
            Task { [self] in
                var disconnected = false
                for await event in events {
                    switch event {
                    case .disconnected: disconnected = true
                    case .connected where disconnected: return finish(batch, .failure(Reconnected()))
                    case .closed: return
                    default: break
                    }
                }
            }
        }
        defer { watcher?.cancel() }
        // Each command tagged `<batch>.<index>`: its answer names the request it belongs to.
        let tagged = (commands + (changingOwnRoles ? [.listClients] : [])).enumerated().map {
            $1.json(correlationData: "\(batch).\($0)")
        }
        try await publish(JSON.object([("commands", .array(tagged))]).bytes)
        do {
            let responses = try await answer(
                outcomes,
                changingOwnRoles
                    ? "the broker neither answered nor reconnected within \(timeout) after changing the gateway's roles"
                    : "no answer on \(Self.responseTopic) within \(timeout); is the dynamic-security plugin "
                        + "loaded, and does the gateway's account have its admin role?")
            try check(commands, changingOwnRoles ? Array(responses.prefix(commands.count)) : responses)
            return responses
        } catch is Reconnected {
            // The roles changed: the broker dropped the client for it.
            return nil
        } catch let error as DynamicSecurityError {
            throw error
        } catch is CancellationError {
            throw DynamicSecurityError(.cancelled, "cancelled while waiting for the broker's answer")
        } catch {
            throw DynamicSecurityError(.transport, "\(error)")
        }
    }

    /// Waits for the first of a request's `outcomes` (registered before it was sent), at most the
    /// timeout, which fails with `timedOut` and `message`.
    private func answer(_ outcomes: AsyncStream<Outcome>, _ message: String) async throws -> [WireResponse] {
        let first = await Deadline.race(timeout: timeout, timer: deadlines) {
            for await outcome in outcomes { return try outcome.get() }
            throw CancellationError()
        }
        guard let first else { throw DynamicSecurityError(.timedOut, message) }
        return try first.get()
    }

    /// Publishes a request at most once: the commands are not idempotent (a second `createRole`
    /// fails), so a request lost with the connection is left to the timeout and the next sync rather
    /// than sent again after a reconnect. Waits for a connection until the timeout.
    private func publish(_ payload: [UInt8]) async throws(DynamicSecurityError) {
        let deadline = deadlines.clock.now.advanced(by: timeout)
        while true {
            do {
                try await client.publish(Self.requestTopic, payload: payload, qos: .atMostOnce)
                return
            } catch {
                guard (error as? MQTTError)?.code == .notConnected, await isConnected(before: deadline) else {
                    throw DynamicSecurityError(.transport, "cannot publish to \(Self.requestTopic): \(error)")
                }
            }
        }
    }

    /// Waits until the client is connected; false when `deadline` passes or the client closes first.
    private func isConnected(before deadline: AnyClock.Instant) async -> Bool {
        let events = client.connectionEvents()
        let outcome = await Deadline.race(timeout: deadlines.clock.now.duration(to: deadline), timer: deadlines) {
            for await event in events {
                switch event {
                case .connected: return true
                case .closed: return false
                default: continue
                }
            }
            return false
        }
        return (try? outcome?.get()) ?? false
    }

    /// Hands `outcome` to the request `batch`, if it still waits; only its first outcome counts.
    private func finish(_ batch: String, _ outcome: Outcome) {
        state.withLock { $0.waiters[batch] }?.yield(outcome)
    }
}

/// A sync that did not complete, with a code and a message that names, for refused commands, each
/// command and the broker's reason.
package typealias DynamicSecurityError = CodedError<DynamicSecurityErrorCode>

package enum DynamicSecurityErrorCode: String, ErrorCode {
    /// The broker did not answer in time.
    case timedOut
    /// The sync's task was cancelled (the gateway shuts down) while it waited for an answer.
    case cancelled
    /// Publishing or subscribing failed.
    case transport
    /// The answer was not what the plugin sends.
    case invalidResponse
    /// The broker refused one or more commands (the message names each, with the broker's reason:
    /// `Role already exists`, `Client not found`, ...).
    case commandsRefused
}

extension DynamicSecurityPlan.Command {
    /// The client the command changes, if any.
    var username: String? {
        switch self {
        case .addClientRole(let username, _), .removeClientRole(let username, _):
            username
        default: nil
        }
    }

    /// What the command is about, for messages: the role and/or client.
    var subject: String {
        switch self {
        case .createRole(let role, _), .addRoleACL(let role, _), .removeRoleACL(let role, _), .deleteRole(let role):
            "'\(role)'"
        case .addClientRole(let username, let role), .removeClientRole(let username, let role):
            "'\(username)' '\(role)'"
        case .listClients, .listRoles: ""
        case .setDefaultACLAccess(let type, _): type
        }
    }
}

// MARK: Wire format

// The plugin's JSON is built and read as `JSON` values, like every payload of the gateway (see
// `JSON` for why one representation), not through `Codable` wire structs.

extension DynamicSecurityPlan.Command {
    /// The command as the plugin reads it, tagged with `correlationData` so that its answer can be
    /// told from others on the shared response topic.
    func json(correlationData: String) -> JSON {
        var members: [(key: String, value: JSON)] = [("command", .string(name))]
        switch self {
        case .createRole(let role, let acls):
            members += [("rolename", .string(role)), ("acls", .array(acls.map { .object($0.wireMembers) }))]
        case .addRoleACL(let role, let acl):
            members += [("rolename", .string(role))] + acl.wireMembers
        case .removeRoleACL(let role, let acl):
            members += [("rolename", .string(role)), ("acltype", .string(acl.type)), ("topic", .string(acl.topic))]
        case .deleteRole(let role):
            members.append(("rolename", .string(role)))
        case .addClientRole(let username, let role), .removeClientRole(let username, let role):
            members += [("username", .string(username)), ("rolename", .string(role))]
        case .listClients, .listRoles:
            members.append(("verbose", .bool(true)))
        case .setDefaultACLAccess(let type, let allow):
            members.append(("acls", .array([.object([("acltype", .string(type)), ("allow", .bool(allow))])])))
        }
        members.append(("correlationData", .string(correlationData)))
        return .object(members)
    }
}

extension DynamicSecurityPlan.ACL {
    /// The ACL as `createRole` and `addRoleACL` carry it.
    var wireMembers: [(key: String, value: JSON)] {
        [
            ("acltype", .string(type)), ("topic", .string(topic)), ("priority", .integer(priority)),
            ("allow", .bool(allow)),
        ]
    }
}

/// One answer of the plugin: its error if the command failed, and what a list command listed.
package struct WireResponse: Sendable {
    var error: String?
    var correlationData: String?
    /// What `listClients` and `listRoles` listed: each client's roles, each role's ACLs.
    var listed = DynamicSecurityPlan.BrokerState()

    /// The answers a message on the response topic carries; nil when it is not what the plugin sends.
    static func all(in payload: [UInt8]) -> [WireResponse]? {
        guard let responses = (try? JSON.parse(payload))?["responses"], responses.arrayValue != nil else { return nil }
        return list(responses, WireResponse.init)
    }

    private init?(_ json: JSON) {
        guard json["command"]?.stringValue != nil else { return nil }
        error = json["error"]?.stringValue
        correlationData = json["correlationData"]?.stringValue
        for client in json["data"]?["clients"]?.arrayValue ?? [] {
            guard let username = client["username"]?.stringValue,
                let roles = Self.list(client["roles"], { $0["rolename"]?.stringValue })
            else { return nil }
            listed.clients[username] = Set(roles)
        }
        for role in json["data"]?["roles"]?.arrayValue ?? [] {
            guard let name = role["rolename"]?.stringValue, let acls = Self.list(role["acls"], Self.acl) else {
                return nil
            }
            listed.roles[name] = Set(acls)
        }
    }

    private static func acl(_ json: JSON) -> DynamicSecurityPlan.ACL? {
        guard let type = json["acltype"]?.stringValue, let topic = json["topic"]?.stringValue else { return nil }
        return DynamicSecurityPlan.ACL(
            type, topic, allow: json["allow"]?.boolValue ?? false, priority: json["priority"]?.integerValue ?? 0)
    }

    /// Each element of an optional array read by `element`: empty when there is no array, nil when
    /// an element does not read.
    private static func list<Element>(_ json: JSON?, _ element: (JSON) -> Element?) -> [Element]? {
        var elements: [Element] = []
        for json in json?.arrayValue ?? [] {
            guard let next = element(json) else { return nil }
            elements.append(next)
        }
        return elements
    }
}
