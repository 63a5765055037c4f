import Execution
import HomeModel
import Hummingbird
import NIOCore

/// An open home page's live values, as server-sent events (``LiveFeed``).
struct LiveRoutes {
    let site: WebSite

    var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.get("/home/live") { request, _ in await liveUpdates(request) }
        return routes
    }

    /// Server-sent events for one home's page: values, reachability, and `reload` when the layout
    /// or the account's homes changed, after which the stream ends (the page loads itself again,
    /// and its account's membership is checked again then). Every `heartbeat` it checks that the
    /// session lives and writes a comment, which also finds a browser that went away. Ends with
    /// `ended` when the session does (logout, expiry), and at shutdown.
    private func liveUpdates(_ request: Request) async -> Response {
        guard let session = site.session(of: request) else { return Response(status: .unauthorized) }
        let name = request.uri.queryParameters["name"].map(String.init) ?? ""
        let homes = await site.manager.homes(for: session.account).filter { HomeName.matches($0.name, name) }
        guard !homes.isEmpty else { return Response(status: .notFound) }
        let sessions = site.sessions
        let feed = site.feed
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
        let (heartbeat, clock) = (site.heartbeat, site.clock)
        let body = ResponseBody { writer in
            defer { feed.close(mailbox) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The heartbeat, a child of the stream: it ends with it.
                group.addTask { await clock.every(heartbeat) { mailbox.poke() } }
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
}
