/// The `$CONTROL/dynamic-security/v1` commands that bring mosquitto's dynamic-security plugin in step
/// with `AccessRules`, given what the broker has now. Pure, so it is tested without a broker;
/// `DynamicSecuritySync` fetches the broker's state and sends the commands.
///
/// The plugin of mosquitto 2.0 does not substitute `%u` in its ACL topics (verified against 2.0.11:
/// a `publishClientSend` ACL on `.../set/%u` only matches a literal `%u`), so every account gets a
/// role of its own with its name written into its command topics. The gateway owns every role whose
/// name starts with `rolePrefix`, and touches no other role; clients keep their other roles.
///
/// The gateway manages roles, not logins: it never creates a client (one without a password would be
/// an account nobody set up). A member whose account the broker does not have is listed in
/// `missingAccounts` and gets its roles once an administrator created it.
///
/// Roles: `<prefix>home:<home>` (read one home), `<prefix>member:<home>:<account>` (commands in its
/// own name into that home), `<prefix>administrator` (read the homes list and the discovered
/// accessories), `<prefix>account:<account>` (requests in its own name, its responses, the status),
/// `<prefix>gateway`, and `<prefix>homeassistant` when Home Assistant is enabled. A role's ACLs never
/// change while accounts hold it for a membership that stays: the plugin disconnects every holder
/// of a role whose ACLs change.
package struct DynamicSecurityPlan: Sendable, Hashable {
    /// One access control entry of a role, as the plugin stores it.
    package struct ACL: Sendable, Hashable, Comparable {
        /// `publishClientSend`, `publishClientReceive`, `subscribeLiteral`, `subscribePattern`,
        /// `unsubscribeLiteral` or `unsubscribePattern`.
        package var type: String
        package var topic: String
        package var allow: Bool
        var priority: Int

        package init(_ type: String, _ topic: String, allow: Bool = true, priority: Int = 0) {
            self.type = type
            self.topic = topic
            self.allow = allow
            self.priority = priority
        }

        package static func < (lhs: ACL, rhs: ACL) -> Bool {
            (lhs.type, lhs.topic, lhs.priority, lhs.allow ? 1 : 0) < (
                rhs.type, rhs.topic, rhs.priority, rhs.allow ? 1 : 0
            )
        }

        /// Publish and subscribe access to `filter`.
        static func readWrite(_ filter: String) -> [ACL] {
            [ACL("publishClientSend", filter)] + read(filter)
        }

        /// Subscribing to `filter` (or any narrower filter) and receiving what it matches.
        static func read(_ filter: String) -> [ACL] {
            [ACL("subscribePattern", filter), ACL("publishClientReceive", filter)]
        }
    }

    /// What the broker has: every client with its roles, and the roles with their ACLs (at least
    /// those whose name starts with the prefix).
    package struct BrokerState: Sendable, Hashable {
        package var clients: [String: Set<String>] = [:]
        package var roles: [String: Set<ACL>] = [:]
    }

    /// One command of the plugin's API.
    package enum Command: Sendable, Hashable {
        case createRole(String, acls: [ACL])
        case addRoleACL(String, ACL)
        case removeRoleACL(String, ACL)
        case deleteRole(String)
        case addClientRole(String, role: String)
        case removeClientRole(String, role: String)
        case listClients
        case listRoles
        /// What the broker does where no role says: `publishClientReceive` denied is recommended, so
        /// that only the roles' explicit grants are delivered.
        case setDefaultACLAccess(String, allow: Bool)

        /// The name of the command in the API.
        package var name: String {
            switch self {
            case .createRole: "createRole"
            case .addRoleACL: "addRoleACL"
            case .removeRoleACL: "removeRoleACL"
            case .deleteRole: "deleteRole"
            case .addClientRole: "addClientRole"
            case .removeClientRole: "removeClientRole"
            case .listClients: "listClients"
            case .listRoles: "listRoles"
            case .setDefaultACLAccess: "setDefaultACLAccess"
            }
        }
    }

    /// The commands, in the order they must run: roles first, then clients and their roles, then
    /// what is no longer needed.
    package let commands: [Command]
    /// Accounts the rules give roles that the broker has no client for: they get nothing until an
    /// administrator creates them (`mosquitto_ctrl dynsec createClient`), and the next sync after
    /// that gives them their roles.
    package let missingAccounts: [String]
    /// Accounts whose new roles were held back (see `init(rules:broker:holdingGrantsFor:)`), with the
    /// roles they would get.
    package let heldGrants: [String: Set<String>]

    /// The prefix of the roles the gateway owns: the base topic and a colon, so that two gateways
    /// with different base topics can share a broker.
    static func rolePrefix(for topics: Topics) -> String { "\(topics.base):" }

    /// - Parameter held: accounts that get no new client roles in this plan (each new role makes the
    ///   plugin disconnect the client, so the gateway limits how often that happens to one account).
    ///   Roles are still taken away from them at once: revoking access never waits.
    package init(rules: AccessRules, broker: BrokerState, holdingGrantsFor held: Set<String> = []) {
        let prefix = Self.rolePrefix(for: rules.topics)
        let desired = Self.desired(rules, prefix: prefix)
        var commands: [Command] = []
        for (role, acls) in desired.roles.sorted(by: { $0.key < $1.key }) {
            guard let existing = broker.roles[role] else {
                commands.append(.createRole(role, acls: acls.sorted()))
                continue
            }
            commands += existing.subtracting(acls).sorted().map { .removeRoleACL(role, $0) }
            commands += acls.subtracting(existing).sorted().map { .addRoleACL(role, $0) }
        }
        var missing: [String] = []
        var heldGrants: [String: Set<String>] = [:]
        for (client, wanted) in desired.clients.sorted(by: { $0.key < $1.key }) {
            guard let has = broker.clients[client] else {
                missing.append(client)
                continue
            }
            let grants = wanted.subtracting(has)
            guard !grants.isEmpty else { continue }
            if held.contains(client) {
                heldGrants[client] = grants
            } else {
                commands += grants.sorted().map { .addClientRole(client, role: $0) }
            }
        }
        missingAccounts = missing
        self.heldGrants = heldGrants
        for (client, has) in broker.clients.sorted(by: { $0.key < $1.key }) {
            let extra = has.filter { $0.hasPrefix(prefix) }.subtracting(desired.clients[client] ?? [])
            commands += extra.sorted().map { .removeClientRole(client, role: $0) }
        }
        let stale = broker.roles.keys.filter { $0.hasPrefix(prefix) && desired.roles[$0] == nil }
        commands += stale.sorted().map { .deleteRole($0) }
        self.commands = commands
    }

    /// The accounts this plan gives new client roles (and so gets disconnected by the plugin).
    package var grantedAccounts: Set<String> {
        Set(
            commands.compactMap {
                if case .addClientRole(let account, _) = $0 { account } else { nil }
            })
    }

    /// The roles and client roles the rules call for: what the broker has once in step.
    static func desired(_ rules: AccessRules, prefix: String) -> BrokerState {
        var desired = BrokerState()
        func grant(_ account: String, _ role: String, _ acls: [ACL]) {
            desired.roles[role, default: []].formUnion(acls)
            desired.clients[account, default: []].insert(role)
        }
        func memberRole(_ home: String, _ account: String) -> String { "\(prefix)member:\(home):\(account)" }
        func requestsAndResponses(_ account: String) {
            grant(
                account, "\(prefix)account:\(account)",
                rules.requestTopics(account: account).map { ACL("publishClientSend", $0) }
                    + rules.ownTopics(account: account).flatMap(ACL.read))
        }

        grant(rules.gatewayAccount, "\(prefix)gateway", rules.gatewayFilters.flatMap(ACL.readWrite))
        let accounts = rules.accounts
        for (account, entry) in accounts where account != rules.gatewayAccount {
            requestsAndResponses(account)
            for home in entry.homes {
                grant(account, "\(prefix)home:\(home)", ACL.read(rules.homeFilter(home)))
                // Commands carry the account, so each membership has a role of its own with the
                // account written in. A role of its own, not ACLs added to the account's role: the
                // plugin disconnects every holder of a role whose ACLs change, and only client-role
                // grants are held back by the role-change limit.
                grant(
                    account, memberRole(home, account),
                    rules.commandTopics(account: account, home: home).map { ACL("publishClientSend", $0) })
            }
            if entry.administrator {
                grant(account, "\(prefix)administrator", rules.administratorTopics.flatMap(ACL.read))
            }
        }
        if let homeAssistant = rules.homeAssistant, homeAssistant.account != rules.gatewayAccount {
            requestsAndResponses(homeAssistant.account)
            grant(
                homeAssistant.account, "\(prefix)homeassistant",
                ACL.read("\(homeAssistant.discoveryPrefix)/#")
                    + [ACL("publishClientSend", "\(homeAssistant.discoveryPrefix)/status")])
        }
        if let account = rules.defaultAccount, account != rules.gatewayAccount {
            requestsAndResponses(account)
            for home in accounts[account]?.homes ?? [] {
                grant(
                    account, memberRole(home, account),
                    rules.commandTopicsWithoutAccount(home: home).map { ACL("publishClientSend", $0) })
            }
        }
        return desired
    }
}
