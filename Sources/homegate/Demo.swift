import ArgumentParser
import AsyncMailbox
import Broker
import Config
import Foundation
import Gateway
import HomeKitBridge
import HomeModel
import Logging
import MQTT
import ServiceLifecycle
import Zigbee2MQTTStandIn

/// `homegate demo`: a private mosquitto on loopback with the demo accounts and access rules, and the
/// gateway with the virtual devices and the demo home connected to it.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a private mosquitto on loopback and the gateway with the demo home (Ctrl-C stops both).",
        discussion: """
            The demo accounts are owner (administrator of both homes), guest (guest in Main House), \
            stranger (member of none), homeassistant (guest in both), homegate (the gateway itself) and \
            zigbee2mqtt (the stand-in zigbee2mqtt). Each password is the account's name: for the demo only.
            """
    )

    /// Demo accounts; each password is the account name (for the demo only).
    static let accounts = ["owner", "guest", "stranger", "homeassistant", "homegate", "zigbee2mqtt"]

    /// The recorded zigbee2mqtt devices the demo's stand-in zigbee2mqtt offers, and where the demo puts
    /// them when it builds its home (by IEEE address; the power plug stays in the browser to be added).
    static let zigbeeDevices: [(friendlyName: String, ieee: String, name: String, room: String?)] = [
        ("bulb", "0x000b57fffec6a5b2", "Kitchen Ceiling", "Kitchen"),
        ("bulb_color_2", "0x000b57fffec6a5b4", "Colour Lamp", "Living Room"),
        ("zigfred_plus", "0xf4ce368a38be56a1", "Zigfred", "Bedroom"),
        ("weather_sensor", "0x0017880104e45522", "Weather Station", "Garage"),
        ("power_plug", "0x0017880104e45524", "Power Plug", nil),
    ]

    @Option(help: "The broker's port on 127.0.0.1; when taken, a free port is used instead.")
    var port = 1883

    @Option(help: "The web page's port on 127.0.0.1; when taken (or 0), the system picks a free one.")
    var webPort = 8080

    @Option(
        help: "The port of Main House's HomeKit bridge on 127.0.0.1 (0 serves none); when taken, a free one is used.")
    var homekitPort = 51827

    @Option(help: "The folder for the demo's broker files and home database.")
    var data = ".homegate-demo"

    @Option(help: "The demo home: virtual devices and the homes built from them.")
    var home = "Config/demo-home.yml"

    @Option(
        help:
            "The recorded zigbee2mqtt payloads the stand-in zigbee2mqtt replays (default: Sources/Zigbee2MQTTStandIn/Recordings of the checkout whose Config folder holds the demo home)."
    )
    var zigbee2mqttRecordings: String?

    @Option(help: "The topic every gateway topic starts with.")
    var baseTopic = "homegate"

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        let logger = makeLogger(logLevel)
        let folder = URL(fileURLWithPath: data).standardizedFileURL.path
        if await MosquittoBroker.stopLeftover(in: "\(folder)/broker") {
            logger.notice("stopped the demo broker that an earlier demo in \(folder) left running")
        }
        let chosenPort = LoopbackPort.isListening(port) ? try LoopbackPort.free() : port
        if chosenPort != port {
            logger.notice("port \(port) is taken; the demo broker uses \(chosenPort) instead")
        }
        // Port 0 when taken: the system picks one as the page binds (no window for another to take it).
        let chosenWebPort = webPort != 0 && LoopbackPort.isListening(webPort) ? 0 : webPort
        var configuration = GatewayConfiguration()
        configuration.web?.port = chosenWebPort
        configuration.mqtt.brokers = ["mqtt://127.0.0.1:\(chosenPort)"]
        (configuration.mqtt.username, configuration.mqtt.password) = ("homegate", "homegate")
        configuration.mqtt.baseTopic = baseTopic
        configuration.data.directory = "\(folder)/home"
        configuration.accessories.virtual = URL(fileURLWithPath: home).standardizedFileURL.path
        configuration.accessories.zigbee2mqtt = .init()
        configuration.homeAssistant.enabled = true
        configuration.access.aclFile = "\(folder)/broker/acl"
        configuration.logging.level = logLevel
        if homekitPort != 0 {
            // Main House as a HomeKit bridge with the owner's rights, on loopback like the broker.
            var bridge = GatewayConfiguration.HomeKitSettings.Bridge()
            (bridge.home, bridge.account, bridge.listen) = ("Main House", "owner", "127.0.0.1")
            bridge.port = homekitPort
            configuration.homekit = GatewayConfiguration.HomeKitSettings()
            configuration.homekit?.bridges = [bridge]
            // Loopback only: no phone could reach what an advert would point it to.
            configuration.homekit?.advertise = false
        }
        try BaseTopic.validate(baseTopic)

        // The checkout holds the demo home in Config/ and the recordings with the stand-in's sources.
        let checkout = URL(fileURLWithPath: home).standardizedFileURL.deletingLastPathComponent()
            .deletingLastPathComponent()
        let recordingsFolder =
            zigbee2mqttRecordings ?? checkout.appendingPathComponent("Sources/Zigbee2MQTTStandIn/Recordings").path
        let recordings: Zigbee2MQTTRecordings
        do {
            recordings = try Zigbee2MQTTRecordings(folder: recordingsFolder)
        } catch {
            throw ValidationError("cannot read the recorded zigbee2mqtt payloads in \(recordingsFolder): \(error)")
        }
        // The broker's access rules come from the demo home's users, so build the home first.
        let freshHome = !FileManager.default.fileExists(atPath: configuration.data.databaseFile)
        let (manager, _) = try await GatewayApplication.openHome(configuration, logger: logger)
        let rules = AccessRuleSource(configuration: configuration).rules(memberships: await manager.memberships())
        await manager.shutdown()

        var brokerConfiguration = MosquittoBroker.Configuration(
            port: chosenPort, allowAnonymous: false,
            passwords: Dictionary(uniqueKeysWithValues: Self.accounts.map { ($0, $0) }),
            accessRules: rules.aclFile(generatedBy: "homegate demo"), persistence: true)
        // Ctrl-C reaches the gateway alone: it says goodbye (offline) before it stops the broker.
        brokerConfiguration.ownProcessGroup = true
        let broker = try await MosquittoBroker.start(brokerConfiguration, directory: "\(folder)/broker")
        print(Self.instructions(port: chosenPort, topics: configuration.topics, folder: folder))
        fflush(nil)  // all C streams: the instructions must show at once, also when piped
        // Members added or removed while the demo runs reach its broker: it rewrites the acl_file and
        // makes mosquitto read it again.
        let devices = recordings.devices(named: Set(Self.zigbeeDevices.map(\.friendlyName)))
        var standInMQTT = MQTTConfiguration(port: chosenPort, clientID: "zigbee2mqtt-standin")
        standInMQTT.username = "zigbee2mqtt"
        standInMQTT.password = "zigbee2mqtt"
        let standIn = Zigbee2MQTTStandIn(
            client: try MQTTClient(standInMQTT, logger: logger), devices: devices,
            states: recordings.firstStates(of: devices), logger: logger)
        var place: (@Sendable (HomeManager) async -> Void)? = nil
        if freshHome {
            place = { [logger] manager in await Self.placeZigbeeDevices(manager, logger: logger) }
        }
        let foundation: [any ServiceLifecycle.Service] = [StopAtShutdown { await broker.stop() }, standIn]
        try await GatewayApplication(
            configuration: configuration, logger: logger, foundation: foundation, started: place,
            accessRulesChanged: { [logger] rules in
                do {
                    if try broker.reload(accessRules: rules.aclFile(generatedBy: "homegate demo")) {
                        logger.notice("the demo broker's access rules follow the homes' users")
                    }
                } catch {
                    logger.error("could not renew the demo broker's access rules", metadata: ["error": "\(error)"])
                }
            },
            webListening: { port in
                if webPort != 0 && port != webPort { print("homegate demo: port \(webPort) is taken") }
                print("homegate demo: the web page is on http://127.0.0.1:\(port)/ (owner/owner or guest/guest)")
                fflush(nil)
            },
            homekitAnyPortIfTaken: true,
            homekitListening: { bridge, listener in
                print(
                    "homegate demo: Main House is a HomeKit bridge on 127.0.0.1:\(listener.port), setup code \(await bridge.setupCode)"
                )
                fflush(nil)
            }
        ).run()
    }

    /// Puts the stand-in's devices into the demo home as the owner would, once the driver has found
    /// them (only when the demo built its home in this run: a device removed later stays removed).
    static func placeZigbeeDevices(_ manager: HomeManager, logger: Logger) async {
        var waiting = zigbeeDevices.filter { $0.room != nil }
        let events = await manager.events()
        while !waiting.isEmpty {
            let found = Set(await manager.discoveredAccessories().map(\.id.rawValue))
            for device in waiting where found.contains(device.ieee) {
                do {
                    try await manager.edit(
                        .addAccessory(
                            home: "Main House", id: AccessoryID(device.ieee), room: device.room, name: device.name),
                        account: "owner")
                } catch {
                    logger.error(
                        "could not add the zigbee2mqtt device \(device.friendlyName) to the demo home: \(error)")
                }
            }
            waiting.removeAll { found.contains($0.ieee) }
            guard !waiting.isEmpty else { break }
            let more = await events.contains { if case .didFindNewAccessory = $0 { true } else { false } }
            guard more else { return }  // the stream ended: cancelled (the demo stops)
        }
    }

    static func instructions(port: Int, topics: Topics, folder: String) -> String {
        let b = topics.base
        let connect = "-h 127.0.0.1 -p \(port)"
        return """

            homegate demo: mosquitto listens on 127.0.0.1:\(port) with access rules for the demo accounts;
            its files and the home database are in \(folder).
            Accounts: owner, guest, stranger, homeassistant (each password is the account's name: demo only).

            The web page's address follows as soon as it is served (log in as owner or guest).

            Watch the whole home as its owner:
              mosquitto_sub \(connect) -u owner -P owner -t '\(b)/#' -v
            Switch the floor lamp on as guest:
              mosquitto_pub \(connect) -u guest -P guest -t '\(b)/Main House/Living Room/Floor Lamp/Lightbulb/On/set/guest' -m true
            See answers to guest's commands (a refused one, for instance):
              mosquitto_sub \(connect) -u guest -P guest -t '\(b)/$response/guest' -v
              mosquitto_pub \(connect) -u guest -P guest -t '\(b)/$request/guest/addRoom' -m '{"home":"Main House","name":"Attic"}'
            Zigbee: a stand-in zigbee2mqtt replays recorded devices; dim the kitchen ceiling light as guest:
              mosquitto_pub \(connect) -u guest -P guest -t '\(b)/Main House/Kitchen/Kitchen Ceiling/Light/Brightness/set/guest' -m 60
              mosquitto_sub \(connect) -u zigbee2mqtt -P zigbee2mqtt -t 'zigbee2mqtt/#' -v
            Press Ctrl-C to stop the gateway and the broker.

            """
    }
}
