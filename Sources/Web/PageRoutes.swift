import Foundation
import Gateway
import History
import HomeModel
import Hummingbird
import Schedules
import Synchronization

/// The pages a session reads: its homes, one home, and (for administrators) the gateway's health.
/// Without a session each sends the browser to the login.
struct PageRoutes {
    let site: WebSite

    var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.get("/") { request, _ in await withSession(request, homesPage) }
        routes.get("/home") { request, _ in await withSession(request) { await homePage(request, $0) } }
        routes.get("/health") { request, _ in await withSession(request, healthPage) }
        return routes
    }

    private func withSession(_ request: Request, _ page: (Session) async -> Response) async -> Response {
        guard let session = site.session(of: request) else { return .seeOther("/login") }
        return await page(session)
    }

    private func homesPage(_ session: Session) async -> Response {
        let homes = await site.manager.homes(for: session.account)
        return .page(Pages.homes(session: session, homes: homes, notice: site.sessions.takeNotice(session.token)))
    }

    private func homePage(_ request: Request, _ session: Session) async -> Response {
        let manager = site.manager
        let name = request.uri.queryParameters["name"].map(String.init) ?? ""
        let homes = await manager.homes(for: session.account)
        guard let summary = homes.first(where: { HomeName.matches($0.name, name) }),
            let home = try? await manager.home(summary.name, account: session.account)
        else {
            // In the words MQTT uses: a home is none of a non-member's business.
            return .problem(
                "No such home", "There is no home named '\(name)'.", session: session, homes: homes, status: .notFound)
        }
        let discovered = summary.role.mayChangeLayout ? await manager.discoveredAccessories() : []
        let paired = summary.role.mayChangeLayout ? await manager.accessoriesWithPairing(in: home) : []
        let until = site.joinOpenUntil.withLock { $0 }.flatMap { $0 > Int(Date().timeIntervalSince1970) ? $0 : nil }
        let homekit = summary.role.mayChangeLayout ? await site.homekit(home.id, home.name) : nil
        var context = Pages.HomeContext(
            session: session, homes: homes, home: home, role: summary.role, discovered: discovered, paired: paired,
            notice: site.sessions.takeNotice(session.token), joinOpenUntil: until, homekit: homekit,
            historyKept: site.history != nil)
        let states = (try? manager.scheduleStates()) ?? [:]
        for trigger in home.triggers { context.lastFirings[trigger.id] = states[trigger.id]?.lastFiring?.instant }
        if let history = site.history {
            context.lastRuns = (try? await history.lastFirings(home: home.id)) ?? AutomationFirings()
            // One query for every card's small line; a history that cannot be read leaves them out.
            let to = Date()
            context.recentSpan = (to.addingTimeInterval(-86_400), to)
            context.recentLines =
                (try? await history.recentLines(home: home.id, from: context.recentSpan.from, to: to)) ?? [:]
        }
        return .page(Pages.home(context))
    }

    private func healthPage(_ session: Session) async -> Response {
        let homes = await site.manager.homes(for: session.account)
        guard homes.contains(where: { $0.role == .administrator }) else {
            return .problem(
                "Not allowed", "The gateway's health is for administrators of a home.", session: session,
                homes: homes, status: .forbidden)
        }
        let health = Pages.Health(
            connected: site.isConnected(), summary: site.statistics.summary(),
            residentBytes: HealthService.residentBytes(), openPages: site.feed.openPages,
            version: HealthService.version, drivers: await site.manager.driverReports())
        return .page(Pages.health(session: session, homes: homes, health: health))
    }
}
