import AsyncMailbox
import Execution
import HomeModel
import Logging
import MQTT
import ServiceLifecycle

/// Serves the configured homes as HomeKit bridges for the gateway's lifetime: for each, it waits
/// until the home is there for the bridge's account (a home the configuration names may be made
/// later over MQTT), then listens for controllers and follows the home's changes.
package struct HomeKitBridgeService: ServiceLifecycle.Service {
    /// One bridge to serve, where to listen, and where to advertise it.
    package struct Bridge: Sendable {
        package let settings: HomeBridge.Settings
        package let host: String
        /// The interfaces its `_hap._tcp` record goes out on (nil: those with a route, never `lo`
        /// or `docker0`); `advertise` false sends none (a controller then needs the address).
        package let interfaces: [String]?
        package let advertise: Bool
        /// Listen on a free port when the configured one is taken (the demo), rather than not at all.
        package let anyPortIfTaken: Bool

        package init(
            _ settings: HomeBridge.Settings, host: String, interfaces: [String]? = nil, advertise: Bool = true,
            anyPortIfTaken: Bool = false
        ) {
            self.settings = settings
            self.host = host
            self.interfaces = interfaces
            self.advertise = advertise
            self.anyPortIfTaken = anyPortIfTaken
        }
    }

    private let bridges: [Bridge]
    private let manager: HomeManager
    /// The thread that serves the bridges' sockets: the gateway's loop, where the manager runs.
    private let loop: EventLoopThread?
    private let logger: Logger
    private let clock: AnyClock
    private let firmware: String
    /// Told of each bridge once it listens (tests learn a bridge's port and state from it).
    private let started: @Sendable (HomeBridge, BridgeListener) async -> Void

    package init(
        bridges: [Bridge], manager: HomeManager, loop: EventLoopThread?, logger: Logger,
        clock: AnyClock = AnyClock(ContinuousClock()),
        firmware: String, started: @escaping @Sendable (HomeBridge, BridgeListener) async -> Void = { _, _ in }
    ) {
        self.bridges = bridges
        self.manager = manager
        self.loop = loop
        self.logger = logger
        self.clock = clock
        self.firmware = firmware
        self.started = started
    }

    /// Serves until the gateway stops; a bridge that cannot serve says why in the log and leaves
    /// the gateway and the other bridges running.
    package func run() async throws {
        // Without the gateway's loop (libmosquitto served on its own threads), a loop of its own.
        let loop = self.loop ?? EventLoopThread(name: "homegate-hap")
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for bridge in bridges {
                    // On the loop, where the bridge and its connections live: what it builds is made
                    // there too, not on a thread of the global pool (and in that thread's malloc arena).
                    group.addTask(executorPreference: loop) { await serve(bridge, on: loop) }
                }
            }
        }
        if self.loop == nil { loop.stop() }
        try? await gracefulShutdown()
    }

    private func serve(_ bridge: Bridge, on loop: EventLoopThread) async {
        let settings = bridge.settings
        let logger = {
            var logger = self.logger
            logger[metadataKey: "home"] = "\(settings.home)"
            return logger
        }()
        // Subscribed before the home is looked for, so that no change between the two is missed.
        // First in line: a controller's event leaves before the gateway renders its MQTT topics.
        let changes = await manager.changes(where: nil, firstInLine: true)
        var changeIterator = changes.makeAsyncIterator()
        var reported = false
        var home: Home?
        while home == nil {
            do throws(HomeError) {
                home = try await manager.home(settings.home, account: settings.account)
            } catch {
                if !reported {
                    logger.error(
                        "HomeKit bridge waits for its home: \(error.message)",
                        metadata: ["account": "\(settings.account)"])
                    reported = true
                }
                guard await changeIterator.next() != nil else { return }
            }
        }
        do {
            let listener: BridgeListener
            do {
                listener = try BridgeListener.bind(host: bridge.host, port: settings.port, loop: loop)
            } catch  where bridge.anyPortIfTaken {
                listener = try BridgeListener.bind(host: bridge.host, port: 0, loop: loop)
            }
            let served = try HomeBridge(
                settings: HomeBridge.Settings(home: settings.home, account: settings.account, port: listener.port),
                home: home!, manager: manager, loop: loop, logger: logger, clock: clock, firmware: firmware)
            logger.notice("HomeKit bridge listens", metadata: ["port": "\(listener.port)"])
            await started(served, listener)
            let advertiser = bridge.advertise ? HAPAdvertiser(interfaces: bridge.interfaces, logger: logger) : nil
            if let advertiser {
                await served.advertise { record in advertiser.publish(record) }
            }
            await withDiscardingTaskGroup { group in
                // On the loop, whose thread accepts the connections and serves their tasks.
                group.addTask(executorPreference: loop) { await listener.serve(served, logger: logger) }
                group.addTask { await served.follow(changes) }
                if let advertiser {
                    group.addTask {
                        await advertiser.run()
                        // Withdrawn when the bridge stops: the record goes with it.
                        for await _ in AsyncStream<Void>.makeStream().stream {}
                        advertiser.stop()
                    }
                }
            }
        } catch {
            logger.error("HomeKit bridge cannot serve: \(error)")
        }
    }
}
