import Foundation
import Gateway
import HomeModel
import Logging
import MQTT

// The sections of the config file, in the order of the sample file: each decoded, its values checked
// and its problems reported where they are (``ConfigurationDecoding``).

extension GatewayConfiguration: Decodable, ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case mqtt, data, accessories, commands, access, homes, homeAssistant, logging, history, web, homekit
    }

    /// Reads a config file's document; only `parse` can call it, as it collects the problems.
    package init(from decoder: any Decoder) throws { self.init(reading: try ConfigurationSection(decoder)) }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        // The sections with environment overrides are read even when the file leaves them out.
        file.read(&mqtt, .mqtt, evenIfAbsent: true)
        file.read(&data, .data, evenIfAbsent: true)
        file.read(&accessories, .accessories)
        file.read(&commands, .commands)
        file.read(&access, .access)
        file.read(&homes, .homes)
        file.read(&homeAssistant, .homeAssistant)
        file.read(&logging, .logging, evenIfAbsent: true)
        file.read(&history, .history)
        file.readOrNull(&web, .web)
        file.readOrNull(&homekit, .homekit)
        checkZigbee2MQTTTopics(file.decoding)
    }

    /// zigbee2mqtt's base topic must be its own: the access rules give zigbee2mqtt's account
    /// everything under it, so it must not take in the gateway's topics or Home Assistant's.
    private func checkZigbee2MQTTTopics(_ decoding: ConfigurationDecoding) {
        guard let zigbee = accessories.zigbee2mqtt, zigbee.broker == nil else { return }
        var others = [("mqtt.baseTopic", mqtt.baseTopic)]
        if homeAssistant.enabled {
            others.append(("homeAssistant.discoveryPrefix", homeAssistant.discoveryPrefix))
        }
        let base = zigbee.baseTopic
        for (key, topic) in others where base == topic || base.hasPrefix(topic + "/") || topic.hasPrefix(base + "/") {
            decoding.report(
                .invalidValue, at: decoding.location(["accessories", "zigbee2mqtt", "baseTopic"].map { PathKey($0) }),
                "'accessories.zigbee2mqtt.baseTopic' ('\(base)') overlaps '\(key)' ('\(topic)'): zigbee2mqtt's account would get the gateway's topics",
                fix: "use zigbee2mqtt's own base topic, by default zigbee2mqtt")
        }
    }
}

extension GatewayConfiguration.MQTTSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case broker, brokers, clientId, username, password, passwordFile, baseTopic, keepAlive, connectTimeout
        case protocolVersion, eventsQoS, tls
    }

    private static let protocolVersions: [String: MQTTConfiguration.ProtocolVersion] = [
        "5": .v5, "5.0": .v5, "3.1.1": .v311, "311": .v311, "4": .v311,
    ]

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        clientId = file.value(.clientId, fix: "use a name unique on the broker, e.g. homegate") {
            $0.isEmpty || $0.utf8.count > 65535 ? "'mqtt.clientId' must not be empty" : nil
        }
        file.read(&keepAlive, .keepAlive) {
            $0 == 0 || (5...65535).contains($0)
                ? nil : "'mqtt.keepAlive' is \($0) seconds; libmosquitto takes 0 (off) or 5 to 65535"
        }
        file.read(&connectTimeout, .connectTimeout) {
            (1...3600).contains($0) ? nil : "'mqtt.connectTimeout' is \($0) seconds; it must be between 1 and 3600"
        }
        let qos: Int? = file.value(
            .eventsQoS, example: 1, fix: "write 1 to have them queued for a persistent session, or leave it out for 0"
        ) { (0...1).contains($0) ? nil : "'mqtt.eventsQoS' is \($0); $events go at QoS 0 or 1" }
        eventsQoS = qos.flatMap(MQTTQoS.init(rawValue:)) ?? eventsQoS
        let version: String? = file.value(.protocolVersion, fix: "write 5, or \"3.1.1\" for an older broker") {
            Self.protocolVersions[$0] != nil
                ? nil : "'mqtt.protocolVersion' is '\($0)'; homegate speaks MQTT 5 and 3.1.1"
        }
        protocolVersion = version.flatMap { Self.protocolVersions[$0] } ?? protocolVersion
        readAccount(file)
        baseTopic =
            file.text(
                .baseTopic, overriddenBy: "HOMEGATE_MQTT_BASE_TOPIC",
                fix: "use a plain topic such as 'homegate' or 'site1/homegate'"
            ) { problem(BaseTopic.validate, $0) } ?? baseTopic
        let brokerLocation = readBrokers(file)
        file.readOrNull(&tls, .tls)
        if tls != nil, let brokerLocation, !brokers[0].lowercased().hasPrefix("mqtts://") {
            file.decoding.report(
                .invalidValue, at: file.keyLocation(.tls),
                "'mqtt.tls' is set but the broker '\(brokers[0])' is plain MQTT (\(brokerLocation))",
                fix: "use an mqtts:// broker address, or remove the tls section")
        }
    }

    /// `username`, and the password from `password`, `passwordFile` or `HOMEGATE_MQTT_PASSWORD`.
    private mutating func readAccount(_ file: ConfigurationSection<CodingKeys>) {
        username = file.text(.username, overriddenBy: "HOMEGATE_MQTT_USERNAME") ?? username
        if file.contains(.passwordFile), file.contains(.password) {
            file.decoding.report(
                .invalidValue, at: file.keyLocation(.passwordFile),
                "'mqtt.password' and 'mqtt.passwordFile' are both set",
                fix: "keep one; passwordFile keeps the secret out of this file")
        }
        if file.decoding.variable("HOMEGATE_MQTT_PASSWORD") == nil {
            let passwordFile = file.path(.passwordFile)
            password = passwordFile.flatMap(firstLine(ofFile:))?.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            let _: String? = file.value(.passwordFile)
        }
        password = file.text(.password, overriddenBy: "HOMEGATE_MQTT_PASSWORD") ?? password
        if password != nil && username == nil {
            file.decoding.report(
                .invalidValue, at: file.keyLocation(file.contains(.password) ? .password : .passwordFile),
                "a password is set but no 'mqtt.username'", fix: "add 'username:' to the mqtt section")
        }
    }

    /// `brokers`, `broker` or `HOMEGATE_MQTT_BROKER`, each address checked where it is written.
    /// Returns where the first broker comes from, or nil when one is not usable.
    private mutating func readBrokers(_ file: ConfigurationSection<CodingKeys>) -> ConfigurationError.Location? {
        var brokers: [(url: String, location: ConfigurationError.Location)] = []
        var isValid = true
        if file.contains(.brokers) {
            if file.contains(.broker) {
                file.decoding.report(
                    .invalidValue, at: file.keyLocation(.brokers), "'mqtt.broker' and 'mqtt.brokers' are both set",
                    fix: "keep one: brokers lists several in order of preference, broker names one")
            }
            let list: [String]? = file.value(.brokers, example: ["mqtt://hub.local:1883", "mqtt://backup.local:1883"])
            if list?.isEmpty == true {
                file.report(
                    .wrongType, at: .brokers, "'mqtt.brokers' must be a list of mqtt[s]://host[:port]",
                    fix: "write e.g. [\"mqtt://hub.local:1883\", \"mqtt://backup.local:1883\"]")
            }
            isValid = list?.isEmpty == false
            brokers = (list ?? []).enumerated().map { ($1, file.location(.brokers, item: $0)) }
        } else if let broker: String = file.value(.broker) {
            brokers = [(broker, file.location(.broker))]
        }
        if let variable = file.decoding.variable("HOMEGATE_MQTT_BROKER") {
            brokers = variable.split(separator: ",", omittingEmptySubsequences: false).map {
                ($0.trimmingCharacters(in: .whitespaces), .environment("HOMEGATE_MQTT_BROKER"))
            }
        }
        for broker in brokers {
            if let problem = problem({ _ = try MQTTConfiguration(brokerURL: $0, clientID: "check") }, broker.url) {
                file.decoding.report(
                    .invalidValue, at: broker.location, problem, fix: "write mqtt://host:1883 or mqtts://host:8883")
                isValid = false
            }
        }
        guard isValid else { return nil }
        guard let first = brokers.first else { return .wholeFile(file.decoding.file) }
        if let problem = problem({ _ = try MQTTConfiguration(brokerURLs: $0, clientID: "check") }, brokers.map(\.url)) {
            file.decoding.report(
                .invalidValue, at: first.location, problem, fix: "make them all mqtt:// or all mqtts://")
            return nil
        }
        self.brokers = brokers.map(\.url)
        return first.location
    }
}

extension MQTTConfiguration.TLS: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case caFile, certificateFile, keyFile, verifyServer
    }

    init() { self.init(caFile: nil) }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        caFile = file.path(.caFile)
        certificateFile = file.path(.certificateFile)
        keyFile = file.path(.keyFile)
        if (certificateFile == nil) != (keyFile == nil) {
            file.decoding.report(
                .invalidValue, at: file.decoding.location(file.path, key: true),
                "'mqtt.tls' needs both certificateFile and keyFile, or neither",
                fix: "add the missing one, or remove the other")
        }
        file.read(&verifyServer, .verifyServer)
    }
}

extension GatewayConfiguration.DataSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case directory, inMemory, valueCommitWindow
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        directory =
            file.text(.directory, overriddenBy: "HOMEGATE_DATA_DIRECTORY", fix: "use e.g. /var/lib/homegate") {
                $0.isEmpty ? "'data.directory' is empty" : nil
            } ?? directory
        file.read(&inMemory, .inMemory)
        valueCommitWindow =
            file.seconds(
                .valueCommitWindow, example: 0.1,
                fix:
                    "use 0.1 (a power cut loses at most that much of device values), or 0 to write each value before its answer"
            ) { (0...5).contains($0) ? nil : "'data.valueCommitWindow' is \($0) seconds; it must be 0...5" }
            ?? valueCommitWindow
    }
}

extension GatewayConfiguration.AccessorySettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case virtual, zigbee2mqtt, hap
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        virtual = file.isNull(.virtual) ? nil : file.path(.virtual)
        file.readOrNull(&zigbee2mqtt, .zigbee2mqtt)
        file.readOrNull(&hap, .hap)
    }
}

extension GatewayConfiguration.HAPSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case discovery, accessories
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        file.read(&discovery, .discovery)
        guard !file.isNull(.accessories) else { return }
        accessories =
            file.list(
                .accessories, example: ["192.168.1.20:51826"],
                fix: "write the accessory's address and HAP port, e.g. 192.168.1.20:51826"
            ) {
                (GatewayConfiguration.hostAndPort($0)?.1 ?? 0) > 0
                    ? nil : "'\($0)' in 'accessories.hap.accessories' is not host:port"
            }
            ?? []
    }
}

extension GatewayConfiguration.Zigbee2MQTTSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case baseTopic, broker, username, passwordFile, account
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        file.read(&baseTopic, .baseTopic, fix: "use zigbee2mqtt's mqtt.base_topic, by default zigbee2mqtt") {
            problem(BaseTopic.validate, $0).map { "'accessories.zigbee2mqtt.baseTopic': \($0)" }
        }
        broker = file.value(.broker, fix: "e.g. mqtt://192.168.1.20:1883, or leave it out for the gateway's own broker")
        {
            problem({ _ = try MQTTConfiguration(brokerURL: $0, clientID: "check") }, $0) == nil
                ? nil : "'accessories.zigbee2mqtt.broker' is '\($0)', not an mqtt[s]://host[:port] address"
        }
        username = file.value(.username)
        if let path: String = file.value(.passwordFile) {
            password = firstLine(ofFile: path)
            if password == nil {
                file.report(
                    at: .passwordFile, "'accessories.zigbee2mqtt.passwordFile' ('\(path)') cannot be read",
                    fix: "a file whose first line is the password, readable by the gateway's user")
            }
        }
        file.read(&account, .account, fix: "the username zigbee2mqtt connects with, by default zigbee2mqtt") {
            $0.isEmpty || $0.contains(where: { "/+#".contains($0) })
                ? "'accessories.zigbee2mqtt.account' must be a broker account name" : nil
        }
    }
}

extension GatewayConfiguration.CommandSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case defaultAccount, timeout, rateLimit
    }

    enum RateLimitKeys: String, CodingKey, CaseIterable {
        case perSecond, burst
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        file.readOrNull(
            &defaultAccount, .defaultAccount, fix: "name an account, or write null to refuse commands without one"
        ) { $0.isEmpty ? "'commands.defaultAccount' is empty" : nil }
        timeout =
            file.seconds(.timeout, example: 10) {
                $0 > 0 ? nil : "'commands.timeout' is \($0) seconds; it must be more than 0"
            } ?? timeout
        rateLimit =
            file.isNull(.rateLimit) ? nil : file.section(.rateLimit, RateLimitKeys.self, Self.rateLimit) ?? rateLimit
    }

    /// `commands.rateLimit`: `perSecond` (more than 0) and `burst` (at least 1), each defaulting to
    /// `RateLimit.standard`'s.
    private static func rateLimit(_ file: ConfigurationSection<RateLimitKeys>) -> RateLimit {
        var limit = RateLimit.standard
        file.read(&limit.perSecond, .perSecond, fix: "use 50, or write 'rateLimit: null' to turn the limit off") {
            $0 > 0 && $0.isFinite ? nil : "'commands.rateLimit.perSecond' is \($0); it must be more than 0"
        }
        file.read(&limit.burst, .burst) { $0 >= 1 ? nil : "'commands.rateLimit.burst' is \($0); it must be at least 1" }
        return limit
    }
}

extension GatewayConfiguration.AccessSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case dynamicSecurity, aclFile, bridgeClientID
    }

    enum DynamicSecurityKeys: String, CodingKey, CaseIterable {
        case enabled
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        dynamicSecurity =
            file.section(.dynamicSecurity, DynamicSecurityKeys.self) { $0.value(.enabled) ?? false } ?? false
        file.readOrNull(&aclFile, .aclFile)
        file.readOrNull(
            &bridgeClientID, .bridgeClientID,
            fix: "use the bridge's remote_clientid from the hub's mosquitto.conf, e.g. hub1"
        ) { id in
            AccessRules.problem(with: id, as: "bridge client id").map {
                "'access.bridgeClientID' '\(id)' cannot be used: \($0)"
            }
        }
    }
}

extension GatewayConfiguration.HomeSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case creators
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        guard !file.isNull(.creators) else { return }
        creators = file.list(
            .creators, example: ["owner"], fix: "write the MQTT usernames of the accounts that may add homes"
        ) { account in
            problem(AccountName.validate, account).map { "'\(account)' in 'homes.creators' is no account: \($0)" }
        }
    }
}

extension GatewayConfiguration.HomeAssistantSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, discoveryPrefix, account, nodeId
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        file.read(&enabled, .enabled)
        file.read(&discoveryPrefix, .discoveryPrefix, fix: "use homeassistant") {
            problem(BaseTopic.validate, $0).map { "homeAssistant.discoveryPrefix: \($0)" }
        }
        file.read(&account, .account, fix: "use homeassistant") {
            $0.isEmpty || $0.contains(where: { "+#/".contains($0) })
                ? "'homeAssistant.account' must be an MQTT username without '+', '#' or '/'" : nil
        }
        file.read(&nodeId, .nodeId, fix: "use homegate") { nodeId in
            !nodeId.isEmpty && nodeId.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) }
                ? nil : "'homeAssistant.nodeId' is '\(nodeId)'; Home Assistant allows only letters, digits, '_' and '-'"
        }
    }
}

extension GatewayConfiguration.WebSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case listen, sessionLifetime, behindProxy, hosts
    }

    /// `web.listen` is `host:port` (`[v6]:port` for IPv6).
    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        let listen: String? = file.value(.listen, fix: "use 127.0.0.1:8080 (or [::1]:8080), or web: null for no page") {
            GatewayConfiguration.hostAndPort($0) != nil
                ? nil : "'web.listen' is '\($0)'; it must be host:port with a port 0...65535"
        }
        (host, port) = listen.flatMap(GatewayConfiguration.hostAndPort) ?? (host, port)
        sessionLifetime =
            file.seconds(.sessionLifetime, example: 43_200, fix: "use 43200 (twelve hours)") {
                (60...30 * 86_400).contains($0)
                    ? nil : "'web.sessionLifetime' is \($0) seconds; it must be 60...2592000"
            } ?? sessionLifetime
        file.read(&behindProxy, .behindProxy)
        hosts =
            file.list(
                .hosts, example: ["hub.example.org", "hub.home.arpa"],
                fix: "list the names the page is opened by, without scheme or port: [hub.example.org]"
            ) { HostName.isValid($0) ? nil : "'\($0)' in 'web.hosts' is not a host name or an IP address" } ?? hosts
    }
}

extension GatewayConfiguration.HistorySettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, rawDays, hourlyDays, maxMegabytes
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        file.read(&enabled, .enabled)
        file.read(&rawDays, .rawDays, within: 1...365, unit: " days")
        file.read(&hourlyDays, .hourlyDays, within: 1...3650, unit: " days")
        if hourlyDays < rawDays {
            file.report(
                at: .hourlyDays,
                "'history.hourlyDays' (\(hourlyDays)) is shorter than 'history.rawDays' (\(rawDays)): the hours of the last raw days would go first",
                fix: "make hourlyDays at least rawDays, e.g. 365")
        }
        file.read(&maxMegabytes, .maxMegabytes, within: 1...102_400)
    }
}

extension GatewayConfiguration.LoggingSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case level
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        let names = Logger.Level.allCases.map(\.rawValue)
        let level = file.text(
            .level, overriddenBy: "HOMEGATE_LOG_LEVEL", fix: "use one of: \(names.joined(separator: ", "))"
        ) {
            guard Logger.Level(rawValue: $0.lowercased()) == nil else { return nil }
            let suggestion = ConfigurationDecoding.nearest(to: $0, in: names).map { "; did you mean '\($0)'?" }
            return "unknown log level '\($0)'\(suggestion ?? "")"
        }
        self.level = level.flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? self.level
    }
}

/// The first line of a file (a password kept out of the config), or nil when it cannot be read.
private func firstLine(ofFile path: String) -> String? {
    (try? String(contentsOfFile: path, encoding: .utf8)).map {
        String($0.split(separator: "\n", omittingEmptySubsequences: false)[0])
    }
}
