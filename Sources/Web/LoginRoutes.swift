import HTTPTypes
import Hummingbird
import Logging

/// Logging in and out. The login form carries a token of its own (in a cookie for `/login` only),
/// and logins are throttled per account and address (``LoginThrottle``).
struct LoginRoutes {
    static let loginCookie = "homegate_login"
    /// The longest account name a login may name (it becomes a key of the login throttle).
    static let maximumAccountBytes = 256

    let site: WebSite

    var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.get("/login") { request, context in loginPage(request, context: context) }
        routes.post("/login") { request, context in try await login(request, context: context) }
        routes.post("/logout") { request, context in try await logout(request, context: context) }
        return routes
    }

    private func loginPage(_ request: Request, context: WebRequestContext) -> Response {
        if site.session(of: request) != nil { return .seeOther("/") }
        return withLoginToken({ Pages.login(loginToken: $0) }, request, context)
    }

    /// `page` with a new login token, in the page and in its cookie.
    private func withLoginToken(
        _ page: (String) -> String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], _ request: Request,
        _ context: WebRequestContext
    ) -> Response {
        let token = randomToken()
        var response = Response.page(page(token), status: status)
        response.headers.append(contentsOf: headers)
        response.setCookie(site.cookie(Self.loginCookie, token, maxAge: 3_600, path: "/login", request, context))
        return response
    }

    private func login(_ request: Request, context: WebRequestContext) async throws -> Response {
        let form = try await request.form(LoginForm.self)
        let account = form.account ?? ""
        guard let expected = request.cookies[Self.loginCookie]?.value, let sent = form.csrf,
            sameSecret(expected, sent), site.proxy.sameOrigin(request, context: context)
        else {
            return .problem(
                "Refused", "The login form was not this page's own; open the page again.", status: .forbidden)
        }
        func again(_ status: HTTPResponse.Status, _ problem: String, headers: HTTPFields = [:]) -> Response {
            withLoginToken(
                { Pages.login(loginToken: $0, account: account, problem: problem) }, status: status, headers: headers,
                request, context)
        }
        let password = form.password ?? ""
        guard !account.isEmpty, !password.isEmpty else { return again(.badRequest, "Enter your account and password.") }
        guard account.utf8.count <= Self.maximumAccountBytes else {
            return again(.badRequest, "An account name has at most \(Self.maximumAccountBytes) bytes.")
        }
        let address = site.proxy.visitor(request, context: context)
        let logger = site.logger
        let started: ContinuousClock.Instant
        switch site.throttle.begin(account: account, address: address) {
        case .refused(let wait):
            let seconds = max(1, Int(wait.components.seconds) + 1)
            logger.warning("web login refused: too many failed logins", metadata: ["account": "\(printable(account))"])
            return again(
                .tooManyRequests, "Too many failed logins; try again in \(seconds) seconds.",
                headers: [.retryAfter: "\(seconds)"])
        case .admitted(let moment):
            started = moment
        }
        switch await site.credentials.check(account: account, password: password) {
        case .accepted:
            site.throttle.finish(.succeeded, account: account, address: address, at: started)
            let sessions = site.sessions
            let session = sessions.start(account: account)
            // A session this login pushed out (the account's oldest) takes its streams with it.
            site.feed.closeEnded { sessions.session($0) != nil }
            var response = Response.seeOther("/")
            response.setCookie(
                site.cookie(
                    SessionStore.cookie, session.token, maxAge: sessions.secondsLeft(session), path: "/", request,
                    context))
            response.setCookie(site.cookie(Self.loginCookie, "", maxAge: 0, path: "/login", request, context))
            logger.info("web login", metadata: ["account": "\(printable(account))"])
            return response
        case .refused:
            site.throttle.finish(.failed, account: account, address: address, at: started)
            logger.notice("web login failed", metadata: ["account": "\(printable(account))", "from": "\(address)"])
            return again(.unauthorized, "Wrong account or password.")
        case .unavailable(let reason):
            site.throttle.finish(.notChecked, account: account, address: address, at: started)
            return again(.serviceUnavailable, "Logging in is not possible now: \(reason)")
        }
    }

    private func logout(_ request: Request, context: WebRequestContext) async throws -> Response {
        guard let session = site.session(of: request) else { return .seeOther("/login") }
        let form = try await request.form(LogoutForm.self)
        guard let sent = form.csrf, sameSecret(session.csrf, sent), site.proxy.sameOrigin(request, context: context)
        else {
            return .problem(
                "Refused", "That form was not this page's own; nothing was done.", session: session, status: .forbidden)
        }
        site.sessions.end(session.token)
        site.feed.close(session: session.token)
        var response = Response.seeOther("/login")
        response.setCookie(site.cookie(SessionStore.cookie, "", maxAge: 0, path: "/", request, context))
        return response
    }
}
