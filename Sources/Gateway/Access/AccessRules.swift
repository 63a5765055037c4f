import HomeModel

/// Who may publish and read what on the broker, derived from the homes' users
/// (docs/access-rules.md). MQTT does not tell the gateway who published a command, so every command topic ends
/// with the account, and these rules make the broker refuse a command whose last level is not the
/// publisher's own username. They also keep each account to the homes it is a member of, for
/// reading and for writing: an account may publish commands only into its own homes' trees, so
/// nothing it publishes (retained or not) reaches the members of a home it does not belong to.
///
/// Pure: the same inputs give the same rules, byte for byte. `aclFile()` renders them for
/// mosquitto's `acl_file`; `DynamicSecurityPlan` turns them into roles for the dynamic-security plugin.
package struct AccessRules: Sendable, Hashable {
    /// One account's membership of one home, by the home's name.
    package struct Member: Sendable, Hashable, Comparable {
        package var home: String
        package var account: String
        package var role: Role

        package init(home: String, account: String, role: Role) {
            self.home = home
            self.account = account
            self.role = role
        }

        package init(_ membership: Membership) {
            self.init(home: membership.homeName, account: membership.account, role: membership.role)
        }

        package static func < (lhs: Member, rhs: Member) -> Bool {
            (lhs.account, lhs.home, lhs.role.rawValue) < (rhs.account, rhs.home, rhs.role.rawValue)
        }
    }

    /// A name the rules cannot be written for, and why. It is left out, so that account gets no
    /// access (fail closed) rather than the rules getting corrupted.
    package struct Rejected: Sendable, Hashable, CustomStringConvertible {
        package var name: String
        package var reason: String

        package var description: String { "'\(name)': \(reason)" }
    }

    /// A zigbee2mqtt network on the gateway's broker: its base topic and the account zigbee2mqtt
    /// connects as.
    package struct Zigbee2MQTT: Sendable, Hashable {
        package var baseTopic: String
        package var account: String

        package init(baseTopic: String, account: String) {
            self.baseTopic = baseTopic
            self.account = account
        }
    }

    package let topics: Topics
    /// zigbee2mqtt on this broker: the gateway and zigbee2mqtt's own account read and write its base
    /// topic; nobody else gets anything there from these rules.
    package let zigbee2mqtt: Zigbee2MQTT?
    /// The gateway's own MQTT username: it reads and writes everything under the base topic.
    package let gatewayAccount: String
    /// Home Assistant's discovery, when it is enabled: its account reads the discovery prefix.
    package let homeAssistant: HomeAssistantDiscovery?
    /// The account that command topics without an account act as (config `commands.defaultAccount`):
    /// only that account may publish them.
    package let defaultAccount: String?
    /// The memberships the rules are made of, sorted, without the rejected ones.
    package let members: [Member]
    /// The client id of the hub broker's bridge to a central broker (its `remote_clientid`), when it
    /// has one (docs/scaling.md): members read its state topic, and on the central broker the bridge
    /// writes it.
    package let bridgeClientID: String?
    /// Accounts and homes left out because mosquitto cannot match them safely.
    package let rejected: [Rejected]

    package init(
        topics: Topics, gatewayAccount: String, homeAssistant: HomeAssistantDiscovery? = nil,
        defaultAccount: String? = nil, zigbee2mqtt: Zigbee2MQTT? = nil, bridgeClientID: String? = nil,
        members: [Member]
    ) {
        var rejected: [Rejected] = []
        func accepted(_ name: String, as what: String) -> Bool {
            guard let reason = Self.problem(with: name, as: what) else { return true }
            if !rejected.contains(where: { $0.name == name }) { rejected.append(Rejected(name: name, reason: reason)) }
            return false
        }
        self.topics = topics
        self.zigbee2mqtt = zigbee2mqtt.flatMap { accepted($0.account, as: "account") ? $0 : nil }
        self.gatewayAccount = gatewayAccount
        self.homeAssistant = homeAssistant
        self.defaultAccount = defaultAccount.flatMap { accepted($0, as: "account") ? $0 : nil }
        self.bridgeClientID = bridgeClientID.flatMap { accepted($0, as: "bridge client id") ? $0 : nil }
        self.members = Set(members).sorted().filter {
            accepted($0.account, as: "account") && accepted($0.home, as: "home")
        }
        self.rejected = rejected.sorted { $0.name < $1.name }
    }

    /// Why `name` cannot stand in a rule, or nil. A name becomes one topic level and, in the acl
    /// file, the rest of a line: no wildcards or slashes (mosquitto also refuses `%u` for such
    /// usernames), no control characters (a newline would start a rule of its own), no blanks at the
    /// ends (mosquitto trims them).
    package static func problem(with name: String, as what: String) -> String? {
        if name.isEmpty { return "the \(what) is empty" }
        if name.contains(where: { $0 == "+" || $0 == "#" || $0 == "/" }) {
            return "the \(what) contains '+', '#' or '/', which cannot be part of a topic level"
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" }) {
            return "the \(what) contains a control character"
        }
        if name.first!.isWhitespace || name.last!.isWhitespace {
            return "the \(what) starts or ends with a blank, which mosquitto trims"
        }
        return nil
    }

    // MARK: The rules

    /// The request topics an account may publish, with `account` as the last level but one (`%u`
    /// for the acl file's patterns). Requests are not in any home's tree; the gateway checks each
    /// against the account's role.
    func requestTopics(account: String) -> [String] {
        ["\(topics.base)/$request/\(account)/+"]
    }

    /// The command topics an account may publish into one home it is a member of, with `account` as
    /// the last level. The home level is the home's name as stored: behind these rules a command
    /// must spell the home exactly (the gateway itself would also match `main house`).
    func commandTopics(account: String, home: String) -> [String] {
        commandTopicsWithoutAccount(home: home).map { "\($0)/\(account)" }
    }

    /// The command topics of one home without an account, which only the default account may
    /// publish, and only into its own homes.
    func commandTopicsWithoutAccount(home: String) -> [String] {
        Topics.homeCommandPatterns.map { "\(topics.home(home))/\($0)" }
    }

    /// What every account the rules name reads: its own responses (also below, where MQTT v5
    /// clients put their own response topics), whether the gateway is online, and the hub's bridge's
    /// state when there is one.
    func ownTopics(account: String) -> [String] {
        ["\(topics.response(account: account))/#", topics.status] + (bridgeStateTopic.map { [$0] } ?? [])
    }

    /// Where the hub broker's bridge says whether it is connected (mosquitto's `notifications`).
    var bridgeStateTopic: String? { bridgeClientID.map { "$SYS/broker/connection/\($0)/state" } }

    /// Everything of one home.
    func homeFilter(_ home: String) -> String { "\(topics.home(home))/#" }

    /// What administrators of any home read besides their homes: the homes and the accessories found
    /// by the drivers (to add them).
    var administratorTopics: [String] { [topics.discovered, topics.homes] }

    /// Everything the gateway reads and writes.
    var gatewayFilters: [String] {
        ["\(topics.base)/#"] + (homeAssistant.map { ["\($0.discoveryPrefix)/#"] } ?? [])
            + (zigbee2mqtt.map { ["\($0.baseTopic)/#"] } ?? [])
    }

    /// The homes each account is a member of, and whether it administers any, by account.
    var accounts: [String: (homes: [String], administrator: Bool)] {
        var accounts: [String: (homes: [String], administrator: Bool)] = [:]
        for member in members {
            accounts[member.account, default: ([], false)].homes.append(member.home)
            if member.role == .administrator { accounts[member.account]!.administrator = true }
        }
        for (account, entry) in accounts { accounts[account]!.homes = Array(Set(entry.homes)).sorted() }
        return accounts
    }

    // MARK: acl_file

    /// Which broker an acl_file is for.
    package enum Placement: Sendable {
        /// The hub's own broker, next to the gateway: its accounts are the hub's.
        case hub
        /// A central broker that several hubs are bridged to (docs/scaling.md), whose file is put
        /// together from each hub's: every line names its account, so each hub's topics are reachable
        /// only by its bridge (the gateway's account) and the members of its homes. No `pattern`:
        /// mosquitto applies one to every account of every hub. Home Assistant's and zigbee2mqtt's
        /// topics stay on the hub.
        case central
    }

    /// The rules as the text of a mosquitto `acl_file` (mosquitto 2.0): a generated-by header, on the
    /// hub the patterns every account shares (each naming `%u`), then one `user` block per account,
    /// accounts and topics sorted. Topics are written as they are: mosquitto 2.0 takes the rest of the
    /// line as the topic, so levels with spaces (`Main House`) and `$` levels need no quoting.
    package func aclFile(generatedBy generator: String = "homegate acl", for placement: Placement = .hub) -> String {
        var lines = [
            "# Generated by \(generator) from the homes' users. Do not edit: changes are lost when it is",
            "# generated again. Base topic: \(topics.base)."
                + (placement == .central ? " For a central broker shared by several hubs." : "")
                + " See docs/access-rules.md.",
        ]
        lines += rejected.map { "# Left out (no access): \(Self.comment($0.description))" }
        if placement == .hub {
            lines += ["", "# Every account: requests only in its own name, its own responses."]
            lines += requestTopics(account: "%u").map { "pattern write \($0)" }
            lines += ["pattern read \(topics.response(account: "%u"))/#"]
        }

        lines += [
            "", placement == .hub ? "# The gateway." : "# The gateway, and the hub's bridge.", "user \(gatewayAccount)",
        ]
        lines += (placement == .hub ? gatewayFilters : ["\(topics.base)/#"]).map { "topic readwrite \($0)" }
        if let bridgeStateTopic {
            lines.append(placement == .hub ? "topic read \(bridgeStateTopic)" : "topic readwrite \(bridgeStateTopic)")
        }

        let accounts = self.accounts
        var blocks: [String: [String]] = [:]
        /// What an account reads and sends whatever its homes: on the hub its requests and answers
        /// come from the patterns above.
        func own(_ account: String) -> [String] {
            var own = ["topic read \(topics.status)"] + (bridgeStateTopic.map { ["topic read \($0)"] } ?? [])
            if placement == .central {
                own += requestTopics(account: account).map { "topic write \($0)" }
                own.append("topic read \(topics.response(account: account))/#")
            }
            return own
        }
        for (account, entry) in accounts where account != gatewayAccount {
            blocks[account] = own(account)
            for home in entry.homes {
                blocks[account]!.append("topic read \(homeFilter(home))")
                blocks[account]! += commandTopics(account: account, home: home).map { "topic write \($0)" }
            }
            if entry.administrator { blocks[account]! += administratorTopics.map { "topic read \($0)" } }
        }
        if placement == .hub, let homeAssistant, homeAssistant.account != gatewayAccount {
            blocks[homeAssistant.account, default: own(homeAssistant.account)] += [
                "topic read \(homeAssistant.discoveryPrefix)/#",
                "topic write \(homeAssistant.discoveryPrefix)/status",
            ]
        }
        if placement == .hub, let zigbee2mqtt, zigbee2mqtt.account != gatewayAccount {
            blocks[zigbee2mqtt.account, default: []].append("topic readwrite \(zigbee2mqtt.baseTopic)/#")
        }
        if let defaultAccount, defaultAccount != gatewayAccount {
            for home in accounts[defaultAccount]?.homes ?? [] {
                blocks[defaultAccount, default: []] += commandTopicsWithoutAccount(home: home).map {
                    "topic write \($0)"
                }
            }
        }
        for account in blocks.keys.sorted() {
            lines += ["", "user \(account)"] + blocks[account]!.sorted()
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func comment(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    }
}
