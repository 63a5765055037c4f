import AsyncMailbox
import Execution
import Gateway
import History
import HomeModel
import Hummingbird
import Logging
import Synchronization

/// The page's parts that every area shares (sessions, the login throttle, the live feed, the
/// gateway's command path) and the router that puts the areas' routes together.
final class WebSite: Sendable {
    /// The largest form accepted.
    static let maximumBody = 65_536

    let manager: HomeManager
    let commands: CommandRouter
    let credentials: any CredentialChecking
    let statistics: GatewayStatistics
    let sessions: SessionStore
    let throttle: LoginThrottle
    let feed: LiveFeed
    let isConnected: @Sendable () -> Bool
    let logger: Logger
    /// How often an open page's stream checks its session and shows it is alive.
    let heartbeat: Duration
    /// What the heartbeat runs on.
    let clock: AnyClock
    /// Behind a reverse proxy on this host (`web.behindProxy`): see ``Proxy``.
    let proxy: Proxy
    /// The host names the page is served as (`web.hosts` and the defaults).
    let hosts: AllowedHosts
    /// When the last permit join asked for from the page ends (Unix seconds), for its countdown.
    let joinOpenUntil = Mutex<Int?>(nil)
    /// A home's HomeKit bridge setup, for its administrators.
    let homekit: HomeKitPairingSource
    /// What each sensor did, when the gateway keeps it (`history.enabled`): drawn on the history page.
    let history: HistoryStore?

    init(
        manager: HomeManager, router: CommandRouter, credentials: any CredentialChecking,
        statistics: GatewayStatistics, sessions: SessionStore, throttle: LoginThrottle = LoginThrottle(),
        isConnected: @escaping @Sendable () -> Bool, logger: Logger, heartbeat: Duration = .seconds(20),
        clock: some Clock<Duration> = ContinuousClock(),
        behindProxy: Bool = false, feed: LiveFeed = LiveFeed(),
        hosts: AllowedHosts = AllowedHosts(configured: [], listenHost: "127.0.0.1"),
        homekit: @escaping HomeKitPairingSource = { _, _ in nil }, history: HistoryStore? = nil
    ) {
        self.hosts = hosts
        self.homekit = homekit
        self.history = history
        self.feed = feed
        self.heartbeat = heartbeat
        self.clock = AnyClock(clock)
        proxy = Proxy(isTrusted: behindProxy)
        self.manager = manager
        commands = router
        self.credentials = credentials
        self.statistics = statistics
        self.sessions = sessions
        self.throttle = throttle
        self.isConnected = isConnected
        self.logger = logger
    }

    /// Hands every model event to the open pages.
    func followModel() async {
        for await event in await manager.events() { feed.deliver(event) }
    }

    func router() -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: SecurityHeaders())
        router.add(middleware: HostCheck(allowed: hosts, proxy: proxy))
        router.addRoutes(AssetRoutes.collection)
        router.addRoutes(LoginRoutes(site: self).collection)
        router.addRoutes(PageRoutes(site: self).collection)
        router.addRoutes(HistoryRoutes(site: self).collection)
        router.addRoutes(LiveRoutes(site: self).collection)
        router.addRoutes(ActionRoutes(site: self).collection)
        return router
    }

    /// The live session whose cookie `request` carries.
    func session(of request: Request) -> Session? {
        sessions.session(request.cookies[SessionStore.cookie]?.value)
    }

    /// A cookie of the page: HttpOnly, SameSite=Strict, and Secure when the browser came over HTTPS
    /// (through a trusted proxy).
    func cookie(
        _ name: String, _ value: String, maxAge: Int, path: String, _ request: Request, _ context: WebRequestContext
    ) -> Cookie {
        Cookie(
            name: name, value: value, maxAge: maxAge, path: path, secure: proxy.isHTTPS(request, context: context),
            httpOnly: true, sameSite: .strict)
    }

    /// Only the pages a form returns to (`/`, `/home?name=…`, `/health`), and nothing a browser
    /// would read as another host: no control characters, no backslash.
    static func safeReturn(_ path: String?) -> String {
        guard let path, path == "/" || path == "/health" || path.hasPrefix("/home?name="),
            !path.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F || $0 == "\\" })
        else { return "/" }
        return path
    }
}
