import AsyncMailbox
import Execution
import HomeModel
import Logging
import ServiceLifecycle

/// Serves the configured homes as HomeKit bridges for the gateway's lifetime: for each, it waits
/// until the home is there for the bridge's account (a home the configuration names may be made
/// later over MQTT), then listens for controllers and follows the home's changes.
package struct HomeKitBridgeService: ServiceLifecycle.Service {
    /// One bridge to serve and where to listen.
    package struct Bridge: Sendable {
        package let settings: HomeBridge.Settings
        package let host: String

        package init(_ settings: HomeBridge.Settings, host: String) {
            self.settings = settings
            self.host = host
        }
    }

    private let bridges: [Bridge]
    private let manager: HomeManager
    private let logger: Logger
    private let clock: AnyClock
    private let firmware: String
    /// Told of each bridge once it listens (tests learn a bridge's port and state from it).
    private let started: @Sendable (HomeBridge, BridgeListener) async -> Void

    package init(
        bridges: [Bridge], manager: HomeManager, logger: Logger, clock: AnyClock = AnyClock(ContinuousClock()),
        firmware: String, started: @escaping @Sendable (HomeBridge, BridgeListener) async -> Void = { _, _ in }
    ) {
        self.bridges = bridges
        self.manager = manager
        self.logger = logger
        self.clock = clock
        self.firmware = firmware
        self.started = started
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for bridge in bridges {
                    group.addTask { await serve(bridge) }
                }
            }
        }
    }

    private func serve(_ bridge: Bridge) async {
        let settings = bridge.settings
        let logger = {
            var logger = self.logger
            logger[metadataKey: "home"] = "\(settings.home)"
            return logger
        }()
        // Subscribed before the home is looked for, so that no change between the two is missed.
        let changes = await manager.changes()
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
            let served = try HomeBridge(
                settings: settings, home: home!, manager: manager, logger: logger, clock: clock, firmware: firmware)
            let listener = try await BridgeListener.bind(host: bridge.host, port: settings.port)
            logger.notice("HomeKit bridge listens", metadata: ["port": "\(listener.port)"])
            await started(served, listener)
            await withDiscardingTaskGroup { group in
                group.addTask { await listener.serve(served, logger: logger) }
                group.addTask { await served.follow(changes) }
            }
        } catch {
            logger.error("HomeKit bridge cannot serve: \(error)")
        }
    }
}
