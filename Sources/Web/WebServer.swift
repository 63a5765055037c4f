import Config
import Foundation
import Gateway
import HTTPTypes
import History
import HomeModel
import Hummingbird
import HummingbirdCore
import Logging
import MQTT
import NIOCore
import ServiceLifecycle
import Synchronization

/// The request context of the page: Hummingbird's core context and the peer's address (for the
/// login throttle).
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: String
    /// Whether the peer is this host (a reverse proxy beside the gateway may then speak for the visitor).
    let isLoopback: Bool

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        let address = source.channel.remoteAddress?.ipAddress
        remoteAddress = address ?? "unknown"
        isLoopback = address.map { $0.hasPrefix("127.") || $0 == "::1" || $0 == "::ffff:127.0.0.1" } ?? false
    }
}

/// The hub's web page (docs/web.md), served by `homegate run` beside the gateway: a login with a
/// broker account, the account's homes with live values and the controls its role allows, and for
/// administrators the accessory browser, rooms, users, pairing and the gateway's health. Every
/// action is a command or request handed to the gateway's ``CommandRouter``, the path MQTT's
/// commands take, with the session's account: the page can do nothing MQTT could not.
package struct WebServer: ServiceLifecycle.Service {
    let host: String
    let port: Int
    let site: WebSite
    let logger: Logger
    let listening: @Sendable (Int) async -> Void

    /// - Parameters:
    ///   - listening: called with the port once the page is served (a configured port 0 is chosen
    ///     by the system).
    ///   - homekit: a home's HomeKit bridge setup, shown to its administrators.
    ///   - history: what each sensor did, for the history pages (none when history is not kept).
    package init(
        settings: GatewayConfiguration.WebSettings, manager: HomeManager, router: CommandRouter,
        credentials: any CredentialChecking, statistics: GatewayStatistics, client: MQTTClient?, logger: Logger,
        listening: @escaping @Sendable (Int) async -> Void = { _ in },
        homekit: @escaping HomeKitPairingSource = { _, _ in nil }, history: HistoryStore? = nil
    ) {
        host = settings.host
        port = settings.port
        site = WebSite(
            manager: manager, router: router, credentials: credentials, statistics: statistics,
            sessions: SessionStore(lifetime: settings.sessionLifetime),
            isConnected: { client?.isConnected ?? false }, logger: logger, behindProxy: settings.behindProxy,
            hosts: AllowedHosts(configured: settings.hosts, listenHost: settings.host), homekit: homekit,
            history: history)
        self.logger = logger
        self.listening = listening
    }

    package func run() async throws {
        let router = site.router()
        let logger = logger
        let listening = listening
        let host = host
        // Hummingbird logs every request at info; the gateway's log keeps only its warnings.
        var quiet = logger
        quiet.logLevel = max(quiet.logLevel, .warning)
        let application = Application(
            router: router,
            server: Self.server(),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.notice("web page on http://\(host.contains(":") ? "[\(host)]" : host):\(port)/")
                await listening(port)
            },
            logger: quiet)
        await withDiscardingTaskGroup { group in
            group.addTask { await cancelWhenGracefulShutdown { await site.followModel() } }
            group.addTask {
                do {
                    try await application.run()
                } catch {
                    // The gateway goes on without its page: MQTT is what the hub is for.
                    logger.error(
                        "the web page could not be served on \(host):\(port); the gateway runs without it",
                        metadata: ["error": "\(error)"])
                    try? await gracefulShutdown()
                }
            }
            // Open pages' event streams never end by themselves; the server's graceful shutdown
            // waits for every response, so they are ended first.
            try? await gracefulShutdown()
            site.feed.closeAll()
        }
    }
}

extension WebServer {
    /// How long a connection may stay silent: between requests (keep-alive) and while a request is
    /// still coming in (one that stops halfway). A live stream being answered is not silent.
    static let idleTimeout = TimeAmount.seconds(30)

    /// HTTP/1.1, connections closed after `idleTimeout` of silence.
    static func server(idleTimeout: TimeAmount = idleTimeout) -> HTTPServerBuilder {
        .http1(configuration: .init(idleTimeout: idleTimeout))
    }
}
