import Foundation
import Gateway
import HTTPTypes
import History
import HomeModel
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import TestSupport
import Testing
import VirtualDevices

@testable import Web

/// Passwords are the account's name; every other password is refused. Counts the checks.
final class FakeCredentials: CredentialChecking {
    let checks = Mutex(0)

    func check(account: String, password: String) async -> CredentialCheck {
        checks.withLock { $0 += 1 }
        return account == password ? .accepted : .refused
    }
}

/// Holds every check until the test opens the gate; counts the checks begun. Refuses every password.
final class GatedCredentials: CredentialChecking {
    private struct State {
        var begun = 0
        var isOpen = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var begun: Int { state.withLock { $0.begun } }

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    func check(account: String, password: String) async -> CredentialCheck {
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state in
                state.begun += 1
                if state.isOpen { return true }
                state.waiting.append(continuation)
                return false
            }
            if proceed { continuation.resume() }
        }
        return .refused
    }
}

/// A clock the tests move: sessions and the login throttle read it.
final class TestClock: Sendable {
    private let offset = Mutex(Duration.zero)
    private let start = ContinuousClock.now

    var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
}

/// The demo home in memory behind the page's routes, with fake credentials and a clock of the
/// test's own.
struct WebFixture {
    static let demoHome = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/demo-home.yml")

    let manager: HomeManager
    let site: WebSite
    let credentials: FakeCredentials
    let clock: TestClock
    let statistics: GatewayStatistics

    static func make(
        sessionLifetime: Duration = .seconds(3600), heartbeat: Duration = .seconds(20),
        checker: (any CredentialChecking)? = nil, behindProxy: Bool = false, feed: LiveFeed = LiveFeed(),
        sessionsPerAccount: Int = 20, hosts: [String] = [], history: HistoryStore? = nil, home: URL = demoHome
    ) async throws -> WebFixture {
        let demo = try DemoHome.load(contentsOf: home)
        let manager = try HomeManager(database: .inMemory())
        // The devices' simulated time stands still (a day per tick): a sensor drifting every second
        // would put its values on a page before the one a test waits for, as often as the load makes it.
        try await manager.attach(VirtualDriver(devices: demo.devices, tick: .seconds(86_400)))
        try await demo.seed(manager)
        let clock = TestClock()
        let credentials = FakeCredentials()
        let statistics = GatewayStatistics()
        var logger = Logger(label: "test.web")
        logger.logLevel = .critical
        let site = WebSite(
            manager: manager,
            router: CommandRouter(manager: manager, topics: Topics(), defaultAccount: nil, rateLimit: nil),
            credentials: checker ?? credentials, statistics: statistics,
            sessions: SessionStore(lifetime: sessionLifetime, perAccount: sessionsPerAccount, now: { clock.now }),
            throttle: LoginThrottle(now: { clock.now }), isConnected: { true }, logger: logger, heartbeat: heartbeat,
            behindProxy: behindProxy, feed: feed, hosts: AllowedHosts(configured: hosts, listenHost: "127.0.0.1"),
            history: history)
        return WebFixture(manager: manager, site: site, credentials: credentials, clock: clock, statistics: statistics)
    }

    /// Runs `body` with a client of the page's routes (no network, or a real server on loopback
    /// with `.live`), then stops the home.
    func test<T: Sendable>(
        _ mode: TestingSetup = .router, idleTimeout: TimeAmount = WebServer.idleTimeout,
        _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let application = Application(
            router: site.router(), server: WebServer.server(idleTimeout: idleTimeout),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let following = Task { [site] in await site.followModel() }
        defer { following.cancel() }
        do {
            let result = try await application.test(mode, body)
            await manager.shutdown()
            return result
        } catch {
            await manager.shutdown()
            throw error
        }
    }

    /// Opens `browser`'s live stream of the Main House and returns once the page is open; the task
    /// ends with the stream.
    func openLiveStream(_ client: some TestClientProtocol, _ browser: Browser) async throws
        -> Task<TestResponse, any Error>
    {
        let opened = site.feed.openPages
        let stream = Task {
            try await client.execute(uri: "/home/live?name=Main%20House", method: .get, headers: browser.headers)
        }
        try await eventually("the live page open") { site.feed.openPages != opened }
        return stream
    }

    /// The value of a characteristic of the Main House, read from the model.
    func value(_ accessory: String, _ type: CharacteristicType, home: String = "Main House") async throws
        -> CharacteristicValue?
    {
        let home = try await manager.home(home, account: "owner")
        return home.accessories.first { $0.name == accessory }?.services.lazy.compactMap { $0.characteristic(type) }
            .first?.value
    }
}

/// A logged-in browser: its session cookie and the CSRF token its pages carry.
struct Browser: Sendable {
    var cookie: String
    var csrf: String

    var headers: HTTPFields { [.cookie: "homegate_session=\(cookie)"] }
}

extension TestClientProtocol {
    /// Logs in as `account` (password = account) the way a browser does: the login page, its
    /// token, the form.
    func logIn(_ account: String, password: String? = nil) async throws -> Browser {
        let (token, loginCookie) = try await loginForm()
        let response = try await post(
            "/login", ["csrf": token, "account": account, "password": password ?? account],
            headers: [.cookie: "homegate_login=\(loginCookie)"])
        guard response.status == .seeOther, let cookie = response.cookie("homegate_session") else {
            throw WebTestError("login as \(account) answered \(response.status)")
        }
        let home = try await execute(uri: "/", method: .get, headers: [.cookie: "homegate_session=\(cookie)"])
        guard let csrf = home.bodyText.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/)?.1 else {
            throw WebTestError("no CSRF token on the homes page")
        }
        return Browser(cookie: cookie, csrf: String(csrf))
    }

    /// The login page's token and the cookie that goes with it.
    func loginForm() async throws -> (token: String, cookie: String) {
        let page = try await execute(uri: "/login", method: .get)
        guard let token = page.bodyText.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/)?.1,
            let cookie = page.cookie("homegate_login")
        else { throw WebTestError("the login page has no token") }
        return (String(token), cookie)
    }

    /// Sends `fields` as an urlencoded form.
    func post(_ uri: String, _ fields: KeyValuePairs<String, String>, headers: HTTPFields = [:]) async throws
        -> TestResponse
    {
        try await post(uri, pairs: fields.map { ($0.key, $0.value) }, headers: headers)
    }

    /// Posts fields in this order, repeated names and all (a form as the page has it).
    func post(_ uri: String, pairs fields: [(String, String)], headers: HTTPFields = [:]) async throws -> TestResponse {
        let body = fields.map { "\(formEncoded($0.0))=\(formEncoded($0.1))" }.joined(separator: "&")
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }
}

func formEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}

extension TestResponse {
    var bodyText: String { String(buffer: body) }

    /// The value a `Set-Cookie` of this response gives `name`.
    func cookie(_ name: String) -> String? {
        headers[values: .setCookie].lazy.compactMap { header -> String? in
            guard header.hasPrefix(name + "=") else { return nil }
            return String(header.dropFirst(name.count + 1).prefix { $0 != ";" })
        }.first
    }

    func setCookieHeader(_ name: String) -> String? {
        headers[values: .setCookie].first { $0.hasPrefix(name + "=") }
    }
}

struct WebTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
