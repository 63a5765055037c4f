import Config
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import Testing

/// The sample config checked in at Config/homegate.yml.
let sampleConfiguration = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Config/homegate.yml").path

extension GatewayConfiguration.WebSettings {
    /// `host:port` as `web.listen` writes it.
    var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The problems `yaml` has, or none. The file is named `homegate.yml` in the locations.
private func problems(_ yaml: String, environment: [String: String] = [:]) -> [ConfigurationError] {
    do {
        _ = try GatewayConfiguration.parse(yaml: yaml, file: "homegate.yml", environment: environment)
        return []
    } catch {
        return error.errors
    }
}

/// The only problem `yaml` has; records an issue when there are none or several.
private func problem(
    _ yaml: String, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
) throws -> ConfigurationError {
    let found = problems(yaml, environment: environment)
    #expect(found.count == 1, "problems: \(found)", sourceLocation: sourceLocation)
    return try #require(found.first, sourceLocation: sourceLocation)
}

@Suite("Configuration")
struct ConfigurationTests {
    @Test("the sample config loads without problems and says what the defaults are")
    func sampleLoads() throws {
        // Given the sample config, with no environment overrides
        // When it is loaded
        let configuration = try GatewayConfiguration.load(file: sampleConfiguration, environment: [:])

        // Then it is the default configuration plus the sample's username
        var expected = GatewayConfiguration()
        expected.mqtt.username = "homegate"
        #expect(configuration == expected)
    }

    @Test("the sample config mentions every key")
    func sampleMentionsEveryKey() throws {
        // Given the sample's text
        let text = try String(contentsOfFile: sampleConfiguration, encoding: .utf8)

        // Then every key the loader knows is written in it, set or commented out
        let keys = [
            "mqtt", "broker", "brokers", "clientId", "username", "password", "passwordFile", "baseTopic", "keepAlive",
            "connectTimeout", "protocolVersion", "eventsQoS", "tls", "caFile", "certificateFile", "keyFile",
            "verifyServer", "data",
            "directory",
            "accessories", "virtual", "commands", "defaultAccount", "timeout", "access", "dynamicSecurity", "enabled",
            "aclFile", "homes", "creators", "homeAssistant", "discoveryPrefix", "account", "nodeId", "logging", "level",
            "history", "rawDays", "hourlyDays", "maxMegabytes",
        ]
        for key in keys {
            #expect(text.contains("\(key):"), "the sample does not mention '\(key)'")
        }
    }

    @Test("an empty file is the default configuration")
    func emptyFile() throws {
        #expect(try GatewayConfiguration.parse(yaml: "", file: "homegate.yml") == GatewayConfiguration())
    }

    @Test("every key is read")
    func everyKey() throws {
        try withTemporaryFile("s3cret\nignored\n") { passwordFile in
            // Given a config that sets every key to something other than its default
            let yaml = """
                mqtt:
                  broker: mqtts://hub.local:8884
                  clientId: gw1
                  username: gateway
                  passwordFile: \(passwordFile)
                  baseTopic: site/homegate
                  keepAlive: 45
                  protocolVersion: "3.1.1"
                  eventsQoS: 1
                  tls: { caFile: \(passwordFile), verifyServer: false }
                data:
                  directory: /srv/homegate
                  inMemory: true
                accessories:
                  virtual: \(passwordFile)
                commands:
                  defaultAccount: alice
                  timeout: 2.5
                access:
                  dynamicSecurity:
                    enabled: true
                  aclFile: /etc/mosquitto/acl
                homes:
                  creators: [alice, bob]
                homeAssistant:
                  enabled: true
                  discoveryPrefix: ha
                  account: hass
                  nodeId: hub_1
                logging:
                  level: debug
                """

            // When it is read
            let configuration = try GatewayConfiguration.parse(yaml: yaml, file: "homegate.yml")

            // Then every setting is taken over, the password from the file's first line
            #expect(configuration.mqtt.password == "s3cret")
            #expect(configuration.mqtt.baseTopic == "site/homegate")
            #expect(configuration.mqtt.protocolVersion == .v311)
            #expect(configuration.mqtt.eventsQoS == .atLeastOnce)
            #expect(configuration.mqtt.tls?.caFile == passwordFile && configuration.mqtt.tls?.verifyServer == false)
            #expect(configuration.mqtt.tls?.certificateFile == nil && configuration.mqtt.tls?.keyFile == nil)
            #expect(configuration.data.databaseFile == "/srv/homegate/home.sqlite")
            #expect(configuration.data.inMemory)
            #expect(configuration.accessories.virtual == passwordFile)
            #expect(configuration.commands.defaultAccount == "alice")
            #expect(
                configuration.commands.timeout == .milliseconds(2500) && configuration.commands.rateLimit == .standard)
            #expect(configuration.access.dynamicSecurity)
            #expect(configuration.access.aclFile == "/etc/mosquitto/acl")
            #expect(configuration.homes.creators == ["alice", "bob"])
            #expect(configuration.homes.homeCreators == .accounts(["alice", "bob"]))
            let homeAssistant = configuration.homeAssistant
            #expect(homeAssistant.enabled && homeAssistant.discoveryPrefix == "ha")
            #expect(homeAssistant.account == "hass" && homeAssistant.nodeId == "hub_1")
            #expect(configuration.logging.level == .debug)

            // And the client settings follow from them
            let client = try configuration.mqttConfiguration()
            #expect(client.brokers == [.init(host: "hub.local", port: 8884)])
            #expect(client.clientID == "gw1")
            #expect(client.username == "gateway")
            #expect(client.password == "s3cret")
            #expect(client.keepAlive == .seconds(45))
            #expect(client.protocolVersion == .v311)
            #expect(client.tls == MQTTConfiguration.TLS(caFile: passwordFile, verifyServer: false))
        }
    }

    // MARK: One test per kind of problem

    @Test("accessories.zigbee2mqtt: defaults, another broker, and each bad value located")
    func zigbee2mqtt() throws {
        let defaults = try GatewayConfiguration.parse(
            yaml: "accessories:\n  zigbee2mqtt: {}\n", file: "homegate.yml", environment: [:])
        #expect(defaults.accessories.zigbee2mqtt == .init())
        let mqtt = try #require(try defaults.zigbee2mqttConfiguration())
        #expect(mqtt.clientID == "homegate-zigbee2mqtt" && mqtt.brokers[0].port == 1883)
        let off = try GatewayConfiguration.parse(
            yaml: "accessories:\n  zigbee2mqtt: null\n", file: "homegate.yml", environment: [:])
        #expect(off.accessories.zigbee2mqtt == nil)
        #expect(try off.zigbee2mqttConfiguration() == nil)

        let other = try GatewayConfiguration.parse(
            yaml:
                "accessories:\n  zigbee2mqtt:\n    baseTopic: z2m/home\n    broker: mqtt://10.0.0.2:1884\n    username: gw\n    account: zb\n",
            file: "homegate.yml", environment: [:])
        var expected = GatewayConfiguration.Zigbee2MQTTSettings()
        (expected.baseTopic, expected.broker, expected.username, expected.account) = (
            "z2m/home", "mqtt://10.0.0.2:1884", "gw", "zb"
        )
        #expect(other.accessories.zigbee2mqtt == expected)
        let otherMQTT = try #require(try other.zigbee2mqttConfiguration())
        #expect(otherMQTT.brokers == [.init(host: "10.0.0.2", port: 1884)] && otherMQTT.username == "gw")

        #expect(try problem("accessories:\n  zigbee2mqtt:\n    baseTopic: z2m/#\n").code == .invalidValue)
        #expect(try problem("mqtt:\n  eventsQoS: 2\n").code == .invalidValue)
        #expect(try problem("mqtt:\n  eventsQoS: one\n").code == .wrongType)
        #expect(try problem("accessories:\n  zigbee2mqtt:\n    broker: http://x\n").code == .invalidValue)
        #expect(try problem("accessories:\n  zigbee2mqtt:\n    account: a/b\n").code == .invalidValue)
        #expect(try problem("accessories:\n  zigbee2mqtt:\n    passwordFile: /nonexistent/pw\n").code == .invalidValue)
        #expect(try problem("accessories:\n  zigbee2mqtt:\n    baseTopic: homegate/zigbee\n").code == .invalidValue)
        #expect(
            try problem("homeAssistant:\n  enabled: true\naccessories:\n  zigbee2mqtt:\n    baseTopic: homeassistant\n")
                .code
                == .invalidValue)
        #expect(
            problems("accessories:\n  zigbee2mqtt:\n    baseTopic: homegate\n    broker: mqtt://10.0.0.2\n").isEmpty)
        let typo = try problem("accessories:\n  zigbee2mqtt:\n    baseTopik: z\n")
        #expect(typo.code == .unknownKey && typo.location.line == 3)
    }

    @Test("accessories.hap: off by default, discovery on with {}, fixed addresses checked one by one")
    func hap() throws {
        #expect(try GatewayConfiguration.parse(yaml: "", file: "homegate.yml", environment: [:]).accessories.hap == nil)
        let on = try GatewayConfiguration.parse(
            yaml: "accessories:\n  hap: {}\n", file: "homegate.yml", environment: [:])
        #expect(on.accessories.hap?.discovery == true && on.accessories.hap?.accessories == [])
        let fixed = try GatewayConfiguration.parse(
            yaml: "accessories:\n  hap:\n    discovery: false\n    accessories: [\"127.0.0.1:51826\", \"[::1]:9\"]\n",
            file: "homegate.yml", environment: [:])
        #expect(fixed.accessories.hap?.discovery == false)
        #expect(fixed.accessories.hap?.endpoints.map { "\($0.host) \($0.port)" } == ["127.0.0.1 51826", "::1 9"])
        let bad = try problem("accessories:\n  hap:\n    accessories: [\"hub\", \"10.0.0.2:51826\"]\n")
        #expect(bad.location.line == 3 && bad.message.contains("'hub'"))
        let notList = try problem("accessories:\n  hap:\n    accessories: hub:1\n")
        #expect(notList.code == .wrongType)
    }

    @Test("web: on at 127.0.0.1:8080 by default, off with null, IPv6 in brackets, and each bad value located")
    func web() throws {
        let defaults = try GatewayConfiguration.parse(yaml: "", file: "homegate.yml", environment: [:])
        #expect(defaults.web?.listen == "127.0.0.1:8080" && defaults.web?.sessionLifetime == .seconds(43_200))
        let off = try GatewayConfiguration.parse(yaml: "web: null\n", file: "homegate.yml", environment: [:])
        #expect(off.web == nil)
        let chosen = try GatewayConfiguration.parse(
            yaml: "web:\n  listen: \"[::1]:9090\"\n  sessionLifetime: 600\n", file: "homegate.yml", environment: [:])
        #expect(chosen.web?.listen == "[::1]:9090" && chosen.web?.sessionLifetime == .seconds(600))
        #expect(chosen.web?.listen == "[::1]:9090")
        for bad in ["8080", "hub:", "hub:65536", ":8080", "a b:80", "::1:80"] {
            let problem = try problem("web:\n  listen: \"\(bad)\"\n")
            #expect(problem.location.line == 2, "\(bad)")
            #expect(problem.message.contains("'web.listen' is '\(bad)'"))
        }
        let short = try problem("web:\n  sessionLifetime: 5\n")
        #expect(short.message.contains("'web.sessionLifetime' is 5"))
        let typo = try problem("web:\n  listn: 127.0.0.1:80\n")
        #expect(typo.message.contains("listen"))
        #expect(defaults.web?.behindProxy == false)
        let proxied = try GatewayConfiguration.parse(
            yaml: "web:\n  behindProxy: true\n", file: "homegate.yml", environment: [:])
        #expect(proxied.web?.behindProxy == true)
        let notBool = try problem("web:\n  behindProxy: sometimes\n")
        #expect(notBool.message.contains("web.behindProxy"), "\(notBool.message)")
        let hosts = try GatewayConfiguration.parse(
            yaml: "web:\n  hosts: [hub.example.org, hub.home.arpa, 192.168.1.20, \"fd00::1\"]\n", file: "homegate.yml",
            environment: [:])
        #expect(hosts.web?.hosts == ["hub.example.org", "hub.home.arpa", "192.168.1.20", "fd00::1"])
        for bad in ["http://hub.example.org", "hub.example.org:8080", "hub_1.lan", "-hub.lan", "hub..lan", "*.lan"] {
            let problem = try problem("web:\n  hosts:\n    - \"\(bad)\"\n")
            #expect(problem.location.line == 3, "\(bad)")
            #expect(problem.message.contains("'\(bad)' in 'web.hosts' is not a host name"), "\(problem.message)")
        }
        let notList = try problem("web:\n  hosts: hub.example.org\n")
        #expect(notList.message.contains("'web.hosts' must be a list"), "\(notList.message)")
    }

    @Test("history: on by default with 10 raw days, a year of hours and 200 MB, beside the home database")
    func historyDefaults() throws {
        let defaults = try GatewayConfiguration.parse(yaml: "", file: "homegate.yml")
        #expect(defaults.history.enabled)
        #expect(defaults.history.rawDays == 10 && defaults.history.hourlyDays == 365)
        #expect(defaults.history.maxMegabytes == 200)
        #expect(defaults.data.historyFile == "/var/lib/homegate/history.sqlite")

        let set = try GatewayConfiguration.parse(
            yaml: "data:\n  directory: /srv/hg/\n"
                + "history:\n  enabled: false\n  rawDays: 3\n  hourlyDays: 30\n  maxMegabytes: 50\n",
            file: "homegate.yml")
        #expect(!set.history.enabled)
        #expect(set.history.rawDays == 3 && set.history.hourlyDays == 30 && set.history.maxMegabytes == 50)
        #expect(set.data.historyFile == "/srv/hg/history.sqlite")
    }

    @Test(
        "history: each value out of range is reported at its line",
        arguments: [
            (
                "history:\n  rawDays: 0\n", 2, "'history.rawDays' is 0; it must be 1...365 days",
                "use 10, or leave it out for the default"
            ),
            (
                "history:\n  rawDays: 400\n", 2, "'history.rawDays' is 400; it must be 1...365 days",
                "use 10, or leave it out for the default"
            ),
            (
                "history:\n  hourlyDays: 4000\n", 2, "'history.hourlyDays' is 4000; it must be 1...3650 days",
                "use 365, or leave it out for the default"
            ),
            (
                "history:\n  rawDays: 30\n  hourlyDays: 7\n", 3,
                "'history.hourlyDays' (7) is shorter than 'history.rawDays' (30): the hours of the last raw days would go first",
                "make hourlyDays at least rawDays, e.g. 365"
            ),
            (
                "history:\n  maxMegabytes: 0\n", 2, "'history.maxMegabytes' is 0; it must be 1...102400",
                "use 200, or leave it out for the default"
            ),
            (
                "history:\n  maxMegabytes: 200000\n", 2, "'history.maxMegabytes' is 200000; it must be 1...102400",
                "use 200, or leave it out for the default"
            ),
        ])
    func historyOutOfRange(yaml: String, line: Int, message: String, fix: String) throws {
        let problem = try problem(yaml)
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == line)
        #expect(problem.message == message)
        #expect(problem.fix == fix)
    }

    @Test("history: a value of the wrong type is reported at the value")
    func historyWrongType() throws {
        let problem = try problem("history:\n  rawDays: ten\n")
        #expect(problem.code == .wrongType)
        #expect(problem.location.line == 2)
    }

    @Test("a missing file is reported with its path")
    func missingFile() throws {
        // Given a path where no file is
        let path = "/nonexistent/homegate-\(UUID().uuidString).yml"

        // When it is loaded
        let error = #expect(throws: ConfigurationErrors.self) {
            try GatewayConfiguration.load(file: path, environment: [:])
        }

        // Then the one problem names the file and says it does not exist
        let problem = try #require(error?.errors.first)
        #expect(error?.errors.count == 1)
        #expect(problem.code == .missingFile)
        #expect(problem.description.hasPrefix("\(path): error: the config file does not exist"))
    }

    @Test("a YAML syntax error is reported where the parser found it")
    func syntaxError() throws {
        // Given a flow sequence that is never closed
        let yaml = """
            mqtt:
              broker: mqtt://hub
              clientId: [gw
            logging:
              level: info
            """

        // When it is read
        let problem = try problem(yaml)

        // Then a syntax problem points into the file after the opening bracket
        #expect(problem.code == .syntax)
        #expect(problem.message.hasPrefix("invalid YAML: "))
        #expect((problem.location.line ?? 0) >= 3)
    }

    @Test("a key that appears twice is a syntax problem")
    func duplicateKey() throws {
        let problem = try problem("mqtt:\n  keepAlive: 10\n  keepAlive: 20\n")
        #expect(problem.code == .syntax)
        #expect(problem.message.contains("'keepAlive'"))
    }

    @Test("an unknown key is reported with the key it most likely meant")
    func unknownKey() throws {
        // Given a key in the wrong case and one that is a typo
        let found = problems("mqtt:\n  clientID: gw\nlogging:\n  levle: debug\nfrobnicate: 1\n")

        // Then each is reported at its line and column with a suggestion where there is one
        try #require(found.count == 3)
        #expect(found[0].code == .unknownKey)
        #expect(found[0].location == .file("homegate.yml", line: 2, column: 3))
        #expect(found[0].message == "unknown key 'mqtt.clientID'; did you mean 'clientId'?")
        #expect(found[0].fix == "rename it to 'clientId'")
        #expect(found[1].location.line == 4)
        #expect(found[1].message == "unknown key 'logging.levle'; did you mean 'level'?")
        #expect(found[2].location == .file("homegate.yml", line: 5, column: 1))
        #expect(found[2].message == "unknown key 'frobnicate'")
    }

    @Test("a value of the wrong type is reported at the value")
    func wrongType() throws {
        let problem = try problem("mqtt:\n  keepAlive: soon\n")
        #expect(problem.code == .wrongType)
        #expect(problem.location == .file("homegate.yml", line: 2, column: 14))
        #expect(problem.message == "'mqtt.keepAlive' must be a whole number, not 'soon'")
    }

    @Test("homes.creators is a list of accounts; a bad one is named at its line")
    func creators() throws {
        #expect(try problem("homes:\n  creators: owner\n").code == .wrongType)
        let bad = try problem("homes:\n  creators:\n    - owner\n    - \"a/b\"\n")
        #expect(bad.code == .invalidValue)
        #expect(bad.location.line == 4)
        #expect(bad.message.contains("'a/b'"))
        #expect(try GatewayConfiguration.parse(yaml: "homes:\n  creators: []\n", file: "f").homes.creators == [])
        #expect(
            try GatewayConfiguration.parse(yaml: "homes:\n  creators: null\n", file: "f").homes.homeCreators
                == .administrators)
    }

    @Test("a section that is not a mapping is a wrong type")
    func sectionIsNotAMapping() throws {
        let problem = try problem("mqtt: mqtt://hub\n")
        #expect(problem.code == .wrongType)
        #expect(problem.location.line == 1)
    }

    @Test("a bad broker address is reported with the client's reason")
    func badBroker() throws {
        let problem = try problem("mqtt:\n  broker: tcp://hub:1883\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location == .file("homegate.yml", line: 2, column: 11))
        #expect(problem.message == "broker 'tcp://hub:1883' must start with mqtt:// or mqtts://")
    }

    @Test("a broker port out of range is reported")
    func badPort() throws {
        let problem = try problem("mqtt:\n  broker: mqtt://hub:70000\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == 2)
        #expect(problem.message.contains("port 70000 is outside 1...65535"))
    }

    @Test("a base topic with a wildcard is reported")
    func badBaseTopic() throws {
        let problem = try problem("mqtt:\n  baseTopic: homegate/#\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == 2)
        #expect(problem.message.contains("contains an MQTT wildcard"))
    }

    @Test("an unknown log level is reported with the nearest level")
    func badLogLevel() throws {
        let problem = try problem("logging:\n  level: warn\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location == .file("homegate.yml", line: 2, column: 10))
        #expect(problem.message == "unknown log level 'warn'; did you mean 'warning'?")
    }

    @Test("a keep-alive libmosquitto would not send as written is reported; 0 turns it off", arguments: [2, -1, 65536])
    func badKeepAlive(seconds: Int) throws {
        let problem = try problem("mqtt:\n  keepAlive: \(seconds)\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == 2)
        #expect(problem.message == "'mqtt.keepAlive' is \(seconds) seconds; libmosquitto takes 0 (off) or 5 to 65535")
        let off = try GatewayConfiguration.parse(yaml: "mqtt:\n  keepAlive: 0\n", file: "homegate.yml")
        #expect(off.mqtt.keepAlive == 0)
    }

    @Test(
        "several brokers are read in order; with one broker too, a mix of TLS and plain, or a list in one address, a clear error"
    )
    func brokers() throws {
        let configuration = try GatewayConfiguration.parse(
            yaml: "mqtt:\n  brokers: [\"mqtt://hub.local:1883\", \"mqtt://[::1]:1884\"]\n  connectTimeout: 3\n",
            file: "homegate.yml")
        #expect(configuration.mqtt.brokers == ["mqtt://hub.local:1883", "mqtt://[::1]:1884"])
        let mqtt = try configuration.mqttConfiguration()
        #expect(mqtt.brokers == [.init(host: "hub.local", port: 1883), .init(host: "::1", port: 1884)])
        #expect(mqtt.connectTimeout == .seconds(3))

        let both = try problem("mqtt:\n  broker: mqtt://a:1883\n  brokers: [\"mqtt://b:1883\"]\n")
        #expect(both.message == "'mqtt.broker' and 'mqtt.brokers' are both set")
        let mixed = try problem("mqtt:\n  brokers: [\"mqtt://a:1883\", \"mqtts://b:8883\"]\n")
        #expect(mixed.message.contains("mix mqtt:// and mqtts://"))
        let commas = try problem("mqtt:\n  broker: mqtt://a:1,b:2\n")
        #expect(commas.location.line == 2)
        #expect(commas.message.contains("is not a host name or address"))
        let empty = try problem("mqtt:\n  brokers: []\n")
        #expect(empty.code == .wrongType)

        let fromEnvironment = try GatewayConfiguration.parse(
            yaml: "{}", file: "homegate.yml",
            environment: ["HOMEGATE_MQTT_BROKER": "mqtt://a:1883, mqtt://b:1884"])
        #expect(fromEnvironment.mqtt.brokers == ["mqtt://a:1883", "mqtt://b:1884"])
    }

    @Test("a command timeout that is not positive is reported")
    func badTimeout() throws {
        let problem = try problem("commands:\n  timeout: -1\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == 2)
        #expect(problem.message == "'commands.timeout' is -1.0 seconds; it must be more than 0")
    }

    @Test("an unknown protocol version is reported")
    func badProtocolVersion() throws {
        let problem = try problem("mqtt:\n  protocolVersion: 4.0\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == 2)
    }

    @Test("a password file that does not exist is reported")
    func unreadablePasswordFile() throws {
        let problem = try problem("mqtt:\n  username: gw\n  passwordFile: /nonexistent/password\n")
        #expect(problem.code == .unreadableFile)
        #expect(problem.location == .file("homegate.yml", line: 3, column: 17))
        #expect(problem.message == "'mqtt.passwordFile' names '/nonexistent/password', which does not exist")
    }

    @Test("a TLS file that does not exist is reported")
    func unreadableTLSFile() throws {
        let problem = try problem("mqtt:\n  broker: mqtts://hub\n  tls:\n    caFile: /nonexistent/ca.pem\n")
        #expect(problem.code == .unreadableFile)
        #expect(problem.location.line == 4)
    }

    @Test("TLS settings with a plain broker are reported")
    func tlsWithPlainBroker() throws {
        let problem = try problem("mqtt:\n  broker: mqtt://hub\n  tls:\n    verifyServer: false\n")
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == 3)
        #expect(problem.message.contains("is plain MQTT"))
    }

    // MARK: Decoded sections: each problem keeps its line and its fix

    @Test("a misspelt key two sections down is named by its path, at its line, with the key it meant")
    func misspeltNestedKey() throws {
        // Given a rate limit whose key is misspelt
        let problem = try problem("commands:\n  timeout: 5\n  rateLimit:\n    brust: 10\n")

        // Then the key is reported where it is written, with the known key as the fix
        #expect(problem.code == .unknownKey)
        #expect(problem.location == .file("homegate.yml", line: 4, column: 5))
        #expect(problem.message == "unknown key 'commands.rateLimit.brust'; did you mean 'burst'?")
        #expect(problem.fix == "rename it to 'burst'")
    }

    @Test(
        "a value of the wrong type says which type is expected, at the value's line",
        arguments: [
            (
                "data:\n  inMemory: sometimes\n", 2, "'data.inMemory' must be true or false, not 'sometimes'",
                "write true or false"
            ),
            (
                "commands:\n  timeout: soon\n", 2, "'commands.timeout' must be a number, not 'soon'",
                "write a number such as 10"
            ),
            (
                "mqtt:\n  connectTimeout: 2.5\n", 2, "'mqtt.connectTimeout' must be a whole number, not '2.5'",
                "write a number such as 10"
            ),
            (
                "mqtt:\n  username:\n    - a\n", 3, "'mqtt.username' must be text",
                "write a single value after 'mqtt.username:'"
            ),
            (
                "web:\n  hosts:\n    hub: 1\n", 3, "'web.hosts' must be a list, not 'a section'",
                "write a list such as [hub.example.org, hub.home.arpa]"
            ),
        ])
    func wrongTypes(yaml: String, line: Int, message: String, fix: String) throws {
        let problem = try problem(yaml)
        #expect(problem.code == .wrongType)
        #expect(problem.location.line == line)
        #expect(problem.message == message)
        #expect(problem.fix == fix)
    }

    @Test(
        "a value out of range is reported at its line with a value to use instead",
        arguments: [
            (
                "mqtt:\n  connectTimeout: 0\n", 2, "'mqtt.connectTimeout' is 0 seconds; it must be between 1 and 3600",
                "use 10, or leave it out for the default"
            ),
            (
                "commands:\n  rateLimit:\n    burst: -3\n", 3,
                "'commands.rateLimit.burst' is -3; it must be at least 1",
                "use 100, or leave it out for the default"
            ),
            (
                "web:\n  sessionLifetime: 59\n", 2, "'web.sessionLifetime' is 59.0 seconds; it must be 60...2592000",
                "use 43200 (twelve hours)"
            ),
            (
                "mqtt:\n  eventsQoS: 2\n", 2, "'mqtt.eventsQoS' is 2; $events go at QoS 0 or 1",
                "write 1 to have them queued for a persistent session, or leave it out for 0"
            ),
        ])
    func outOfRange(yaml: String, line: Int, message: String, fix: String) throws {
        let problem = try problem(yaml)
        #expect(problem.code == .invalidValue)
        #expect(problem.location.line == line)
        #expect(problem.message == message)
        #expect(problem.fix == fix)
    }

    @Test("problems in several sections and a bad section are all reported, in the order of the file")
    func problemsAcrossSections() throws {
        let found = problems("mqtt:\n  keepAlive: 1\n  tls: on\ndata:\n  directry: /srv\nweb:\n  behindProxy: 3\n")
        #expect(found.map(\.location.line) == [2, 3, 5, 7])
        #expect(found.map(\.code) == [.invalidValue, .wrongType, .unknownKey, .wrongType])
        #expect(found[1].message.hasPrefix("'mqtt.tls' must be a section of keys (caFile, certificateFile"))
        #expect(found[2].fix == "rename it to 'directory'")
    }

    // MARK: Environment

    @Test("environment variables win over the file")
    func environmentWins() throws {
        // Given a file that sets every overridable key, and the environment that sets them too
        let yaml = """
            mqtt:
              broker: mqtt://file-host
              username: file-user
              password: file-password
              baseTopic: file
            data:
              directory: /file
            logging:
              level: info
            """
        let environment = [
            "HOMEGATE_MQTT_BROKER": "mqtts://env-host:8883", "HOMEGATE_MQTT_USERNAME": "env-user",
            "HOMEGATE_MQTT_PASSWORD": "env-password", "HOMEGATE_MQTT_BASE_TOPIC": "env/homegate",
            "HOMEGATE_DATA_DIRECTORY": "/env", "HOMEGATE_LOG_LEVEL": "trace",
        ]

        // When it is read
        let configuration = try GatewayConfiguration.parse(yaml: yaml, file: "homegate.yml", environment: environment)

        // Then every value is the environment's
        #expect(configuration.mqtt.brokers == ["mqtts://env-host:8883"])
        #expect(configuration.mqtt.username == "env-user")
        #expect(configuration.mqtt.password == "env-password")
        #expect(configuration.mqtt.baseTopic == "env/homegate")
        #expect(configuration.data.directory == "/env")
        #expect(configuration.logging.level == .trace)
    }

    @Test("the environment sets the sections the file leaves out, and a bad value names the variable")
    func environmentWithoutSections() throws {
        let configuration = try GatewayConfiguration.parse(
            yaml: "", file: "homegate.yml",
            environment: [
                "HOMEGATE_MQTT_USERNAME": "gw", "HOMEGATE_DATA_DIRECTORY": "/env", "HOMEGATE_LOG_LEVEL": "debug",
            ])
        #expect(configuration.mqtt.username == "gw")
        #expect(configuration.data.directory == "/env")
        #expect(configuration.logging.level == .debug)
        let problem = try problem("web: null\n", environment: ["HOMEGATE_MQTT_BASE_TOPIC": "a/#"])
        #expect(problem.location == .environment("HOMEGATE_MQTT_BASE_TOPIC"))
        #expect(problem.message.contains("wildcard"))
    }

    @Test("the password variable wins over a password file, which is then not needed")
    func passwordVariableWinsOverFile() throws {
        let yaml = "mqtt:\n  username: gw\n  passwordFile: /nonexistent/password\n"
        let configuration = try GatewayConfiguration.parse(
            yaml: yaml, file: "homegate.yml", environment: ["HOMEGATE_MQTT_PASSWORD": "from-env"])
        #expect(configuration.mqtt.password == "from-env")
    }

    @Test("a bad value in an environment variable names the variable")
    func badEnvironmentValue() throws {
        // Given a good file and a bad log level in the environment
        let problem = try problem("logging:\n  level: info\n", environment: ["HOMEGATE_LOG_LEVEL": "loud"])

        // Then the problem is located at the variable, not the file
        #expect(problem.location == .environment("HOMEGATE_LOG_LEVEL"))
        #expect(problem.description.hasPrefix("$HOMEGATE_LOG_LEVEL: error: unknown log level 'loud'"))
    }

    // MARK: Reporting

    @Test("all problems are reported together, in the order of the file")
    func allProblemsTogether() throws {
        // Given a file with four independent mistakes
        let yaml = """
            mqtt:
              broker: mqtt:/hub
              keepAlive: -5
            commands:
              timeout: never
            logging:
              level: verbose
            """

        // When it is read
        let found = problems(yaml)

        // Then each is reported, at its own line
        #expect(found.map(\.location.line) == [2, 3, 5, 7])
        #expect(found.map(\.code) == [.invalidValue, .invalidValue, .wrongType, .invalidValue])
    }

    @Test("a problem renders as FILE:LINE:COLUMN: error: MESSAGE with an indented fix")
    func rendering() throws {
        let errors = ConfigurationErrors([
            ConfigurationError(.invalidValue, at: .file("/etc/homegate.yml", line: 7, column: 10), "bad", fix: "good"),
            ConfigurationError(.missingFile, at: .wholeFile("/etc/homegate.yml"), "gone", fix: "create it"),
        ])
        #expect(
            errors.description == """
                /etc/homegate.yml:7:10: error: bad
                    fix: good
                /etc/homegate.yml: error: gone
                    fix: create it
                """)
    }

    @Test("a near-miss key is matched by case, separators and small typos, a far one is not")
    func suggestions() throws {
        #expect(problems("mqtt:\n  base_topic: x\n").first?.fix == "rename it to 'baseTopic'")
        #expect(problems("mqtt:\n  kepAlive: 3\n").first?.fix == "rename it to 'keepAlive'")
        #expect(problems("mqtt:\n  color: red\n").first?.message == "unknown key 'mqtt.color'")
    }
}

/// Writes `contents` to a temporary file, runs `body` with its path and removes it.
func withTemporaryFile<T>(_ contents: String, _ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("homegate-\(UUID().uuidString)").path
    try contents.write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}
