import Foundation
import Gateway
import HTTPTypes
import HomeModel
import Hummingbird
import JSON
import Logging
import MQTT
import NIOCore
import Synchronization

/// The page's routes and what they share: sessions, the login throttle, the live feed.
final class WebSite: Sendable {
    static let sessionCookie = "homegate_session"
    static let loginCookie = "homegate_login"
    /// The largest form accepted.
    static let maximumBody = 65_536
    /// The longest account name a login may name (it becomes a key of the login throttle).
    static let maximumAccountBytes = 256

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
    /// Behind a reverse proxy on this host (`web.behindProxy`): see ``Proxy``.
    let proxy: Proxy
    /// The host names the page is served as (`web.hosts` and the defaults).
    let hosts: AllowedHosts
    /// When the last permit join asked for from the page ends (Unix seconds), for its countdown.
    private let joinOpenUntil = Mutex<Int?>(nil)

    init(
        manager: HomeManager, router: CommandRouter, credentials: any CredentialChecking,
        statistics: GatewayStatistics, sessions: SessionStore, throttle: LoginThrottle = LoginThrottle(),
        isConnected: @escaping @Sendable () -> Bool, logger: Logger, heartbeat: Duration = .seconds(20),
        behindProxy: Bool = false, feed: LiveFeed = LiveFeed(),
        hosts: AllowedHosts = AllowedHosts(configured: [], listenHost: "127.0.0.1")
    ) {
        self.hosts = hosts
        self.feed = feed
        self.heartbeat = heartbeat
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
        router.get("/static/app.css") { _, _ in Self.asset(Assets.stylesheet, type: "text/css; charset=utf-8") }
        router.get("/static/app.js") { _, _ in
            Self.asset(Assets.script, type: "text/javascript; charset=utf-8")
        }
        router.get("/favicon.svg") { _, _ in Self.asset(CategoryIcons.favicon, type: "image/svg+xml") }
        router.get("/login") { [self] request, context in loginPage(request, context: context) }
        router.post("/login") { [self] request, context in try await login(request, context: context) }
        router.post("/logout") { [self] request, context in try await logout(request, context: context) }
        router.get("/") { [self] request, _ in await homesPage(request) }
        router.get("/home") { [self] request, _ in await homePage(request) }
        router.get("/home/live") { [self] request, _ in await liveUpdates(request) }
        router.get("/health") { [self] request, _ in await healthPage(request) }
        router.post("/command") { [self] request, context in try await command(request, context: context) }
        router.post("/request") { [self] request, context in try await operation(request, context: context) }
        return router
    }

    // MARK: Login and logout

    private func loginPage(_ request: Request, context: WebRequestContext) -> Response {
        if sessions.session(request.cookies[Self.sessionCookie]?.value) != nil { return Self.redirect("/") }
        let token = randomToken()
        var response = Self.html(Pages.login(loginToken: token))
        response.setCookie(cookie(Self.loginCookie, token, maxAge: 3_600, path: "/login", request, context))
        return response
    }

    private func login(_ request: Request, context: WebRequestContext) async throws -> Response {
        guard let form = try await Self.form(request) else { return Self.tooLarge() }
        let account = form["account"] ?? ""
        guard let expected = request.cookies[Self.loginCookie]?.value, let sent = form["csrf"],
            sameSecret(expected, sent), proxy.sameOrigin(request, context: context)
        else {
            return forbidden(request, session: nil, "The login form was not this page's own; open the page again.")
        }
        func again(_ status: HTTPResponse.Status, _ problem: String, headers: HTTPFields = [:]) -> Response {
            let token = randomToken()
            var response = Self.html(Pages.login(loginToken: token, account: account, problem: problem), status: status)
            response.headers.append(contentsOf: headers)
            response.setCookie(cookie(Self.loginCookie, token, maxAge: 3_600, path: "/login", request, context))
            return response
        }
        let password = form["password"] ?? ""
        guard !account.isEmpty, !password.isEmpty else { return again(.badRequest, "Enter your account and password.") }
        guard account.utf8.count <= Self.maximumAccountBytes else {
            return again(.badRequest, "An account name has at most \(Self.maximumAccountBytes) bytes.")
        }
        let address = proxy.visitor(request, context: context)
        let started: ContinuousClock.Instant
        switch throttle.begin(account: account, address: address) {
        case .refused(let wait):
            let seconds = max(1, Int(wait.components.seconds) + 1)
            logger.warning("web login refused: too many failed logins", metadata: ["account": "\(printable(account))"])
            return again(
                .tooManyRequests, "Too many failed logins; try again in \(seconds) seconds.",
                headers: [.retryAfter: "\(seconds)"])
        case .admitted(let moment):
            started = moment
        }
        switch await credentials.check(account: account, password: password) {
        case .accepted:
            throttle.finish(.succeeded, account: account, address: address, at: started)
            let session = sessions.start(account: account)
            // A session this login pushed out (the account's oldest) takes its streams with it.
            feed.closeEnded { [sessions] in sessions.session($0) != nil }
            var response = Self.redirect("/")
            response.setCookie(
                cookie(
                    Self.sessionCookie, session.token, maxAge: sessions.secondsLeft(session), path: "/", request,
                    context))
            response.setCookie(cookie(Self.loginCookie, "", maxAge: 0, path: "/login", request, context))
            logger.info("web login", metadata: ["account": "\(printable(account))"])
            return response
        case .refused:
            throttle.finish(.failed, account: account, address: address, at: started)
            logger.notice("web login failed", metadata: ["account": "\(printable(account))", "from": "\(address)"])
            return again(.unauthorized, "Wrong account or password.")
        case .unavailable(let reason):
            throttle.finish(.notChecked, account: account, address: address, at: started)
            return again(.serviceUnavailable, "Logging in is not possible now: \(reason)")
        }
    }

    private func logout(_ request: Request, context: WebRequestContext) async throws -> Response {
        guard let session = sessions.session(request.cookies[Self.sessionCookie]?.value) else {
            return Self.redirect("/login")
        }
        guard let form = try await Self.form(request) else { return Self.tooLarge() }
        guard let sent = form["csrf"], sameSecret(session.csrf, sent), proxy.sameOrigin(request, context: context)
        else {
            return forbidden(request, session: session, "That form was not this page's own; nothing was done.")
        }
        sessions.end(session.token)
        feed.close(session: session.token)
        var response = Self.redirect("/login")
        response.setCookie(cookie(Self.sessionCookie, "", maxAge: 0, path: "/", request, context))
        return response
    }

    // MARK: Pages

    private func homesPage(_ request: Request) async -> Response {
        guard let session = sessions.session(request.cookies[Self.sessionCookie]?.value) else {
            return Self.redirect("/login")
        }
        let homes = await manager.homes(for: session.account)
        return Self.html(
            Pages.homes(session: session, homes: homes, notice: sessions.takeNotice(session.token)))
    }

    private func homePage(_ request: Request) async -> Response {
        guard let session = sessions.session(request.cookies[Self.sessionCookie]?.value) else {
            return Self.redirect("/login")
        }
        let name = request.uri.queryParameters["name"].map(String.init) ?? ""
        let homes = await manager.homes(for: session.account)
        guard let summary = homes.first(where: { HomeName.matches($0.name, name) }),
            let home = try? await manager.home(summary.name, account: session.account)
        else {
            // In the words MQTT uses: a home is none of a non-member's business.
            return Self.html(
                Pages.problem(
                    title: "No such home", message: "There is no home named '\(name)'.", session: session, homes: homes),
                status: .notFound)
        }
        let discovered = summary.role.mayChangeLayout ? await manager.discoveredAccessories() : []
        let paired = summary.role.mayChangeLayout ? await manager.accessoriesWithPairing(in: home) : []
        let until = joinOpenUntil.withLock { $0 }.flatMap { $0 > Int(Date().timeIntervalSince1970) ? $0 : nil }
        let context = Pages.HomeContext(
            session: session, homes: homes, home: home, role: summary.role, discovered: discovered, paired: paired,
            notice: sessions.takeNotice(session.token), joinOpenUntil: until)
        return Self.html(Pages.home(context))
    }

    private func healthPage(_ request: Request) async -> Response {
        guard let session = sessions.session(request.cookies[Self.sessionCookie]?.value) else {
            return Self.redirect("/login")
        }
        let homes = await manager.homes(for: session.account)
        guard homes.contains(where: { $0.role == .administrator }) else {
            return Self.html(
                Pages.problem(
                    title: "Not allowed", message: "The gateway's health is for administrators of a home.",
                    session: session, homes: homes),
                status: .forbidden)
        }
        let health = Pages.Health(
            connected: isConnected(), summary: statistics.summary(), residentBytes: HealthService.residentBytes(),
            openPages: feed.openPages, version: HealthService.version, drivers: await manager.driverReports())
        return Self.html(Pages.health(session: session, homes: homes, health: health))
    }

    // MARK: Live values

    /// Server-sent events for one home's page: values, reachability, and `reload` when the layout
    /// or the account's homes changed, after which the stream ends (the page loads itself again,
    /// and its account's membership is checked again then). Every `heartbeat` it checks that the
    /// session lives and writes a comment, which also finds a browser that went away. Ends with
    /// `ended` when the session does (logout, expiry), and at shutdown.
    private func liveUpdates(_ request: Request) async -> Response {
        guard let session = sessions.session(request.cookies[Self.sessionCookie]?.value) else {
            return Response(status: .unauthorized)
        }
        let name = request.uri.queryParameters["name"].map(String.init) ?? ""
        let homes = await manager.homes(for: session.account).filter { HomeName.matches($0.name, name) }
        guard !homes.isEmpty else { return Response(status: .notFound) }
        let sessions = sessions
        let mailbox: LiveMailbox
        switch feed.open(
            homes: Set(homes.map(\.id)), session: session.token, account: session.account,
            isAdministrator: homes.contains { $0.role == .administrator }, isLive: { sessions.session($0) != nil })
        {
        case .success(let opened): mailbox = opened
        case .failure(.tooMany):
            return Response(status: .tooManyRequests, headers: [.retryAfter: "10", .cacheControl: "no-store"])
        case .failure(.closed):
            return Response(status: .serviceUnavailable, headers: [.cacheControl: "no-store"])
        }
        let feed = feed
        let heartbeat = heartbeat
        let body = ResponseBody { writer in
            defer { feed.close(mailbox) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The heartbeat, a child of the stream: it ends with it.
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: heartbeat)
                        mailbox.poke()
                    }
                }
                defer { group.cancelAll() }
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                for await _ in mailbox.signals {
                    // A session that ended hears nothing more, whatever is waiting.
                    if sessions.session(session.token) == nil { break }
                    let updates = mailbox.take()
                    guard !updates.isEmpty else {
                        try await writer.write(ByteBuffer(string: ": alive\n\n"))
                        continue
                    }
                    try await writer.write(ByteBuffer(string: updates.map(\.event).joined()))
                    feed.noteWritten(updates.count)
                    if updates.contains(.reload) { break }
                }
                if sessions.session(session.token) == nil {
                    try await writer.write(ByteBuffer(string: "event: ended\ndata: {}\n\n"))
                }
                try await writer.finish(nil)
            }
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: body)
    }

    // MARK: Actions

    /// A command of a home (`set`, `run`, `identify`) from the form's fields, as the session's
    /// account.
    private func command(_ request: Request, context: WebRequestContext) async throws -> Response {
        try await act(request, context: context) { form, session in
            let path = AccessoryPath(
                home: form["home"] ?? "", room: form["room"] ?? "", accessory: form["accessory"] ?? "")
            let action: Command.Action
            switch form["kind"] {
            case "set":
                let characteristic = CharacteristicPath(
                    path, service: form["service"] ?? "", characteristic: form["characteristic"] ?? "")
                action = .write(characteristic, value: Array((form["value"] ?? "").utf8))
            case "run":
                action = .runActionSet(home: path.home, actionSet: form["actionSet"] ?? "")
            case "identify":
                action = .identify(path)
            default:
                return Notice(succeeded: false, text: "Unknown command.", code: HomeError.Code.invalidParameter.name)
            }
            return await perform(Command(account: session.account, action))
        }
    }

    /// A request (the operations of `B/$request/<account>/<operation>`) from the form's fields.
    private func operation(_ request: Request, context: WebRequestContext) async throws -> Response {
        try await act(request, context: context) { form, session in
            var members: [(key: String, value: JSON)] = []
            for (name, value) in form.fields where !["csrf", "operation", "return"].contains(name) {
                guard !members.contains(where: { $0.key == name }) else { continue }
                if name == "room" && value.isEmpty { continue }
                if name == "seconds" || name == "value", let number = Int(value) {
                    members.append((name, .integer(number)))
                } else if name == "enabled" {
                    members.append((name, .bool(value == "true")))
                } else if name == "actionSets" {
                    members.append((name, .array([.string(value)])))
                } else {
                    members.append((name, .string(value)))
                }
            }
            let operation: Command.Request
            do throws(HomeError) {
                operation = try Command.Request(operation: form["operation"] ?? "", body: .object(members))
            } catch {
                statistics.handled(.failed(code: error.code.name))
                return Notice(succeeded: false, text: error.message, code: error.code.name)
            }
            let notice = await perform(Command(account: session.account, .request(operation)))
            if case .permitJoin(let seconds) = operation, notice.succeeded {
                joinOpenUntil.withLock { $0 = Int(Date().timeIntervalSince1970) + seconds }
            }
            return notice
        }
    }

    /// Checks the session and the form's CSRF token, runs `perform`, and answers: JSON for the
    /// page's script, else a redirect back with the notice kept for the next page.
    private func act(
        _ request: Request, context: WebRequestContext, _ perform: (FormBody, Session) async -> Notice
    ) async throws -> Response {
        let wantsJSON = request.headers[.accept]?.contains("application/json") ?? false
        guard let session = sessions.session(request.cookies[Self.sessionCookie]?.value) else {
            return wantsJSON
                ? Self.json(
                    Notice(succeeded: false, text: "Log in again.", code: "sessionExpired"), status: .unauthorized)
                : Self.redirect("/login")
        }
        guard let form = try await Self.form(request) else { return Self.tooLarge() }
        guard let sent = form["csrf"], sameSecret(session.csrf, sent), proxy.sameOrigin(request, context: context)
        else {
            logger.warning(
                "web: refused a form without this session's token", metadata: ["account": "\(session.account)"])
            return wantsJSON
                ? Self.json(
                    Notice(
                        succeeded: false, text: "That form was not this page's own; nothing was done.",
                        code: "forbidden"),
                    status: .forbidden)
                : forbidden(request, session: session, "That form was not this page's own; nothing was done.")
        }
        let notice = await perform(form, session)
        if wantsJSON { return Self.json(notice) }
        sessions.leave(notice, for: session.token)
        return Self.redirect(Self.safeReturn(form["return"]))
    }

    /// Runs a command through the gateway's command path (the account's rate, the model's checks)
    /// and says in words what became of it.
    private func perform(_ command: Command) async -> Notice {
        do throws(HomeError) {
            _ = try await commands.perform(command)
            statistics.handled(.succeeded)
            return Notice(succeeded: true, text: Self.doneText(command.action), code: nil)
        } catch {
            statistics.handled(.failed(code: error.code.name))
            return Notice(succeeded: false, text: error.message, code: error.code.name)
        }
    }

    static func doneText(_ action: Command.Action) -> String {
        guard case .request(let request) = action else { return "Done." }
        switch request {
        case .edit(.addAccessory): return "The accessory was added."
        case .edit(.removeAccessory): return "The accessory was removed from the home."
        case .edit(.renameAccessory), .edit(.renameRoom), .edit(.renameZone): return "Renamed."
        case .edit(.assignAccessory): return "The accessory was moved."
        case .edit(.addRoom): return "The room was added."
        case .edit(.removeRoom): return "The room was removed."
        case .edit(.addZone): return "The zone was added."
        case .edit(.removeZone): return "The zone was removed."
        case .edit(.addRoomToZone): return "The room was added to the zone."
        case .edit(.addUser): return "The guest was added."
        case .edit(.removeUser), .edit(.removeMember): return "The user was removed."
        case .permitJoin: return "Joining is open."
        case .pairAccessory: return "Paired, and added to the home."
        case .unpairAccessory: return "The pairing was removed, and the accessory with it."
        default: return "Done."
        }
    }

    // MARK: Responses

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ notice: Notice, status: HTTPResponse.Status = .ok) -> Response {
        var members: [(key: String, value: JSON)] = [
            ("ok", .bool(notice.succeeded)), ("message", .string(notice.text)),
        ]
        if let code = notice.code { members.append(("code", .string(code))) }
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSON.object(members).bytes)))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static func tooLarge() -> Response {
        html(
            Pages.problem(title: "Too large", message: "The form is too large.", session: nil), status: .contentTooLarge
        )
    }

    private func forbidden(_ request: Request, session: Session?, _ message: String) -> Response {
        Self.html(Pages.problem(title: "Refused", message: message, session: session), status: .forbidden)
    }

    /// A cookie of the page: HttpOnly, SameSite=Strict, and Secure when the browser came over HTTPS
    /// (through a trusted proxy).
    private func cookie(
        _ name: String, _ value: String, maxAge: Int, path: String, _ request: Request, _ context: WebRequestContext
    ) -> Cookie {
        Cookie(
            name: name, value: value, maxAge: maxAge, path: path, secure: proxy.isHTTPS(request, context: context),
            httpOnly: true, sameSite: .strict)
    }

    /// The form of a POST, or nil when it is larger than ``maximumBody``.
    static func form(_ request: Request) async throws -> FormBody? {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: maximumBody) else { return nil }
        return FormBody(String(buffer: buffer))
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

/// Headers on every answer: no framing, no sniffing, scripts and styles only from the page itself.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = WebRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Not found, a method no route takes (HEAD, OPTIONS): answered here, so they carry the
            // headers too.
            response = try error.response(from: request, context: context)
        }
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        // (not no-referrer: with it browsers send `Origin: null` on their own forms)
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }
}

/// What the page believes of forwarding headers. Without `web.behindProxy` none of them: the peer is
/// the visitor and the `Host` header the page's host. With it, and only for requests from this host
/// (the proxy beside the gateway), the last `X-Forwarded-For` address is the visitor (what the login
/// throttle counts), `X-Forwarded-Host` the host the browser used, `X-Forwarded-Proto` its scheme.
struct Proxy: Sendable {
    let isTrusted: Bool

    private func trusts(_ context: WebRequestContext) -> Bool { isTrusted && context.isLoopback }

    private static func last(_ request: Request, _ name: String) -> String? {
        guard let field = HTTPField.Name(name), let value = request.headers[values: field].last else { return nil }
        let item = value.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        return item?.isEmpty == false ? item : nil
    }

    /// The address the login throttle counts for this request.
    func visitor(_ request: Request, context: WebRequestContext) -> String {
        guard trusts(context), let forwarded = Self.last(request, "X-Forwarded-For") else {
            return context.remoteAddress
        }
        return forwarded
    }

    /// Whether the browser reached the page over HTTPS (so cookies may say `Secure`).
    func isHTTPS(_ request: Request, context: WebRequestContext) -> Bool {
        trusts(context) && Self.last(request, "X-Forwarded-Proto")?.lowercased() == "https"
    }

    /// A POST must come from this page: a browser's `Origin` (when it sends one) must name the host
    /// the page is served on, and `Sec-Fetch-Site` must not say another site. Beside the CSRF token.
    func sameOrigin(_ request: Request, context: WebRequestContext) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site == "cross-site" || site == "same-site" {
            return false
        }
        guard let origin = request.headers[.origin] else { return true }
        guard let host = host(request, context: context) else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// The host (and port) the browser asked for: `X-Forwarded-Host` from a trusted proxy, else `Host`.
    func host(_ request: Request, context: WebRequestContext) -> String? {
        (trusts(context) ? Self.last(request, "X-Forwarded-Host") : nil) ?? request.head.authority
    }
}
