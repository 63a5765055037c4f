import Broker
import Foundation
import HTTPTypes
import HummingbirdTesting
import JSON
import Logging
import MQTT
import NIOCore
import TestSupport
import Testing
import Web

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The web page against a real broker and the real process", .timeLimit(.minutes(5)))
struct WebPageTests {
    static let accounts = ["owner", "guest", "stranger", "homegate"]

    private func credentials(port: Int) -> BrokerCredentials {
        var logger = Logger(label: "test.web")
        logger.logLevel = .critical
        return BrokerCredentials(configuration: MQTTConfiguration(port: port, clientID: "unused"), logger: logger)
    }

    @Test("the broker decides who logs in: the right password, a wrong one, an unknown account, no broker")
    func brokerCredentials() async throws {
        let passwords = ["owner": "owner-secret", "guest": "guest"]
        try await withBroker(.init(allowAnonymous: false, passwords: passwords)) { broker in
            let check = credentials(port: broker.port)
            #expect(await check.check(account: "owner", password: "owner-secret") == .accepted)
            #expect(await check.check(account: "owner", password: "owner") == .refused)
            #expect(await check.check(account: "nobody", password: "x") == .refused)
        }
        let closed = try RefusingPort()
        let answer = await credentials(port: closed.port).check(account: "owner", password: "owner")
        withExtendedLifetime(closed) {}
        guard case .unavailable = answer else {
            Issue.record("a broker that cannot be reached must not let anyone in")
            return
        }
    }

    @Test("a broker that lets any password in lets no one into the page")
    func brokerWithoutPasswords() async throws {
        try await withBroker(.init(allowAnonymous: true)) { broker in
            let result = await credentials(port: broker.port).check(account: "owner", password: "anything")
            guard case .unavailable(let reason) = result else {
                Issue.record("expected unavailable, got \(result)")
                return
            }
            #expect(reason.contains("does not check passwords"))
        }
    }

    @Test(
        "homegate run serves the page: a guest logs in, switches the lamp, the retained topic follows; SIGTERM ends it with a page open"
    )
    func servedByTheGateway() async throws {
        let passwords = Dictionary(uniqueKeysWithValues: Self.accounts.map { ($0, $0) })
        try await withBroker(.init(allowAnonymous: false, passwords: passwords)) { broker in
            try await withAccount("owner", to: broker) { owner in
                try await owner.client.subscribe(to: ["homegate/$status"], qos: .atLeastOnce)
                let (gateway, webPort) = try await startGatewayWithPage(broker, clientID: "web-gateway")
                defer { gateway.send(SIGKILL) }
                _ = try await owner.inbox.next("online") {
                    $0.topic == "homegate/$status" && $0.payloadString == "online"
                }

                try await TestClient.withClient(host: "127.0.0.1", port: webPort) { client in
                    let browser = try await client.logIn("guest", port: webPort)
                    let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On"
                    #expect(try await owner.retained(lamp) == "false")
                    let switched = try await client.postForm(
                        "/command",
                        [
                            ("csrf", browser.csrf), ("kind", "set"), ("home", "Main House"), ("room", "Living Room"),
                            ("accessory", "Floor Lamp"), ("service", "Lightbulb"), ("characteristic", "On"),
                            ("value", "true"),
                        ], cookie: browser.cookie, json: true)
                    #expect(switched.text == #"{"ok":true,"message":"Done."}"#)
                    #expect(try await owner.retained(lamp, becomes: "true"))

                    // A change made over MQTT is on the next page.
                    let brightness = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness"
                    let answer = try await owner.command("\(brightness)/set/owner", "30")
                    #expect(answer["ok"] == .bool(true))
                    #expect(try await owner.retained(brightness, becomes: "30"))
                    let page = try await client.get(
                        "/home?name=Main%20House", headers: [.cookie: "homegate_session=\(browser.cookie)"])
                    #expect(page.text.contains(#"data-k="living-lamp/main/Brightness" data-unit=" %">30 %<"#))

                    // A guest's page has no layout controls over the real server either.
                    #expect(!page.text.contains("renameAccessory"))
                }

                // An open page's event stream does not hold up the shutdown.
                let stream = Task {
                    // The stream is quiet until its 20-second heartbeat; the client's 15-second read
                    // timeout would end it first when the machine is slow to get to the SIGTERM.
                    try await TestClient.withClient(
                        host: "127.0.0.1", port: webPort, configuration: .init(timeout: .seconds(60))
                    ) { client in
                        let browser = try await client.logIn("owner", port: webPort)
                        return try await client.get(
                            "/home/live?name=Main%20House", headers: [.cookie: "homegate_session=\(browser.cookie)"])
                    }
                }
                try await eventually("the page is open") { try await openPages(port: webPort) > 0 }
                gateway.send(SIGTERM)
                #expect(await gateway.waitForExit() == 0)
                let streamed = try await stream.value
                #expect(streamed.head.status == .ok)
            }
        }
    }

    /// The number of open pages, from the health page as the owner sees it.
    private func openPages(port: Int) async throws -> Int {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            let browser = try await client.logIn("owner", port: port)
            let health = try await client.get("/health", headers: [.cookie: "homegate_session=\(browser.cookie)"])
            let match = health.text.firstMatch(of: /id="health-pages">(\d+)</)
            return match.flatMap { Int($0.1) } ?? 0
        }
    }
}

/// Starts `homegate run` against `broker` (as `homegate`, password = account) with the demo home and
/// the web page on a port the system picks as it binds (no free port chosen beforehand that another
/// test could take); returns once the page is served, with its port. The log is `homegate.log` in
/// the broker's folder.
func startGatewayWithPage(_ broker: MosquittoBroker, clientID: String) async throws -> (ChildProcess, Int) {
    try "homegate\n".write(toFile: "\(broker.directory)/password", atomically: true, encoding: .utf8)
    try """
    mqtt:
      broker: mqtt://127.0.0.1:\(broker.port)
      clientId: \(clientID)
      username: homegate
      passwordFile: \(broker.directory)/password
    data:
      directory: \(broker.directory)/data
    accessories:
      virtual: \(demoHomeFile.path)
    logging:
      level: notice
    web:
      listen: 127.0.0.1:0

    """.write(toFile: "\(broker.directory)/homegate.yml", atomically: true, encoding: .utf8)
    let log = "\(broker.directory)/homegate.log"
    let gateway = try ChildProcess(
        try homegateExecutable(), ["run", "--config", "\(broker.directory)/homegate.yml"], outputFile: log)
    var port: Int?
    do {
        try await eventually("the web page's address in \(log)") {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            port = text.firstMatch(of: /web page on http:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) }
            return port != nil || !gateway.isRunning
        }
        guard let port else {
            throw TimedOut("homegate exited:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        return (gateway, port)
    } catch {
        gateway.send(SIGKILL)
        throw error
    }
}

/// A browser's session on a live server.
struct WebLogin {
    var cookie: String
    var csrf: String
}

extension TestClient {
    /// Logs in as `account` (password = account) as a browser does.
    func logIn(_ account: String, port: Int) async throws -> WebLogin {
        let form = try await get("/login")
        let text = form.text
        guard let token = text.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/)?.1,
            let loginCookie = form.head.headerFields[values: .setCookie].first(where: {
                $0.hasPrefix("homegate_login=")
            })?
            .dropFirst("homegate_login=".count).prefix(while: { $0 != ";" })
        else { throw TimedOut("no login form") }
        let response = try await postForm(
            "/login", [("csrf", String(token)), ("account", account), ("password", account)],
            headers: [.cookie: "homegate_login=\(loginCookie)"])
        guard response.head.status == .seeOther,
            let session = response.head.headerFields[values: .setCookie].first(where: {
                $0.hasPrefix("homegate_session=")
            })?
            .dropFirst("homegate_session=".count).prefix(while: { $0 != ";" })
        else { throw TimedOut("login as \(account) answered \(response.head.status)") }
        let homes = try await get("/", headers: [.cookie: "homegate_session=\(session)"])
        guard let csrf = homes.text.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/)?.1 else {
            throw TimedOut("no CSRF token on the homes page")
        }
        return WebLogin(cookie: String(session), csrf: String(csrf))
    }

    func postForm(
        _ uri: String, _ fields: [(String, String)], cookie: String? = nil, json: Bool = false,
        headers: HTTPFields = [:]
    ) async throws -> TestClient.Response {
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        if let cookie { headers[.cookie] = "homegate_session=\(cookie)" }
        if json { headers[.accept] = "application/json" }
        let body = fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)"
        }.joined(separator: "&")
        return try await post(uri, headers: headers, body: ByteBuffer(string: body))
    }
}

extension TestClient.Response {
    var text: String { body.map { String(buffer: $0) } ?? "" }
}
