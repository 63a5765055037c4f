import Gateway
import HomeModel
import Logging
import MQTT

/// Everything the gateway reads from its config file (`Config/homegate.yml` is the annotated sample).
/// Every setting has a default that suits a gateway and a broker on the same hub, so an empty file
/// is a working configuration. Load one with `load(file:environment:)`.
package struct GatewayConfiguration: Sendable, Hashable {
    /// `mqtt`: how the gateway reaches its broker and where its topics live.
    package struct MQTTSettings: Sendable, Hashable {
        /// `mqtt[s]://host[:port]` of each broker, in order of preference (`mqtt.brokers`, or the one
        /// `mqtt.broker`): `mqtts` means TLS, with the broker's certificate verified.
        package var brokers = ["mqtt://127.0.0.1:1883"]
        /// The client id; nil for the installation's own (``InstallationIdentity``), so that two
        /// gateways on one broker never take each other's session.
        package var clientId: String?
        package var username: String?
        /// The password after `passwordFile` (a file whose first line is the password, so the
        /// password need not sit in the config) and `HOMEGATE_MQTT_PASSWORD` were applied.
        package var password: String?
        /// The first level(s) of every gateway topic (docs/mqtt.md's `B`).
        package var baseTopic = "homegate"
        /// Seconds between the client's pings when nothing else is sent: 0 (off) or 5 to 65535.
        package var keepAlive = 30
        /// Seconds one connection attempt may take, up to the broker's CONNACK.
        package var connectTimeout = 10
        package var protocolVersion = MQTTConfiguration.ProtocolVersion.v5
        /// The QoS of `$events`, 0 or 1: 0 by default, as zigbee2mqtt's own events. The state they
        /// report is retained at QoS 1 on its own topic, where a client that was away reads it; 1
        /// also queues them for a persistent session while it is away and keeps them in order with
        /// those topics, at a quarter more CPU per command for the gateway (docs/mqtt.md, Events).
        package var eventsQoS = MQTTQoS.atMostOnce
        /// `mqtt.tls`, TLS files and verification, only used with an `mqtts://` broker; nil uses the
        /// system's trust store for `mqtts://`.
        package var tls: MQTTConfiguration.TLS?
    }

    /// `data`: where the gateway keeps its state.
    package struct DataSettings: Sendable, Hashable {
        /// The folder of the home database (`home.sqlite`).
        package var directory: String = "/var/lib/homegate"
        /// Keep the home database in memory only: nothing survives a restart. For benchmarks (the
        /// price of durability) and trials; the file is the default.
        package var inMemory: Bool = false
        /// How long device values may wait to be written together (group commit, one fsync for all):
        /// what a power cut can lose of device values. Layout changes are always written before they
        /// are answered. Zero writes every value before its answer.
        package var valueCommitWindow: Duration = .milliseconds(100)

        /// The SQLite file of the home database.
        package var databaseFile: String { file("home.sqlite") }

        /// The SQLite file of the history (docs/history.md), beside the home database so the two
        /// are backed up and moved together.
        package var historyFile: String { file("history.sqlite") }

        private func file(_ name: String) -> String {
            directory.hasSuffix("/") ? directory + name : directory + "/" + name
        }
    }

    /// `history`: what each sensor did, kept on the hub (docs/history.md).
    package struct HistorySettings: Sendable, Hashable {
        /// Record the homes' values and events; off, nothing is recorded and the `history` and
        /// `timeline` requests are refused.
        package var enabled: Bool = true
        /// Days every recorded value (and the timeline's events) is kept as it came: from a day to a year.
        package var rawDays: Int = 10
        /// Days the hourly minimum, mean and maximum are kept, once the raw values aged out: up to ten
        /// years, and never fewer than `rawDays`.
        package var hourlyDays: Int = 365
        /// The most the history file may hold (from 1 MB to 100 GB); past it the oldest hours go first.
        /// 200 MB fits a Pi's SD card and holds about 250 sensors' full retention at one value a minute.
        package var maxMegabytes: Int = 200
    }

    /// `accessories`: the drivers that find accessories.
    package struct AccessorySettings: Sendable, Hashable {
        /// A YAML file of virtual devices and homes (the demo home's format); nil runs without the
        /// virtual driver.
        package var virtual: String?
        /// `accessories.zigbee2mqtt`: the zigbee2mqtt network whose devices become accessories; nil
        /// runs without the driver. One network today; a list of several may follow.
        package var zigbee2mqtt: Zigbee2MQTTSettings?
        /// `accessories.hap`: HomeKit accessories over IP (docs/hap.md); nil runs without the driver.
        package var hap: HAPSettings?
    }

    /// `accessories.hap`: where HomeKit accessories are found.
    package struct HAPSettings: Sendable, Hashable {
        /// Browse `_hap._tcp` over mDNS (through Avahi).
        package var discovery: Bool = true
        /// Accessories at fixed addresses, for networks mDNS does not reach: `host:port`.
        package var accessories: [String] = []

        /// `accessories` split into host and port (every entry was checked when the file was read).
        package var endpoints: [(host: String, port: Int)] {
            accessories.compactMap { GatewayConfiguration.hostAndPort($0) }
        }
    }

    /// `accessories.zigbee2mqtt`: where zigbee2mqtt publishes.
    package struct Zigbee2MQTTSettings: Sendable, Hashable {
        /// zigbee2mqtt's `mqtt.base_topic`.
        package var baseTopic: String = "zigbee2mqtt"
        /// `mqtt[s]://host[:port]` of zigbee2mqtt's broker when it is not the gateway's; nil: the
        /// gateway's own broker, with the gateway's account and TLS settings.
        package var broker: String?
        /// The account and password for that other broker.
        package var username: String?
        package var password: String?
        /// The account zigbee2mqtt itself connects as on the gateway's broker: the generated access
        /// rules let it (and the gateway) read and write the base topic, and nobody else write there.
        package var account: String = "zigbee2mqtt"

        package init() {}
    }

    /// `commands`: how command topics are handled.
    package struct CommandSettings: Sendable, Hashable {
        /// The account that command topics without a trailing `/<account>` act as; nil refuses them.
        package var defaultAccount: String?
        /// How long a device may take to answer a write or read before the command fails with
        /// `operationTimedOut`.
        package var timeout: Duration = .seconds(10)
        /// How many commands and requests one account may send; nil admits all.
        package var rateLimit: RateLimit? = .standard
    }

    /// `access`: how the broker is told who may do what.
    package struct AccessSettings: Sendable, Hashable {
        /// Keep mosquitto's dynamic-security plugin in step with the homes' users.
        package var dynamicSecurity: Bool = false
        /// The acl_file the broker reads (written by `homegate acl`): the gateway checks that it is
        /// there and in step with the homes' users, and says so when it is not.
        package var aclFile: String?
        /// The `remote_clientid` of the hub broker's bridge to a central broker (docs/scaling.md):
        /// the generated rules let the members read its state topic, and the bridge write it on the
        /// central broker.
        package var bridgeClientID: String?

        /// Whether the configuration says how the broker is protected; without either, any account
        /// can publish commands in any other's name and read every home, unless the broker has
        /// rules of its own.
        var protectsBroker: Bool { dynamicSecurity || aclFile != nil }
    }

    /// `homes`: who may do what with the homes themselves.
    package struct HomeSettings: Sendable, Hashable {
        /// The accounts that may add a home; nil: the administrators of the existing homes, or
        /// anyone while there is none.
        package var creators: [String]?

        /// `creators` as the home model takes it.
        package var homeCreators: HomeCreators { creators.map { .accounts(Set($0)) } ?? .administrators }
    }

    /// `homeAssistant`: MQTT discovery for Home Assistant.
    package struct HomeAssistantSettings: Sendable, Hashable {
        package var enabled: Bool = false
        package var discoveryPrefix: String = "homeassistant"
        /// The account Home Assistant's commands carry (and its MQTT username).
        package var account: String = "homeassistant"
        /// The node id level of every discovery topic.
        package var nodeId: String = "homegate"
    }

    /// `web`: the hub's web page (docs/web.md).
    package struct WebSettings: Sendable, Hashable {
        /// The address the page is served on. Loopback by default: open it to the network only
        /// behind a reverse proxy with TLS, since logins carry broker passwords.
        package var host: String = "127.0.0.1"
        /// The TCP port; 0 picks a free one (tests).
        package var port: Int = 8080
        /// How long a login lasts: the session cookie expires then, whatever is done with it.
        package var sessionLifetime: Duration = .seconds(12 * 3600)
        /// The page is reached through a reverse proxy on this host: for requests from loopback,
        /// `X-Forwarded-For` names the visitor (the login throttle counts per visitor, not per
        /// proxy), `X-Forwarded-Host` the host the browser used, and `X-Forwarded-Proto: https`
        /// makes the cookies `Secure`.
        package var behindProxy: Bool = false
        /// Host names the page is also served as, beside `localhost`, the listen address, the
        /// machine's name and IP addresses (a request for any other name is refused: DNS rebinding).
        package var hosts: [String] = []
    }

    /// `logging`.
    package struct LoggingSettings: Sendable, Hashable {
        package var level: Logger.Level = .info
    }

    package var mqtt = MQTTSettings()
    package var data = DataSettings()
    package var accessories = AccessorySettings()
    package var commands = CommandSettings()
    package var access = AccessSettings()
    package var homes = HomeSettings()
    package var homeAssistant = HomeAssistantSettings()
    package var logging = LoggingSettings()
    package var history = HistorySettings()
    /// The web page; nil (`web: null`) serves none.
    package var web: WebSettings? = WebSettings()
    /// `homekit`: homes served to Apple's Home app; nil (the default) serves none.
    package var homekit: HomeKitSettings?

    package init() {}

    /// The gateway's client id: `mqtt.clientId`, or the installation's (``InstallationIdentity``)
    /// once ``resolveClientID()`` has read it; "homegate" before that.
    package var clientID: String { mqtt.clientId ?? "homegate" }

    /// Fills `mqtt.clientId`, when the file leaves it out, with the installation's own id, kept in
    /// the data directory (made on first use).
    package mutating func resolveClientID() throws {
        guard mqtt.clientId == nil else { return }
        mqtt.clientId = try InstallationIdentity.clientID(
            inDirectory: data.directory, persistent: !data.inMemory)
    }

    /// The client settings for zigbee2mqtt's broker: the gateway's own (its own client id) unless
    /// `accessories.zigbee2mqtt.broker` names another.
    package func zigbee2mqttConfiguration() throws(MQTTError) -> MQTTConfiguration? {
        guard let settings = accessories.zigbee2mqtt else { return nil }
        var configuration: MQTTConfiguration
        if let broker = settings.broker {
            configuration = try MQTTConfiguration(brokerURL: broker, clientID: "\(clientID)-zigbee2mqtt")
            configuration.username = settings.username
            configuration.password = settings.password
        } else {
            configuration = try mqttConfiguration()
            configuration.clientID = "\(clientID)-zigbee2mqtt"
        }
        configuration.retryInitialConnection = true
        return configuration
    }

    /// The topics under `mqtt.baseTopic`.
    package var topics: Topics { Topics(base: mqtt.baseTopic) }

    /// Home Assistant discovery as configured, or nil when `homeAssistant.enabled` is off.
    package var homeAssistantDiscovery: HomeAssistantDiscovery? {
        guard homeAssistant.enabled else { return nil }
        return HomeAssistantDiscovery(
            discoveryPrefix: homeAssistant.discoveryPrefix, nodeID: homeAssistant.nodeId,
            account: homeAssistant.account, topics: topics, version: HealthService.version)
    }

    /// The client settings for the brokers: addresses, TLS, credentials, client id, keep-alive and
    /// protocol. The will, reconnect backoff and session are the caller's to set. Throws when a broker
    /// is not an `mqtt[s]://host[:port]` address or the brokers mix TLS and plain MQTT (never for a
    /// configuration that `load` returned).
    package func mqttConfiguration() throws(MQTTError) -> MQTTConfiguration {
        var configuration = try MQTTConfiguration(brokerURLs: mqtt.brokers, clientID: clientID)
        configuration.username = mqtt.username
        configuration.password = mqtt.password
        configuration.keepAlive = .seconds(mqtt.keepAlive)
        configuration.connectTimeout = .seconds(mqtt.connectTimeout)
        configuration.protocolVersion = mqtt.protocolVersion
        if configuration.tls != nil, let tls = mqtt.tls {
            configuration.tls = tls
        }
        return configuration
    }
}
