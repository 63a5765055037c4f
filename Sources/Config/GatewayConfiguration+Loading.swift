import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import VirtualDevices
import Yams

extension GatewayConfiguration {
    /// Reads the config file at `file`, applies the overrides from `environment` and checks every
    /// value. Throws all the problems found together, each with its line and column and a fix.
    package static func load(
        file: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationErrors) -> GatewayConfiguration {
        guard let data = FileManager.default.contents(atPath: file) else {
            let exists = FileManager.default.fileExists(atPath: file)
            throw ConfigurationErrors([
                ConfigurationError(
                    .missingFile, at: .wholeFile(file),
                    exists ? "the config file cannot be read" : "the config file does not exist",
                    fix: exists
                        ? "let the gateway's user read it (chmod/chown)"
                        : "copy Config/homegate.yml there, or pass the right path with --config")
            ])
        }
        guard let yaml = String(data: data, encoding: .utf8) else {
            throw ConfigurationErrors([
                ConfigurationError(
                    .syntax, at: .wholeFile(file), "the config file is not UTF-8 text", fix: "save it as UTF-8")
            ])
        }
        return try parse(yaml: yaml, file: file, environment: environment)
    }

    /// Reads config text as `load` does; `file` names it in the problems and anchors relative paths
    /// nowhere (paths are taken as written).
    package static func parse(
        yaml: String, file: String, environment: [String: String] = [:]
    ) throws(ConfigurationErrors) -> GatewayConfiguration {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationErrors([syntaxError(error, file: file)])
        }
        var loader = Loader(reader: ConfigurationReader(file: file), environment: environment)
        let configuration = loader.read(root)
        guard loader.reader.errors.isEmpty else {
            let byLine = loader.reader.errors.enumerated().sorted {
                ($0.element.location.line ?? .max, $0.offset) < ($1.element.location.line ?? .max, $1.offset)
            }
            throw ConfigurationErrors(byLine.map(\.element))
        }
        return configuration
    }

    private static func syntaxError(_ error: any Error, file: String) -> ConfigurationError {
        let fix =
            "check the indentation and quoting at that place (quote values that contain ': ' or start with '{', '[', '*', '&' or '#')"
        guard let error = error as? YamlError else {
            return ConfigurationError(.syntax, at: .wholeFile(file), "\(error)", fix: fix)
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let message = context.map { "\(problem) (\($0.text) at line \($0.mark.line))" } ?? problem
            return ConfigurationError(
                .syntax, at: .file(file, line: mark.line, column: mark.column), "invalid YAML: \(message)", fix: fix)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ConfigurationError(
                .syntax, at: .file(file, line: context.mark.line, column: context.mark.column),
                "the key(s) \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) appear more than once in one section",
                fix: "keep one of each; the gateway would not know which one you meant")
        case .reader(let problem, _, _, _):
            return ConfigurationError(
                .syntax, at: .wholeFile(file), "invalid YAML: \(problem)", fix: "save it as UTF-8 text")
        default:
            return ConfigurationError(.syntax, at: .wholeFile(file), "invalid YAML: \(error)", fix: fix)
        }
    }
}

/// A value and where it came from, so a check after the environment overrides can point at the
/// right place.
private struct Located<Value> {
    var value: Value
    var location: ConfigurationError.Location
}

/// Reads the sections in the order of the sample file, then applies the environment and checks the
/// values that depend on it.
private struct Loader {
    var reader: ConfigurationReader
    let environment: [String: String]

    mutating func read(_ root: Node?) -> GatewayConfiguration {
        var configuration = GatewayConfiguration()
        let top = reader.section(
            root, path: "",
            keys: ["mqtt", "data", "accessories", "commands", "access", "homes", "homeAssistant", "logging", "web"])
        readMQTT(top["mqtt"]?.value, into: &configuration.mqtt)
        readData(top["data"]?.value, into: &configuration.data)
        readAccessories(top["accessories"]?.value, into: &configuration.accessories)
        readCommands(top["commands"]?.value, into: &configuration.commands)
        readAccess(top["access"]?.value, into: &configuration.access)
        readHomes(top["homes"]?.value, into: &configuration.homes)
        readHomeAssistant(top["homeAssistant"]?.value, into: &configuration.homeAssistant)
        readLogging(top["logging"]?.value, into: &configuration.logging)
        readWeb(top["web"], into: &configuration.web)
        checkZigbee2MQTTTopics(configuration, at: top["accessories"]?.value)
        return configuration
    }

    /// zigbee2mqtt's base topic must be its own: the access rules give zigbee2mqtt's account
    /// everything under it, so it must not take in the gateway's topics or Home Assistant's.
    private mutating func checkZigbee2MQTTTopics(_ configuration: GatewayConfiguration, at node: Node?) {
        guard let zigbee = configuration.accessories.zigbee2mqtt, zigbee.broker == nil else { return }
        var others = [("mqtt.baseTopic", configuration.mqtt.baseTopic)]
        if configuration.homeAssistant.enabled {
            others.append(("homeAssistant.discoveryPrefix", configuration.homeAssistant.discoveryPrefix))
        }
        for (key, topic) in others where Self.overlaps(zigbee.baseTopic, topic) {
            reader.report(
                .invalidValue, at: node,
                "'accessories.zigbee2mqtt.baseTopic' ('\(zigbee.baseTopic)') overlaps '\(key)' ('\(topic)'): zigbee2mqtt's account would get the gateway's topics",
                fix: "use zigbee2mqtt's own base topic, by default zigbee2mqtt")
        }
    }

    /// Whether one topic tree contains the other (`a` is `b`, or one is a level prefix of the other).
    static func overlaps(_ a: String, _ b: String) -> Bool {
        a == b || a.hasPrefix(b + "/") || b.hasPrefix(a + "/")
    }

    // MARK: Environment

    /// The environment's value for `variable` if set (and not empty), else the file's.
    private func overridden(
        _ variable: String, _ fromFile: Located<String>?
    ) -> Located<String>? {
        if let value = environment[variable], !value.isEmpty {
            return Located(value: value, location: .environment(variable))
        }
        return fromFile
    }

    private mutating func fileString(_ entry: (key: Node, value: Node)?, _ path: String) -> Located<String>? {
        guard let entry, let value = reader.string(entry.value, path) else { return nil }
        return Located(value: value, location: reader.location(of: entry.value))
    }

    private mutating func invalid(_ location: ConfigurationError.Location, _ message: String, fix: String) {
        reader.report(ConfigurationError(.invalidValue, at: location, message, fix: fix))
    }

    /// Reports a file that the configuration names but that cannot be read.
    private mutating func checkReadable(_ path: String, _ key: String, at node: Node) {
        guard !FileManager.default.isReadableFile(atPath: path) else { return }
        let exists = FileManager.default.fileExists(atPath: path)
        reader.report(
            .unreadableFile, at: node,
            "'\(key)' names '\(path)', which \(exists ? "the gateway may not read" : "does not exist")",
            fix: exists ? "let the gateway's user read it (chmod/chown)" : "correct the path or create the file")
    }

    // MARK: Sections

    private mutating func readMQTT(_ node: Node?, into mqtt: inout GatewayConfiguration.MQTTSettings) {
        let keys = [
            "broker", "brokers", "clientId", "username", "password", "passwordFile", "baseTopic", "keepAlive",
            "connectTimeout", "protocolVersion", "eventsQoS", "tls",
        ]
        let section = reader.section(node, path: "mqtt", keys: keys)

        if let clientId = reader.string(section["clientId"]?.value, "mqtt.clientId") {
            if clientId.isEmpty || clientId.utf8.count > 65535 {
                reader.report(
                    .invalidValue, at: section["clientId"]?.value, "'mqtt.clientId' must not be empty",
                    fix: "use a name unique on the broker, e.g. homegate")
            } else {
                mqtt.clientId = clientId
            }
        }
        if let keepAlive = reader.int(section["keepAlive"]?.value, "mqtt.keepAlive") {
            if keepAlive != 0 && !(5...65535).contains(keepAlive) {
                reader.report(
                    .invalidValue, at: section["keepAlive"]?.value,
                    "'mqtt.keepAlive' is \(keepAlive) seconds; libmosquitto takes 0 (off) or 5 to 65535",
                    fix: "use 30, or leave it out for the default")
            } else {
                mqtt.keepAlive = keepAlive
            }
        }
        if let timeout = reader.int(section["connectTimeout"]?.value, "mqtt.connectTimeout") {
            if !(1...3600).contains(timeout) {
                reader.report(
                    .invalidValue, at: section["connectTimeout"]?.value,
                    "'mqtt.connectTimeout' is \(timeout) seconds; it must be between 1 and 3600",
                    fix: "use 10, or leave it out for the default")
            } else {
                mqtt.connectTimeout = timeout
            }
        }
        if let qos = reader.int(section["eventsQoS"]?.value, "mqtt.eventsQoS") {
            switch qos {
            case 0: mqtt.eventsQoS = .atMostOnce
            case 1: mqtt.eventsQoS = .atLeastOnce
            default:
                reader.report(
                    .invalidValue, at: section["eventsQoS"]?.value,
                    "'mqtt.eventsQoS' is \(qos); $events go at QoS 0 or 1",
                    fix: "write 1 to have them queued for a persistent session, or leave it out for 0")
            }
        }
        if let node = section["protocolVersion"]?.value {
            switch node.scalar?.string {
            case "5", "5.0": mqtt.protocolVersion = .v5
            case "3.1.1", "311", "4": mqtt.protocolVersion = .v311
            default:
                reader.report(
                    .invalidValue, at: node,
                    "'mqtt.protocolVersion' is '\(node.scalar?.string ?? "a section")'; homegate speaks MQTT 5 and 3.1.1",
                    fix: "write 5, or \"3.1.1\" for an older broker")
            }
        }

        if let username = overridden("HOMEGATE_MQTT_USERNAME", fileString(section["username"], "mqtt.username")) {
            mqtt.username = username.value
        }
        if let entry = section["passwordFile"], let path = reader.string(entry.value, "mqtt.passwordFile") {
            mqtt.passwordFile = path
            if environment["HOMEGATE_MQTT_PASSWORD"]?.isEmpty ?? true {
                if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                    mqtt.password = String(text.split(separator: "\n", omittingEmptySubsequences: false)[0])
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                } else {
                    checkReadable(path, "mqtt.passwordFile", at: entry.value)
                }
            }
            if section["password"] != nil {
                reader.report(
                    .invalidValue, at: entry.key, "'mqtt.password' and 'mqtt.passwordFile' are both set",
                    fix: "keep one; passwordFile keeps the secret out of this file")
            }
        }
        if let password = overridden("HOMEGATE_MQTT_PASSWORD", fileString(section["password"], "mqtt.password")) {
            mqtt.password = password.value
        }
        if mqtt.password != nil && mqtt.username == nil {
            reader.report(
                .invalidValue, at: (section["password"] ?? section["passwordFile"])?.key,
                "a password is set but no 'mqtt.username'", fix: "add 'username:' to the mqtt section")
        }

        if let base = overridden("HOMEGATE_MQTT_BASE_TOPIC", fileString(section["baseTopic"], "mqtt.baseTopic")) {
            do {
                try BaseTopic.validate(base.value)
                mqtt.baseTopic = base.value
            } catch {
                invalid(base.location, "\(error)", fix: "use a plain topic such as 'homegate' or 'site1/homegate'")
            }
        }

        var brokerLocation = reader.location(of: nil)
        var brokerIsValid = true
        var brokers: [Located<String>] = []
        if let entry = section["brokers"] {
            if section["broker"] != nil {
                reader.report(
                    .invalidValue, at: entry.key, "'mqtt.broker' and 'mqtt.brokers' are both set",
                    fix: "keep one: brokers lists several in order of preference, broker names one")
            }
            if let sequence = entry.value.sequence, !sequence.isEmpty {
                for item in sequence {
                    if let url = reader.string(item, "mqtt.brokers") {
                        brokers.append(Located(value: url, location: reader.location(of: item)))
                    }
                }
            } else {
                reader.report(
                    .wrongType, at: entry.value, "'mqtt.brokers' must be a list of mqtt[s]://host[:port]",
                    fix: "write e.g. [\"mqtt://hub.local:1883\", \"mqtt://backup.local:1883\"]")
                brokerIsValid = false
            }
        } else if let broker = fileString(section["broker"], "mqtt.broker") {
            brokers = [broker]
        }
        if let variable = environment["HOMEGATE_MQTT_BROKER"], !variable.isEmpty {
            brokers = variable.split(separator: ",", omittingEmptySubsequences: false).map {
                Located(value: $0.trimmingCharacters(in: .whitespaces), location: .environment("HOMEGATE_MQTT_BROKER"))
            }
        }
        if !brokers.isEmpty {
            brokerLocation = brokers[0].location
            for broker in brokers {
                do {
                    _ = try MQTTConfiguration(brokerURL: broker.value, clientID: "check")
                } catch {
                    invalid(broker.location, error.message, fix: "write mqtt://host:1883 or mqtts://host:8883")
                    brokerIsValid = false
                }
            }
            if brokerIsValid {
                do {
                    _ = try MQTTConfiguration(brokerURLs: brokers.map(\.value), clientID: "check")
                    mqtt.brokers = brokers.map(\.value)
                } catch {
                    invalid(brokers[0].location, error.message, fix: "make them all mqtt:// or all mqtts://")
                    brokerIsValid = false
                }
            }
        }

        if let entry = section["tls"] {
            readTLS(entry, into: &mqtt)
            if mqtt.tls != nil, brokerIsValid, !mqtt.broker.lowercased().hasPrefix("mqtts://") {
                reader.report(
                    .invalidValue, at: entry.key,
                    "'mqtt.tls' is set but the broker '\(mqtt.broker)' is plain MQTT (\(brokerLocation))",
                    fix: "use an mqtts:// broker address, or remove the tls section")
            }
        }
    }

    private mutating func readTLS(
        _ entry: (key: Node, value: Node), into mqtt: inout GatewayConfiguration.MQTTSettings
    ) {
        let section = reader.section(
            entry.value, path: "mqtt.tls", keys: ["caFile", "certificateFile", "keyFile", "verifyServer"])
        guard entry.value.kind != .null else { return }
        var tls = GatewayConfiguration.TLSSettings()
        for (key, path) in [
            ("caFile", \GatewayConfiguration.TLSSettings.caFile), ("certificateFile", \.certificateFile),
            ("keyFile", \.keyFile),
        ] {
            guard let node = section[key]?.value, let file = reader.string(node, "mqtt.tls.\(key)") else { continue }
            checkReadable(file, "mqtt.tls.\(key)", at: node)
            tls[keyPath: path] = file
        }
        if (tls.certificateFile == nil) != (tls.keyFile == nil) {
            reader.report(
                .invalidValue, at: entry.key, "'mqtt.tls' needs both certificateFile and keyFile, or neither",
                fix: "add the missing one, or remove the other")
        }
        if let verify = reader.bool(section["verifyServer"]?.value, "mqtt.tls.verifyServer") {
            tls.verifyServer = verify
        }
        mqtt.tls = tls
    }

    private mutating func readData(_ node: Node?, into data: inout GatewayConfiguration.DataSettings) {
        let section = reader.section(node, path: "data", keys: ["directory", "inMemory", "valueCommitWindow"])
        if let directory = overridden("HOMEGATE_DATA_DIRECTORY", fileString(section["directory"], "data.directory")) {
            if directory.value.isEmpty {
                invalid(directory.location, "'data.directory' is empty", fix: "use e.g. /var/lib/homegate")
            } else {
                data.directory = directory.value
            }
        }
        if let inMemory = reader.bool(section["inMemory"]?.value, "data.inMemory") {
            data.inMemory = inMemory
        }
        if let window = reader.number(section["valueCommitWindow"]?.value, "data.valueCommitWindow") {
            if window < 0 || window > 5 {
                reader.report(
                    .invalidValue, at: section["valueCommitWindow"]?.value,
                    "'data.valueCommitWindow' is \(window) seconds; it must be 0...5",
                    fix:
                        "use 0.1 (a power cut loses at most that much of device values), or 0 to write each value before its answer"
                )
            } else {
                data.valueCommitWindow = .milliseconds(Int64((window * 1000).rounded()))
            }
        }
    }

    private mutating func readAccessories(
        _ node: Node?, into accessories: inout GatewayConfiguration.AccessorySettings
    ) {
        let section = reader.section(node, path: "accessories", keys: ["virtual", "zigbee2mqtt", "hap"])
        if let node = section["virtual"]?.value, let path = reader.optionalString(node, "accessories.virtual") {
            if let path { checkReadable(path, "accessories.virtual", at: node) }
            accessories.virtual = path
        }
        if let node = section["zigbee2mqtt"]?.value, node.kind != .null {
            accessories.zigbee2mqtt = readZigbee2MQTT(node)
        }
        if let node = section["hap"]?.value, node.kind != .null {
            accessories.hap = readHAP(node)
        }
    }

    private mutating func readHAP(_ node: Node) -> GatewayConfiguration.HAPSettings {
        var settings = GatewayConfiguration.HAPSettings()
        let section = reader.section(node, path: "accessories.hap", keys: ["discovery", "accessories"])
        if let discovery = reader.bool(section["discovery"]?.value, "accessories.hap.discovery") {
            settings.discovery = discovery
        }
        guard let list = section["accessories"]?.value, list.kind != .null else { return settings }
        guard let sequence = list.sequence else {
            reader.report(
                .wrongType, at: list, "'accessories.hap.accessories' must be a list of host:port",
                fix: "write e.g. [\"192.168.1.20:51826\"]")
            return settings
        }
        for item in sequence {
            guard let entry = reader.string(item, "accessories.hap.accessories") else { continue }
            if let (_, port) = GatewayConfiguration.hostAndPort(entry), port > 0 {
                settings.accessories.append(entry)
            } else {
                reader.report(
                    .invalidValue, at: item, "'\(entry)' in 'accessories.hap.accessories' is not host:port",
                    fix: "write the accessory's address and HAP port, e.g. 192.168.1.20:51826")
            }
        }
        return settings
    }

    private mutating func readZigbee2MQTT(_ node: Node) -> GatewayConfiguration.Zigbee2MQTTSettings {
        var settings = GatewayConfiguration.Zigbee2MQTTSettings()
        let path = "accessories.zigbee2mqtt"
        let section = reader.section(
            node, path: path, keys: ["baseTopic", "broker", "username", "passwordFile", "account"])
        if let entry = section["baseTopic"], let base = reader.string(entry.value, "\(path).baseTopic") {
            do throws(GatewayConfigurationError) {
                try BaseTopic.validate(base)
                settings.baseTopic = base
            } catch {
                reader.report(
                    .invalidValue, at: entry.value, "'\(path).baseTopic': \(error)",
                    fix: "use zigbee2mqtt's mqtt.base_topic, by default zigbee2mqtt")
            }
        }
        if let entry = section["broker"], let broker = reader.string(entry.value, "\(path).broker") {
            if (try? MQTTConfiguration(brokerURL: broker, clientID: "check")) == nil {
                reader.report(
                    .invalidValue, at: entry.value,
                    "'\(path).broker' is '\(broker)', not an mqtt[s]://host[:port] address",
                    fix: "e.g. mqtt://192.168.1.20:1883, or leave it out for the gateway's own broker")
            } else {
                settings.broker = broker
            }
        }
        if let entry = section["username"], let username = reader.string(entry.value, "\(path).username") {
            settings.username = username
        }
        if let entry = section["passwordFile"], let file = reader.string(entry.value, "\(path).passwordFile") {
            if let text = try? String(contentsOfFile: file, encoding: .utf8) {
                settings.password = String(text.split(separator: "\n", omittingEmptySubsequences: false)[0])
            } else {
                reader.report(
                    .invalidValue, at: entry.value, "'\(path).passwordFile' ('\(file)') cannot be read",
                    fix: "a file whose first line is the password, readable by the gateway's user")
            }
        }
        if let entry = section["account"], let account = reader.string(entry.value, "\(path).account") {
            if account.isEmpty || account.contains(where: { $0 == "/" || $0 == "+" || $0 == "#" }) {
                reader.report(
                    .invalidValue, at: entry.value, "'\(path).account' must be a broker account name",
                    fix: "the username zigbee2mqtt connects with, by default zigbee2mqtt")
            } else {
                settings.account = account
            }
        }
        return settings
    }

    private mutating func readCommands(_ node: Node?, into commands: inout GatewayConfiguration.CommandSettings) {
        let section = reader.section(node, path: "commands", keys: ["defaultAccount", "timeout", "rateLimit"])
        if let node = section["defaultAccount"]?.value,
            let account = reader.optionalString(node, "commands.defaultAccount")
        {
            if account?.isEmpty == true {
                reader.report(
                    .invalidValue, at: node, "'commands.defaultAccount' is empty",
                    fix: "name an account, or write null to refuse commands without one")
            } else {
                commands.defaultAccount = account
            }
        }
        if let timeout = reader.number(section["timeout"]?.value, "commands.timeout") {
            if timeout <= 0 {
                reader.report(
                    .invalidValue, at: section["timeout"]?.value,
                    "'commands.timeout' is \(timeout) seconds; it must be more than 0",
                    fix: "use 10, or leave it out for the default")
            } else {
                commands.timeout = .milliseconds(Int64((timeout * 1000).rounded()))
            }
        }
        if let entry = section["rateLimit"] { commands.rateLimit = reader.readRateLimit(entry) }
    }

    private mutating func readAccess(_ node: Node?, into access: inout GatewayConfiguration.AccessSettings) {
        let section = reader.section(node, path: "access", keys: ["dynamicSecurity", "aclFile", "bridgeClientID"])
        let dynamic = reader.section(
            section["dynamicSecurity"]?.value, path: "access.dynamicSecurity", keys: ["enabled"])
        if let enabled = reader.bool(dynamic["enabled"]?.value, "access.dynamicSecurity.enabled") {
            access.dynamicSecurity = enabled
        }
        if let node = section["aclFile"]?.value, let path = reader.optionalString(node, "access.aclFile") {
            access.aclFile = path
        }
        if let node = section["bridgeClientID"]?.value,
            let clientID = reader.optionalString(node, "access.bridgeClientID")
        {
            if let clientID, let problem = AccessRules.problem(with: clientID, as: "bridge client id") {
                reader.report(
                    .invalidValue, at: node, "'access.bridgeClientID' '\(clientID)' cannot be used: \(problem)",
                    fix: "use the bridge's remote_clientid from the hub's mosquitto.conf, e.g. hub1")
            } else {
                access.bridgeClientID = clientID
            }
        }
    }

    private mutating func readHomes(_ node: Node?, into homes: inout GatewayConfiguration.HomeSettings) {
        let section = reader.section(node, path: "homes", keys: ["creators"])
        guard let node = section["creators"]?.value, node.kind != .null else { return }
        guard let sequence = node.sequence else {
            reader.report(
                .wrongType, at: node, "'homes.creators' must be a list of accounts",
                fix: "write the accounts as a list, e.g. [owner], or null for the administrators of the homes")
            return
        }
        var creators: [String] = []
        for item in sequence {
            guard let account = reader.string(item, "homes.creators") else { continue }
            do {
                try AccountName.validate(account)
                creators.append(account)
            } catch {
                reader.report(
                    .invalidValue, at: item, "'\(account)' in 'homes.creators' is no account: \(error.message)",
                    fix: "write the MQTT usernames of the accounts that may add homes")
            }
        }
        homes.creators = creators
    }

    private mutating func readHomeAssistant(
        _ node: Node?, into homeAssistant: inout GatewayConfiguration.HomeAssistantSettings
    ) {
        let section = reader.section(
            node, path: "homeAssistant", keys: ["enabled", "discoveryPrefix", "account", "nodeId"])
        if let enabled = reader.bool(section["enabled"]?.value, "homeAssistant.enabled") {
            homeAssistant.enabled = enabled
        }
        if let node = section["discoveryPrefix"]?.value,
            let prefix = reader.string(node, "homeAssistant.discoveryPrefix")
        {
            do {
                try BaseTopic.validate(prefix)
                homeAssistant.discoveryPrefix = prefix
            } catch {
                reader.report(
                    .invalidValue, at: node, "homeAssistant.discoveryPrefix: \(error)", fix: "use homeassistant")
            }
        }
        if let node = section["account"]?.value, let account = reader.string(node, "homeAssistant.account") {
            if account.isEmpty || account.contains(where: { "+#/".contains($0) }) {
                reader.report(
                    .invalidValue, at: node, "'homeAssistant.account' must be an MQTT username without '+', '#' or '/'",
                    fix: "use homeassistant")
            } else {
                homeAssistant.account = account
            }
        }
        if let node = section["nodeId"]?.value, let nodeId = reader.string(node, "homeAssistant.nodeId") {
            let allowed = nodeId.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            if nodeId.isEmpty || !allowed {
                reader.report(
                    .invalidValue, at: node,
                    "'homeAssistant.nodeId' is '\(nodeId)'; Home Assistant allows only letters, digits, '_' and '-'",
                    fix: "use homegate")
            } else {
                homeAssistant.nodeId = nodeId
            }
        }
    }

    /// `web: null` turns the page off; `web.listen` is `host:port` (`[v6]:port` for IPv6).
    private mutating func readWeb(
        _ entry: (key: Node, value: Node)?, into web: inout GatewayConfiguration.WebSettings?
    ) {
        guard let entry else { return }
        if entry.value.kind == .null {
            web = nil
            return
        }
        var settings = GatewayConfiguration.WebSettings()
        let section = reader.section(
            entry.value, path: "web", keys: ["listen", "sessionLifetime", "behindProxy", "hosts"])
        if let node = section["listen"]?.value, let listen = reader.string(node, "web.listen") {
            if let (host, port) = GatewayConfiguration.hostAndPort(listen) {
                settings.host = host
                settings.port = port
            } else {
                reader.report(
                    .invalidValue, at: node, "'web.listen' is '\(listen)'; it must be host:port with a port 0...65535",
                    fix: "use 127.0.0.1:8080 (or [::1]:8080), or web: null for no page")
            }
        }
        if let node = section["sessionLifetime"]?.value, let seconds = reader.number(node, "web.sessionLifetime") {
            if seconds < 60 || seconds > 30 * 86_400 {
                reader.report(
                    .invalidValue, at: node, "'web.sessionLifetime' is \(seconds) seconds; it must be 60...2592000",
                    fix: "use 43200 (twelve hours)")
            } else {
                settings.sessionLifetime = .seconds(seconds)
            }
        }
        if let behindProxy = reader.bool(section["behindProxy"]?.value, "web.behindProxy") {
            settings.behindProxy = behindProxy
        }
        if let node = section["hosts"]?.value {
            if let sequence = node.sequence {
                for item in sequence {
                    guard let name = reader.string(item, "web.hosts") else { continue }
                    if HostName.isValid(name) {
                        settings.hosts.append(name)
                    } else {
                        reader.report(
                            .invalidValue, at: item, "'\(name)' in 'web.hosts' is not a host name or an IP address",
                            fix: "list the names the page is opened by, without scheme or port: [hub.example.org]")
                    }
                }
            } else {
                reader.report(
                    .wrongType, at: node, "'web.hosts' must be a list of host names",
                    fix: "write e.g. [hub.example.org, hub.home.arpa]")
            }
        }
        web = settings
    }

    private mutating func readLogging(_ node: Node?, into logging: inout GatewayConfiguration.LoggingSettings) {
        let section = reader.section(node, path: "logging", keys: ["level"])
        guard let level = overridden("HOMEGATE_LOG_LEVEL", fileString(section["level"], "logging.level")) else {
            return
        }
        if let value = Logger.Level(rawValue: level.value.lowercased()) {
            logging.level = value
        } else {
            let names = Logger.Level.allCases.map(\.rawValue)
            let suggestion = ConfigurationReader.nearest(to: level.value, in: names)
            invalid(
                level.location,
                "unknown log level '\(level.value)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? ""),
                fix: "use one of: \(names.joined(separator: ", "))")
        }
    }
}

extension GatewayConfiguration {
    /// `host:port` or `[v6]:port` split, or nil when it is neither.
    static func hostAndPort(_ listen: String) -> (String, Int)? {
        let host: Substring
        let portText: Substring
        if listen.hasPrefix("["), let close = listen.firstIndex(of: "]") {
            host = listen[listen.index(after: listen.startIndex)..<close]
            let rest = listen[listen.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = listen.lastIndex(of: ":") else { return nil }
            host = listen[..<colon]
            portText = listen[listen.index(after: colon)...]
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), let port = Int(portText),
            (0...65_535).contains(port)
        else { return nil }
        return (String(host), port)
    }
}
