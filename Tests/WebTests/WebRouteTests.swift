import Broker
import Foundation
import Gateway
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import TestSupport
import Testing

@testable import HomeModel
@testable import Web

@Suite("The web page's routes, without a network", .timeLimit(.minutes(3)))
struct WebRouteTests {
    /// The form fields that switch the Floor Lamp, with `csrf`.
    static func lampForm(_ csrf: String, value: String, home: String = "Main House") -> KeyValuePairs<String, String> {
        [
            "csrf": csrf, "kind": "set", "home": home, "room": "Living Room", "accessory": "Floor Lamp",
            "service": "Lightbulb", "characteristic": "On", "value": value, "return": "/home?name=Main%20House",
        ]
    }

    @Test("pages need a login; the login page sets its token cookie HttpOnly and SameSite=Strict")
    func loginRequired() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            for path in ["/", "/home?name=Main%20House", "/health"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .seeOther, "\(path)")
                #expect(response.headers[.location] == "/login")
            }
            let live = try await client.execute(uri: "/home/live?name=Main%20House", method: .get)
            #expect(live.status == .unauthorized)
            let page = try await client.execute(uri: "/login", method: .get)
            #expect(page.status == .ok)
            let cookie = try #require(page.setCookieHeader("homegate_login"))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            let css = try await client.execute(uri: "/static/app.css", method: .get)
            let script = try await client.execute(uri: "/static/app.js", method: .get)
            #expect(css.status == .ok && script.status == .ok)
            #expect(css.headers[.contentType]?.hasPrefix("text/css") == true)
        }
    }

    @Test("a login with the account's password starts a session in an HttpOnly, SameSite=Strict, expiring cookie")
    func login() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let (token, loginCookie) = try await client.loginForm()
            let response = try await client.post(
                "/login", ["csrf": token, "account": "owner", "password": "owner"],
                headers: [.cookie: "homegate_login=\(loginCookie)"])
            #expect(response.status == .seeOther)
            let cookie = try #require(response.setCookieHeader("homegate_session"))
            #expect(
                cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age=3600"))
            let session = try #require(response.cookie("homegate_session"))
            let homes = try await client.execute(
                uri: "/", method: .get, headers: [.cookie: "homegate_session=\(session)"])
            #expect(homes.status == .ok)
            #expect(homes.bodyText.contains("Main House") && homes.bodyText.contains("Lake Cabin"))
        }
    }

    @Test("a wrong password is refused, and after five failures the account is refused unchecked until they age out")
    func wrongPasswordAndThrottle() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            for _ in 0..<5 {
                let (token, cookie) = try await client.loginForm()
                let response = try await client.post(
                    "/login", ["csrf": token, "account": "owner", "password": "guess"],
                    headers: [.cookie: "homegate_login=\(cookie)"])
                #expect(response.status == .unauthorized)
                #expect(response.bodyText.contains("Wrong account or password."))
                #expect(response.cookie("homegate_session") == nil)
            }
            let checked = fixture.credentials.checks.withLock { $0 }
            let (token, cookie) = try await client.loginForm()
            let refused = try await client.post(
                "/login", ["csrf": token, "account": "owner", "password": "owner"],
                headers: [.cookie: "homegate_login=\(cookie)"])
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
            #expect(fixture.credentials.checks.withLock { $0 } == checked, "a throttled login is not checked")
            // Another account is not held up by owner's failures.
            _ = try await client.logIn("guest")
            fixture.clock.advance(by: .seconds(301))
            _ = try await client.logIn("owner")
        }
    }

    @Test("a login form without the login page's token is refused unchecked")
    func forgedLogin() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let (token, _) = try await client.loginForm()
            let withoutCookie = try await client.post(
                "/login", ["csrf": token, "account": "owner", "password": "owner"])
            #expect(withoutCookie.status == .forbidden)
            let (_, cookie) = try await client.loginForm()
            let wrongToken = try await client.post(
                "/login", ["csrf": "0123", "account": "owner", "password": "owner"],
                headers: [.cookie: "homegate_login=\(cookie)"])
            #expect(wrongToken.status == .forbidden)
            #expect(fixture.credentials.checks.withLock { $0 } == 0)
        }
    }

    @Test("a guest sees only its homes, no layout controls, and a home it is not in does not exist for it")
    func guestView() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let homes = try await client.execute(uri: "/", method: .get, headers: guest.headers)
            #expect(homes.bodyText.contains("Main House"))
            #expect(!homes.bodyText.contains("Lake Cabin"))
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
            #expect(page.status == .ok)
            let html = page.bodyText
            #expect(html.contains("data-k=\"living-lamp/main/On\""))
            #expect(html.contains("name=\"kind\" value=\"set\""), "a guest may switch")
            for control in [
                "renameAccessory", "removeAccessory", "assignAccessory", "addRoom", "addUser", "permitJoin",
            ] {
                #expect(!html.contains(control), "a guest's page has no \(control)")
            }
            #expect(!html.contains("/health"))
            let other = try await client.execute(uri: "/home?name=Lake%20Cabin", method: .get, headers: guest.headers)
            #expect(other.status == .notFound)
            #expect(other.bodyText.contains("There is no home named &#39;Lake Cabin&#39;."))
            let health = try await client.execute(uri: "/health", method: .get, headers: guest.headers)
            #expect(health.status == .forbidden)
            let live = try await client.execute(
                uri: "/home/live?name=Lake%20Cabin", method: .get, headers: guest.headers)
            #expect(live.status == .notFound)
        }
    }

    @Test("the owner's page has the layout controls, users by name, and the health page")
    func ownerView() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            let html = page.bodyText
            for control in [
                "renameAccessory", "removeAccessory", "assignAccessory", "addRoom", "addUser", "permitJoin",
            ] {
                #expect(html.contains("value=\"\(control)\""), "the owner's page has \(control)")
            }
            #expect(html.contains("Gabriel"), "users by display name")
            let scenes = try #require(html.range(of: "<h2 id=\"scenes\">Scenes</h2>")).lowerBound
            let firstRoom = try #require(html.range(of: "<section class=\"room\"")).lowerBound
            #expect(scenes < firstRoom, "scenes come first")
            #expect(
                html.contains("<nav class=\"rooms\" aria-label=\"Rooms\"><a href=\"#room-"),
                "a list of rooms to jump to")
            #expect(!html.contains(">guest<") || html.contains("badge\">guest"), "accounts are not shown, roles are")
            #expect(html.contains("type=\"range\" name=\"value\" min=\"0\" max=\"100\""), "a slider with the metadata")
            let health = try await client.execute(uri: "/health", method: .get, headers: owner.headers)
            #expect(health.status == .ok)
            #expect(health.bodyText.contains("id=\"health-broker\">connected<"))
            #expect(health.bodyText.contains("id=\"health-memory\""))
            // The simulated devices: every one in a home, none unreachable (the demo's layout)
            var inHomes = 0
            for home in await fixture.manager.homes(for: "owner") {
                inHomes += try await fixture.manager.home(home.name, account: "owner").accessories.count
            }
            #expect(
                health.bodyText.contains(
                    #"<dt>Simulated devices</dt><dd id="driver-virtual">\#(inHomes) accessories, \#(inHomes) in a home</dd>"#
                ))
        }
    }

    @Test(
        "a write-only characteristic shows its action and no value: the blinds' Hold position is a Stop button that stops them"
    )
    func writeOnlyIsAnAction() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
            let html = page.bodyText
            #expect(!html.contains(#"data-k="bedroom-blinds/main/HoldPosition""#), "no value shown for it")
            let form = try #require(
                html.firstMatch(
                    of:
                        /<form[^>]*class="command"[^>]*>(?:(?!<\/form>).)*?value="HoldPosition">(?:(?!<\/form>).)*?<\/form>/
                        .dotMatchesNewlines())?.0)
            #expect(form.contains(#"name="value" value="true""#) && form.contains(">Stop</button>"))
            let fields = form.matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)">/).map {
                (String($0.output.1), String($0.output.2).replacingOccurrences(of: "&amp;", with: "&"))
            }
            var json = guest.headers
            json[.accept] = "application/json"
            // The blinds start to open (the same form, for TargetPosition), then Stop
            let open = fields.map { $0.0 == "characteristic" ? ($0.0, "TargetPosition") : $0 } + [("value", "100")]
            #expect(try await client.post("/command", pairs: open, headers: json).bodyText.contains(#""ok":true"#))
            let answer = try await client.post("/command", pairs: fields + [("value", "true")], headers: json)
            #expect(answer.bodyText == #"{"ok":true,"message":"Done."}"#)
            let stopped = try #require(try await fixture.value("Blinds", .currentPosition))
            #expect(try await fixture.value("Blinds", .targetPosition) == stopped)
            #expect(stopped != .int(100))
            #expect(try await fixture.value("Blinds", .positionState) == .int(2))
        }
    }

    @Test(
        "accessory cards carry an icon of what they are, controls are named by their row and card, and there is a favicon"
    )
    func iconsAndNames() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            let html = page.bodyText
            let home = try await fixture.manager.home("Main House", account: "owner")
            for accessory in home.accessories where !accessory.isBridge || !accessory.services.isEmpty {
                let heading = try Regex(
                    #"<h3 id="h-[^"]*"><svg class="icon" aria-hidden="true"[^>]*>.*?</svg>"#
                        + NSRegularExpression.escapedPattern(for: accessory.name))
                #expect(html.firstMatch(of: heading) != nil, "\(accessory.name) has a heading with an icon")
            }
            // A lamp shows the lightbulb, a lock the lock (the icons differ)
            func icon(_ name: String) -> String? {
                (try? Regex(#"<svg class="icon"[^>]*>(.*?)</svg>"# + NSRegularExpression.escapedPattern(for: name)))
                    .flatMap { html.firstMatch(of: $0) }.map { String($0.output[1].substring ?? "") }
            }
            #expect(icon("Floor Lamp") == CategoryIcons.shapes["lightbulb"])
            #expect(icon("Front Door") == CategoryIcons.shapes["doorLock"])
            // Every icon the code names is a symbol of Resources/icons.svg
            let named = Set(CategoryIcons.byServiceType.values).union(["bridge", "other", "scene"])
            #expect(named.subtracting(CategoryIcons.shapes.keys).isEmpty)
            #expect(CategoryIcons.shapes.count == 30 && CategoryIcons.shapes.values.allSatisfy { $0.hasPrefix("<") })
            // The brightness slider is named by its row's label and its card's heading
            let slider = try #require(html.firstMatch(of: /<input type="range"[^>]*aria-labelledby="([^"]+)"/))
            let ids = slider.output.1.split(separator: " ")
            #expect(ids.count == 2)
            for id in ids { #expect(html.contains("id=\"\(id)\""), "\(id) names an element of the page") }
            let favicon = try await client.execute(uri: "/favicon.svg", method: .get)
            #expect(favicon.status == .ok)
            #expect(favicon.headers[.contentType] == "image/svg+xml")
            #expect(favicon.bodyText.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
            #expect(html.contains(#"<link rel="icon" href="/favicon.svg""#))
        }
    }

    @Test("states in words, units shown: no valid value of the demo is shown as its number, and choices are named")
    func wordsAndUnits() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            for home in ["Main House", "Lake Cabin"] {
                let page = try await client.execute(
                    uri: "/home?name=\(formEncoded(home))", method: .get, headers: owner.headers)
                let html = page.bodyText
                let model = try await fixture.manager.home(home, account: "owner")
                var named = 0
                for accessory in model.accessories {
                    for service in accessory.services {
                        for characteristic in service.characteristics {
                            let key = characteristicKey(
                                accessory: accessory.id, service: service.id, type: characteristic.type)
                            guard let shown = Self.output(key, in: html) else { continue }
                            if let names = CharacteristicType.valueNames[characteristic.type] {
                                #expect(
                                    shown == "unknown" || names.values.contains(shown),
                                    "\(accessory.name) \(characteristic.type) shows '\(shown)'")
                                named += 1
                            }
                            if characteristic.metadata.unit == .celsius, characteristic.value != nil {
                                #expect(
                                    shown.hasSuffix(" °C"), "\(accessory.name) \(characteristic.type) shows '\(shown)'")
                            }
                            if characteristic.type == .colorTemperature, characteristic.value != nil {
                                #expect(shown.hasSuffix(" K"), "colour temperature in kelvin: '\(shown)'")
                            }
                        }
                    }
                }
                #expect(named > 0, "the demo's \(home) has states with names")
                for option in html.matches(of: /<option value="(\d+)"[^>]*>([^<]*)</) {
                    #expect(Int(option.2) == nil, "an option shows the number \(option.2)")
                }
                #expect(!html.contains("<h4>MotionSensor</h4>"))
            }
        }
    }

    @Test("a state that changes is sent to the open page in words: the lock's target arrives as Secured or Unsecured")
    func liveStateInWords() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let home = try await fixture.manager.home("Main House", account: "owner")
            let lock = try #require(home.accessories.first { $0.name == "Front Door" })
            let service = try #require(lock.services.first { $0.characteristic(.lockTargetState) != nil })
            let target = 1 - (service.characteristic(.lockTargetState)?.value?.intValue ?? 0)
            let stream = try await fixture.openLiveStream(client, owner)
            try await fixture.manager.writeValue(
                .int(target), to: .init(accessory: lock.name, service: service.name, characteristic: .lockTargetState),
                home: "Main House", account: "owner")
            try await eventually("the update written to the page") { fixture.site.feed.writtenUpdates > 0 }
            _ = try await client.post("/logout", ["csrf": owner.csrf], headers: owner.headers)
            let key = characteristicKey(accessory: lock.id, service: service.id, type: .lockTargetState)
            let name = target == 1 ? "Secured" : "Unsecured"
            #expect(
                try await stream.value.bodyText.contains(#"{"k":"\#(key)","t":"\#(name)","u":false,"v":\#(target)}"#))
        }
    }

    @Test("a card keeps the battery and Identify under More, and says in its heading when the battery is low")
    func secondaryUnderMore() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let html = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
                .bodyText
            for card in html.split(separator: "<article ").dropFirst() {
                let more = try #require(card.range(of: "<details class=\"more\">"), "\(card.prefix(80))").lowerBound
                if let battery = card.range(of: "<h4>Battery</h4>") {
                    #expect(battery.lowerBound > more, "the battery under More: \(card.prefix(80))")
                }
                #expect(try #require(card.range(of: "Identify</button>")).lowerBound > more)
            }
            let home = try await fixture.manager.home("Main House", account: "guest")
            for accessory in home.accessories {
                let low = accessory.services.contains { $0.characteristic(.statusLowBattery)?.value?.intValue == 1 }
                // (a bridge without services of its own has no card)
                guard
                    let card = html.split(separator: "<article ").first(where: {
                        $0.contains("data-accessory=\"\(accessory.id.rawValue)\"")
                    })
                else { continue }
                let heading = card.split(separator: "</h3>").first ?? ""
                #expect(heading.contains("battery low") == low, "\(accessory.name)")
            }
            #expect(html.contains("battery low"), "the demo's back door contact is at 15 %")
        }
    }

    /// The text of the `<output>` of characteristic `key` on a page.
    static func output(_ key: String, in html: String) -> String? {
        guard let start = html.range(of: "<output data-k=\"\(key)\"") else { return nil }
        let rest = html[start.upperBound...]
        guard let open = rest.firstIndex(of: ">"), let close = rest.range(of: "</output>") else { return nil }
        return String(rest[rest.index(after: open)..<close.lowerBound])
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    @Test("the owner removes a guest with the page's form, which names the user by id: no account, no name to mangle")
    func removeGuest() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            let form = try #require(
                page.bodyText.firstMatch(of: /value="removeUser">.*?<button/)?.0, "the remove form of a guest")
            let before = try await fixture.manager.home("Main House", account: "owner").users
            let id = try #require(before.first { $0.name == "Gabriel" }).id.rawValue
            #expect(form.contains("name=\"userId\" value=\"\(id)\""))
            #expect(!form.contains("\"guest\""), "no account on the page")
            let answer = try await client.post(
                "/request", ["csrf": owner.csrf, "operation": "removeUser", "home": "Main House", "userId": id],
                headers: owner.headers)
            #expect(answer.status == .seeOther)
            let users = try await fixture.manager.home("Main House", account: "owner").users
            #expect(users.map(\.name) == before.map(\.name).filter { $0 != "Gabriel" })
        }
    }

    @Test("a HomeKit bridge is paired from the page and unpaired from a bridged accessory's card; a guest sees neither")
    func pairAndUnpair() async throws {
        let fixture = try await WebFixture.make()
        let driver = ScriptedPairingDriver()
        try await fixture.manager.attach(driver)
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let before = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(before.bodyText.contains(#"name="id" value="new-bridge""#), "the pairing form of the new bridge")
            #expect(!before.bodyText.contains("unpairAccessory"), "nothing paired yet: no Unpair")
            let waiting = try await client.execute(uri: "/health", method: .get, headers: owner.headers)
            #expect(
                waiting.bodyText.contains(
                    #"<dd id="driver-scripted">0 accessories, 0 in a home; 1 waiting to be paired</dd>"#))
            let paired = try await client.post(
                "/request",
                [
                    "csrf": owner.csrf, "operation": "pairAccessory", "home": "Main House", "id": "new-bridge",
                    "setupCode": "111-22-333", "room": "",
                ],
                headers: owner.headers)
            #expect(paired.status == .seeOther)

            // The bridge has no card of its own (no services): its accessory's card unpairs it
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            let lampCard = try #require(
                page.bodyText.firstMatch(of: /data-accessory="AA:BB:2".*?<\/article>/.dotMatchesNewlines())?.0,
                "the lamp's card")
            let form = try #require(
                lampCard.firstMatch(of: /<form[^>]*data-operation="unpairAccessory".*?<\/form>/.dotMatchesNewlines())?.0
            )
            #expect(form.contains(#"name="accessory" value="Bridge""#))
            let health = try await client.execute(uri: "/health", method: .get, headers: owner.headers)
            #expect(health.bodyText.contains(#"<dd id="driver-scripted">2 accessories, 2 in a home</dd>"#))
            #expect(form.contains("Unpair its bridge Bridge"))
            #expect(
                form.contains("data-confirm=\"Unpair Bridge? It leaves Main House with every accessory of the bridge"))
            #expect(
                page.bodyText.matches(of: /data-operation="unpairAccessory"/).count == 1,
                "one Unpair: the virtual accessories hold no pairing")

            let guest = try await client.logIn("guest")
            let guestPage = try await client.execute(
                uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
            #expect(guestPage.bodyText.contains(#"data-accessory="AA:BB:2""#))
            #expect(!guestPage.bodyText.contains("unpairAccessory"))

            let unpaired = try await client.post(
                "/request",
                ["csrf": owner.csrf, "operation": "unpairAccessory", "home": "Main House", "accessory": "Bridge"],
                headers: owner.headers)
            #expect(unpaired.status == .seeOther)
            #expect(await driver.unpaired == ["AA:BB"])
            let ids = try await fixture.manager.home("Main House", account: "owner").accessories.map(\.id)
            #expect(!ids.contains("AA:BB") && !ids.contains("AA:BB:2"))
        }
    }

    @Test(
        "a button's press is bound to a scene from its card; the automation is listed in words, turned off and removed")
    func pressAutomation() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.manager.attach(
            ReportingDriver(ReportingDriver.button(id: "hall-button", name: "Hall Button")))
        try await fixture.manager.edit(
            .addAccessory(home: "Main House", id: "hall-button", room: "Hallway"), account: "owner")
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            var json = owner.headers
            json[.accept] = "application/json"
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(page.bodyText.contains("None yet. A button's Edit section also runs a scene on a press."))
            let card = try #require(
                page.bodyText.firstMatch(of: /data-accessory="hall-button".*?<\/article>/.dotMatchesNewlines())?.0)
            let form = try #require(
                card.firstMatch(of: /<form[^>]*data-operation="addTrigger".*?<\/form>/.dotMatchesNewlines())?.0)
            #expect(form.contains(#"<option value="1">Double press</option>"#), "\(form)")
            #expect(form.contains(#"<select name="actionSets" aria-label="Scene to run"><option value="Good Night">"#))

            let added = try await client.post(
                "/request",
                [
                    "csrf": owner.csrf, "operation": "addTrigger", "home": "Main House", "accessory": "Hall Button",
                    "service": "Button", "characteristic": "ProgrammableSwitchEvent", "name": "Hall Press",
                    "value": "1", "actionSets": "Good Night",
                ],
                headers: json)
            #expect(added.bodyText.contains(#""ok":true"#), "\(added.bodyText)")
            let trigger = try #require(try await fixture.manager.home("Main House", account: "owner").triggers.first)
            guard case .characteristic(_, let value) = trigger.event else {
                throw HomeError(.invalidParameter, "not a characteristic event")
            }
            #expect(value == .int(1))
            let listed = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(
                listed.bodyText.contains(
                    "<strong>Hall Press</strong>: When Hall Button reports Double press, run Good Night."),
                "\(listed.bodyText)")

            let off = try await client.post(
                "/request",
                [
                    "csrf": owner.csrf, "operation": "enableTrigger", "home": "Main House", "trigger": "Hall Press",
                    "enabled": "false",
                ], headers: json)
            #expect(off.bodyText.contains(#""ok":true"#), "\(off.bodyText)")
            #expect(try await fixture.manager.home("Main House", account: "owner").triggers.first?.isEnabled == false)
            let offPage = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(offPage.bodyText.contains(#"<strong>Hall Press</strong> <span class="badge off">off</span>"#))
            #expect(offPage.bodyText.contains(#"name="enabled" value="true""#))

            let guest = try await client.logIn("guest")
            let guestPage = try await client.execute(
                uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
            // A guest sees the automation, without a form to change it.
            #expect(guestPage.bodyText.contains("<strong>Hall Press</strong>"))
            #expect(!guestPage.bodyText.contains("addTrigger") && !guestPage.bodyText.contains("enableTrigger"))

            let removed = try await client.post(
                "/request",
                ["csrf": owner.csrf, "operation": "removeTrigger", "home": "Main House", "trigger": "Hall Press"],
                headers: json)
            #expect(removed.bodyText.contains(#""ok":true"#))
            #expect(try await fixture.manager.home("Main House", account: "owner").triggers.isEmpty)
        }
    }

    @Test(
        "a remote's buttons are headed by their names; their numbers for Apple Home (ServiceLabelIndex) are not shown")
    func buttonNumbersHidden() async throws {
        let fixture = try await WebFixture.make()
        func button(_ id: ServiceID, _ name: String, _ number: Int) -> Service {
            Service(
                id: id, type: .statelessProgrammableSwitch, name: name,
                characteristics: [
                    .standard(.programmableSwitchEvent, nil), .standard(.serviceLabelIndex, .int(number)),
                ])
        }
        let remote = Accessory(
            id: "remote", name: "Remote", category: .programmableSwitch,
            services: [
                button("left", "Left", 1), button("right", "Right", 2),
                Service(
                    id: "service_label", type: .serviceLabel, name: "Button Labels",
                    characteristics: [.standard(.serviceLabelNamespace, .int(1))]),
            ])
        try await fixture.manager.attach(ReportingDriver(remote))
        try await fixture.manager.edit(
            .addAccessory(home: "Main House", id: "remote", room: "Hallway"), account: "owner")
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            let card = try #require(
                page.bodyText.firstMatch(of: /data-accessory="remote".*?<\/article>/.dotMatchesNewlines())?.0)
            #expect(card.contains("<h4>Left</h4>") && card.contains("<h4>Right</h4>"), "\(card)")
            #expect(!card.lowercased().contains("service label index"), "\(card)")
        }
    }

    @Test("a switch goes through the command path: it changes the value and the answer comes back")
    func command() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let redirected = try await client.post(
                "/command", Self.lampForm(guest.csrf, value: "true"), headers: guest.headers)
            #expect(redirected.status == .seeOther)
            #expect(redirected.headers[.location] == "/home?name=Main%20House")
            #expect(try await fixture.value("Floor Lamp", .on) == .bool(true))
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
            #expect(page.bodyText.contains("class=\"notice ok\""), "the answer is shown once")
            var json = guest.headers
            json[.accept] = "application/json"
            let answer = try await client.post("/command", Self.lampForm(guest.csrf, value: "false"), headers: json)
            #expect(answer.bodyText == #"{"ok":true,"message":"Done."}"#)
            #expect(try await fixture.value("Floor Lamp", .on) == .bool(false))
            let invalid = try await client.post("/command", Self.lampForm(guest.csrf, value: "maybe"), headers: json)
            #expect(
                invalid.bodyText.contains(#""ok":false"#) && invalid.bodyText.contains(#""code":"invalidValueType""#))
            #expect(fixture.statistics.summary().commandsLastMinute == 3)
            #expect(fixture.statistics.summary().failuresLastMinute == 1)
        }
    }

    @Test("a guest's write to another home is refused as if the home did not exist, and changes nothing")
    func guestWriteToOtherHome() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let before = try await fixture.manager.home("Lake Cabin", account: "owner")
            var json = guest.headers
            json[.accept] = "application/json"
            let answer = try await client.post(
                "/command", Self.lampForm(guest.csrf, value: "true", home: "Lake Cabin"), headers: json)
            #expect(answer.bodyText.contains(#""code":"notFound""#))
            let request = try await client.post(
                "/request",
                ["csrf": guest.csrf, "operation": "addRoom", "home": "Main House", "name": "Attic"], headers: json)
            #expect(request.bodyText.contains(#""code":"insufficientPrivileges""#))
            #expect(try await fixture.manager.home("Lake Cabin", account: "owner") == before)
            #expect(
                try await fixture.manager.home("Main House", account: "owner").rooms.allSatisfy { $0.name != "Attic" })
        }
    }

    @Test("forged forms are refused and change nothing: no token, another session's token, another origin")
    func forgedForms() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let owner = try await client.logIn("owner")
            let forged: [(KeyValuePairs<String, String>, HTTPFields)] = [
                (Self.lampForm("", value: "true"), guest.headers),
                (Self.lampForm(owner.csrf, value: "true"), guest.headers),
                (Self.lampForm(guest.csrf, value: "true"), guest.headers + [.origin: "http://evil.example"]),
                (
                    Self.lampForm(guest.csrf, value: "true"),
                    guest.headers + [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"]
                ),
            ]
            for (fields, headers) in forged {
                let response = try await client.post("/command", fields, headers: headers)
                #expect(response.status == .forbidden)
            }
            let request = try await client.post(
                "/request", ["operation": "addRoom", "home": "Main House", "name": "Attic"], headers: owner.headers)
            #expect(request.status == .forbidden)
            let logout = try await client.post("/logout", ["csrf": "nope"], headers: owner.headers)
            #expect(logout.status == .forbidden)
            #expect(try await fixture.value("Floor Lamp", .on) == .bool(false))
            #expect(
                try await fixture.manager.home("Main House", account: "owner").rooms.allSatisfy { $0.name != "Attic" })
            let stillIn = try await client.execute(uri: "/", method: .get, headers: owner.headers)
            #expect(stillIn.status == .ok, "a forged logout does not log out")
        }
    }

    @Test("an expired session is a logged-out browser: pages send it to the login, actions are refused")
    func expiredSession() async throws {
        let fixture = try await WebFixture.make(sessionLifetime: .seconds(600))
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            fixture.clock.advance(by: .seconds(601))
            let page = try await client.execute(uri: "/", method: .get, headers: guest.headers)
            #expect(page.status == .seeOther && page.headers[.location] == "/login")
            let action = try await client.post(
                "/command", Self.lampForm(guest.csrf, value: "true"), headers: guest.headers)
            #expect(action.status == .seeOther && action.headers[.location] == "/login")
            var json = guest.headers
            json[.accept] = "application/json"
            let answer = try await client.post("/command", Self.lampForm(guest.csrf, value: "true"), headers: json)
            #expect(answer.status == .unauthorized)
            #expect(try await fixture.value("Floor Lamp", .on) == .bool(false))
        }
    }

    @Test("logout ends the session on the server and clears the cookie")
    func logout() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let response = try await client.post("/logout", ["csrf": owner.csrf], headers: owner.headers)
            #expect(response.status == .seeOther && response.headers[.location] == "/login")
            #expect(response.setCookieHeader("homegate_session")?.contains("Max-Age=0") == true)
            let after = try await client.execute(uri: "/", method: .get, headers: owner.headers)
            #expect(after.status == .seeOther, "the old cookie is worth nothing")
        }
    }

    @Test(
        "the owner's requests run through the command path: add a room, move, rename and remove an accessory, add a guest"
    )
    func administration() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            var json = owner.headers
            json[.accept] = "application/json"
            let steps: [KeyValuePairs<String, String>] = [
                ["csrf": owner.csrf, "operation": "addRoom", "home": "Main House", "name": "Attic"],
                [
                    "csrf": owner.csrf, "operation": "assignAccessory", "home": "Main House", "accessory": "Floor Lamp",
                    "room": "Attic",
                ],
                [
                    "csrf": owner.csrf, "operation": "renameAccessory", "home": "Main House", "accessory": "Floor Lamp",
                    "name": "Attic Lamp",
                ],
                [
                    "csrf": owner.csrf, "operation": "addUser", "home": "Main House", "account": "stranger",
                    "name": "Sam",
                ],
            ]
            for step in steps {
                let answer = try await client.post("/request", step, headers: json)
                #expect(answer.bodyText.contains(#""ok":true"#), "\(step): \(answer.bodyText)")
            }
            let home = try await fixture.manager.home("Main House", account: "owner")
            let attic = try #require(home.rooms.first { $0.name == "Attic" })
            #expect(home.accessories.first { $0.name == "Attic Lamp" }?.room == attic.id)
            #expect(home.users.contains { $0.name == "Sam" && $0.role == .guest })
            let unknown = try await client.post("/request", ["csrf": owner.csrf, "operation": "launch"], headers: json)
            #expect(unknown.bodyText.contains(#""code":"invalidParameter""#))
            let joining = try await client.post(
                "/request", ["csrf": owner.csrf, "operation": "permitJoin", "seconds": "60"], headers: json)
            #expect(joining.bodyText.contains(#""code":"notSupported""#), "the demo's virtual driver pairs nothing")
            let removed = try await client.post(
                "/request",
                ["csrf": owner.csrf, "operation": "removeAccessory", "home": "Main House", "accessory": "Attic Lamp"],
                headers: json)
            #expect(removed.bodyText.contains(#""ok":true"#))
            #expect(await fixture.manager.discoveredAccessories().contains { $0.id == "living-lamp" })
        }
    }

    @Test("names with topic separators or `$` are names of nothing: refused as notFound, nothing done")
    func topicLevelsInNames() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            var json = guest.headers
            json[.accept] = "application/json"
            let fields: KeyValuePairs<String, String> = [
                "csrf": guest.csrf, "kind": "set", "home": "Main House", "room": "Living Room/Floor Lamp",
                "accessory": "+", "service": "Lightbulb", "characteristic": "On", "value": "true",
            ]
            let answer = try await client.post("/command", fields, headers: json)
            #expect(answer.bodyText.contains(#""code":"notFound""#), "\(answer.bodyText)")
            let escape = try await client.post(
                "/command",
                [
                    "csrf": guest.csrf, "kind": "set", "home": "Main House", "room": "Living Room",
                    "accessory": "Floor Lamp", "service": "Lightbulb", "characteristic": "On", "value": "true",
                    "return": "//evil.example/",
                ], headers: guest.headers)
            #expect(escape.headers[.location] == "/")
            for (sent, expected) in [
                ("/%09/evil.example/", "/"), ("/\t/evil.example/", "/"), ("https://evil.example/", "/"),
                ("/home?name=Main%20House", "/home?name=Main%20House"), ("/health", "/health"),
                ("/home?name=x\\y", "/"),
            ] {
                #expect(WebSite.safeReturn(sent) == expected, "\(sent)")
            }
            // `$` names are no names of a home (the command is typed: no topic is built from them)
            let before = try await fixture.manager.home("Main House", account: "owner")
            for (home, room) in [("Main House", "$x/y"), ("$nothing", "Living Room"), ("Main House", "$layout")] {
                let answer = try await client.post(
                    "/command",
                    [
                        "csrf": guest.csrf, "kind": "set", "home": home, "room": room, "accessory": "Floor Lamp",
                        "service": "Lightbulb", "characteristic": "On", "value": "true",
                    ], headers: json)
                #expect(answer.bodyText.contains(#""ok":false"#), "\(home) / \(room): \(answer.bodyText)")
                #expect(answer.bodyText.contains(#""code":"notFound""#), "\(home) / \(room)")
            }
            #expect(try await fixture.manager.home("Main House", account: "owner") == before)
            // while the default room is a room of every home
            let inDefault = try await client.post(
                "/command",
                [
                    "csrf": guest.csrf, "kind": "set", "home": "Main House", "room": "$default",
                    "accessory": "Floor Lamp", "service": "Lightbulb", "characteristic": "On", "value": "true",
                ], headers: json)
            #expect(inDefault.bodyText.contains(#""code":"notFound""#), "Floor Lamp is in the Living Room")
        }
    }

    @Test("a page's live stream carries its home's values; logout ends it at once, with nothing after")
    func liveStream() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let stream = try await fixture.openLiveStream(client, guest)
            try await fixture.manager.writeValue(
                .bool(true), to: .init(accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on),
                home: "Main House", account: "owner")
            // Wait until the page has it, then log out: no event follows the logout
            try await eventually("the update written to the page") { fixture.site.feed.writtenUpdates > 0 }
            _ = try await client.post("/logout", ["csrf": guest.csrf], headers: guest.headers)
            try await fixture.manager.writeValue(
                .bool(false), to: .init(accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on),
                home: "Main House", account: "owner")
            let response = try await stream.value
            #expect(response.headers[.contentType] == "text/event-stream")
            #expect(response.bodyText.contains(#"data: {"k":"living-lamp/main/On","t":"on","u":false,"v":true}"#))
            #expect(!response.bodyText.contains(#""v":false"#), "a value set after the logout")
            #expect(response.bodyText.hasSuffix("event: ended\ndata: {}\n\n"))
            #expect(fixture.site.feed.openPages == 0)
        }
    }

    @Test("a member removed from the home: its stream says reload and ends, and a new one is refused")
    func removedMemberStream() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let stream = try await fixture.openLiveStream(client, guest)
            try await fixture.manager.edit(.removeUser(home: "Main House", user: "Gabriel"), account: "owner")
            let response = try await stream.value
            #expect(response.bodyText.hasSuffix("event: reload\ndata: {}\n\n"))
            #expect(fixture.site.feed.openPages == 0)
            let again = try await client.execute(
                uri: "/home/live?name=Main%20House", method: .get, headers: guest.headers)
            #expect(again.status == .notFound)
        }
    }

    @Test("a session that expires with no event: the heartbeat ends its stream with `ended`")
    func expiryEndsQuietStream() async throws {
        let fixture = try await WebFixture.make(sessionLifetime: .seconds(600), heartbeat: .milliseconds(20))
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            let stream = try await fixture.openLiveStream(client, guest)
            fixture.clock.advance(by: .seconds(601))
            let response = try await stream.value
            #expect(response.bodyText.hasSuffix("event: ended\ndata: {}\n\n"))
            #expect(fixture.site.feed.openPages == 0)
        }
    }

    @Test("one session may hold 8 streams open; the ninth is refused with 429")
    func streamsPerSession() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let guest = try await client.logIn("guest")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        _ = try await client.execute(
                            uri: "/home/live?name=Main%20House", method: .get, headers: guest.headers)
                    }
                }
                try await eventually("eight live pages open") { fixture.site.feed.openPages >= 8 }
                let ninth = try await client.execute(
                    uri: "/home/live?name=Main%20House", method: .get, headers: guest.headers)
                #expect(ninth.status == .tooManyRequests)
                _ = try await client.post("/logout", ["csrf": guest.csrf], headers: guest.headers)
                try await group.waitForAll()
            }
            #expect(fixture.site.feed.openPages == 0)
        }
    }

    @Test("a session pushed out by a newer login loses its streams at once, with `ended`")
    func pushedOutSessionLosesItsStreams() async throws {
        let fixture = try await WebFixture.make(sessionsPerAccount: 2)
        try await fixture.test { client in
            let first = try await client.logIn("guest")
            let stream = try await fixture.openLiveStream(client, first)
            _ = try await client.logIn("guest")
            _ = try await client.logIn("guest")
            let response = try await stream.value
            #expect(response.bodyText.hasSuffix("event: ended\ndata: {}\n\n"))
            #expect(fixture.site.feed.openPages == 0)
        }
    }

    @Test("logins sent side by side are checked no more often than logins one after another")
    func parallelLogins() async throws {
        let gated = GatedCredentials()
        let fixture = try await WebFixture.make(checker: gated)
        try await fixture.test { client in
            var forms: [(String, String)] = []
            for _ in 0..<40 { forms.append(try await client.loginForm()) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (token, cookie) in forms {
                    group.addTask {
                        try await client.post(
                            "/login", ["csrf": token, "account": "owner", "password": "guess"],
                            headers: [.cookie: "homegate_login=\(cookie)"]
                        ).status
                    }
                }
                var statuses: [HTTPResponse.Status] = []
                // 35 are refused unchecked while 5 wait for the broker
                for _ in 0..<35 { statuses.append(try await group.next()!) }
                #expect(gated.begun == 5)
                gated.open()
                for try await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses.count(where: { $0 == .tooManyRequests }) == 35)
            #expect(statuses.count(where: { $0 == .unauthorized }) == 5)
            #expect(gated.begun == 5)
        }
    }

    @Test("20 failures from one address hold up every account from it; an overlong account is refused unchecked")
    func addressThrottle() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            for account in ["a1", "a2", "a3", "a4"] {
                for _ in 0..<5 {
                    let (token, cookie) = try await client.loginForm()
                    let response = try await client.post(
                        "/login", ["csrf": token, "account": account, "password": "guess"],
                        headers: [.cookie: "homegate_login=\(cookie)"])
                    #expect(response.status == .unauthorized)
                }
            }
            let checked = fixture.credentials.checks.withLock { $0 }
            let (token, cookie) = try await client.loginForm()
            let refused = try await client.post(
                "/login", ["csrf": token, "account": "owner", "password": "owner"],
                headers: [.cookie: "homegate_login=\(cookie)"])
            #expect(refused.status == .tooManyRequests)
            let (token2, cookie2) = try await client.loginForm()
            let overlong = try await client.post(
                "/login", ["csrf": token2, "account": String(repeating: "x", count: 300), "password": "x"],
                headers: [.cookie: "homegate_login=\(cookie2)"])
            #expect(overlong.status == .badRequest)
            #expect(fixture.credentials.checks.withLock { $0 } == checked)
        }
    }
}

@Suite("The web page behind a reverse proxy (web.behindProxy), on a real server on loopback")
struct ProxyTests {
    static func failLogins(
        _ client: any TestClientProtocol, account: String, from visitor: String, times: Int
    ) async throws -> [HTTPResponse.Status] {
        var statuses: [HTTPResponse.Status] = []
        for _ in 0..<times {
            let (token, cookie) = try await client.loginForm()
            statuses.append(
                try await client.post(
                    "/login", ["csrf": token, "account": account, "password": "guess"],
                    headers: [.cookie: "homegate_login=\(cookie)", HTTPField.Name("X-Forwarded-For")!: visitor]
                ).status)
        }
        return statuses
    }

    @Test("the visitor is the forwarded address, the host the forwarded host, HTTPS makes cookies Secure")
    func trusted() async throws {
        let fixture = try await WebFixture.make(behindProxy: true, hosts: ["hub.example"])
        try await fixture.test(.live) { client in
            for account in ["a1", "a2", "a3", "a4"] {
                #expect(
                    try await Self.failLogins(client, account: account, from: "192.0.2.7", times: 5).allSatisfy {
                        $0 == .unauthorized
                    })
            }
            // The guessing visitor is held up, another visitor behind the same proxy is not
            #expect(try await Self.failLogins(client, account: "a5", from: "192.0.2.7", times: 1) == [.tooManyRequests])
            #expect(try await Self.failLogins(client, account: "a5", from: "192.0.2.8", times: 1) == [.unauthorized])

            let (token, cookie) = try await client.loginForm()
            let forwarded: HTTPFields = [
                .cookie: "homegate_login=\(cookie)", .origin: "https://hub.example",
                HTTPField.Name("X-Forwarded-Host")!: "hub.example", HTTPField.Name("X-Forwarded-Proto")!: "https",
                HTTPField.Name("X-Forwarded-For")!: "192.0.2.9",
            ]
            let login = try await client.post(
                "/login", ["csrf": token, "account": "guest", "password": "guest"], headers: forwarded)
            #expect(login.status == .seeOther)
            let setCookie = login.headers[values: .setCookie].first { $0.hasPrefix("homegate_session=") } ?? ""
            #expect(setCookie.contains("Secure"), "\(setCookie)")
            // The browser's origin must still be the forwarded host
            let (token2, cookie2) = try await client.loginForm()
            var elsewhere = forwarded
            elsewhere[.cookie] = "homegate_login=\(cookie2)"
            elsewhere[.origin] = "https://evil.example"
            let refused = try await client.post(
                "/login", ["csrf": token2, "account": "guest", "password": "guest"], headers: elsewhere)
            #expect(refused.status == .forbidden)
        }
    }

    @Test("without web.behindProxy, forwarding headers are not believed")
    func untrusted() async throws {
        let fixture = try await WebFixture.make(behindProxy: false)
        try await fixture.test(.live) { client in
            for account in ["a1", "a2", "a3", "a4"] {
                _ = try await Self.failLogins(client, account: account, from: "192.0.2.\(account.count)", times: 5)
            }
            // Every visitor is the proxy's (the peer's) address: all are held up
            #expect(
                try await Self.failLogins(client, account: "a5", from: "192.0.2.99", times: 1) == [.tooManyRequests])
            let (token, cookie) = try await client.loginForm()
            let login = try await client.post(
                "/login", ["csrf": token, "account": "guest", "password": "guest"],
                headers: [
                    .cookie: "homegate_login=\(cookie)", .origin: "https://hub.example",
                    HTTPField.Name("X-Forwarded-Host")!: "hub.example",
                ])
            #expect(login.status == .forbidden, "a forwarded host is not the page's host without a trusted proxy")
        }
    }
}

@Suite("The web page's limits, on a real server on loopback")
struct WebLimitTests {
    /// `Host` as a plain field: the test client sends it as it is.
    static let host = HTTPField.Name("Host")!
    static let securityHeaders: [HTTPField.Name] = [
        .contentSecurityPolicy, .xContentTypeOptions, HTTPField.Name("X-Frame-Options")!,
        HTTPField.Name("Referrer-Policy")!,
    ]

    @Test(
        "only the page's own host names are served: another name (DNS rebinding) gets 421 and its login is not checked",
        arguments: [
            ("evil.example", false), ("evil.example:8080", false), ("localhost.evil.example", false),
            ("localhost:8080", true), ("LOCALHOST", true), ("127.0.0.1:8080", true), ("[::1]:8080", true),
            ("192.168.1.20", true), ("hub.example", true), ("Hub.Example.:443", true),
        ])
    func hosts(host: String, served: Bool) async throws {
        let fixture = try await WebFixture.make(hosts: ["hub.example"])
        try await fixture.test(.live) { client in
            let port = try #require(client.port)
            let page = try await RawConnection.exchange(
                port: port, "GET /login HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            #expect(page.hasPrefix(served ? "HTTP/1.1 200" : "HTTP/1.1 421"), "\(page.prefix(60))")
            for name in Self.securityHeaders {
                #expect(page.lowercased().contains("\r\n\(name.canonicalName): "), "\(name)")
            }
            guard !served else { return }
            let (token, cookie) = try await client.loginForm()
            let form = "csrf=\(token)&account=guest&password=guest"
            let login = try await RawConnection.exchange(
                port: port,
                "POST /login HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\nCookie: homegate_login=\(cookie)\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n\(form)")
            #expect(login.hasPrefix("HTTP/1.1 421"), "\(login.prefix(60))")
            #expect(fixture.credentials.checks.withLock { $0 } == 0)
        }
    }

    @Test(
        "not found, HEAD and OPTIONS carry the security headers too",
        arguments: [
            ("/nothing-here", HTTPRequest.Method.get), ("/", .head), ("/login", .head), ("/", .options),
            ("/static/app.js", .options),
        ])
    func headersOnEveryAnswer(path: String, method: HTTPRequest.Method) async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(.live) { client in
            let response = try await client.execute(uri: path, method: method)
            for name in Self.securityHeaders { #expect(response.headers[name] != nil, "\(name) on \(response.status)") }
        }
    }

    @Test(
        "a connection that stays silent, or stops halfway through its request, is closed",
        arguments: [
            "", "GET /login HTTP/1.1\r\nHost: localho",
        ])
    func silentConnectionsClose(sent: String) async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(.live, idleTimeout: .milliseconds(300)) { client in
            let port = try #require(client.port)
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            connection.send(sent)
            try await eventually("the server closed the connection") { connection.isClosedByPeer }
        }
    }
}

/// A plain TCP connection to the page, for what no HTTP client sends (half a request).
final class RawConnection: Sendable {
    let socket: Int32

    init(port: Int) throws {
        socket = try LoopbackPort.connect(port)
    }

    func send(_ text: String) {
        guard !text.isEmpty else { return }
        _ = text.withCString { Glibc.send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the peer closed the connection: readable, and a read finds its end (or a reset).
    var isClosedByPeer: Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN)
    }

    func close() { _ = Glibc.close(socket) }

    /// Everything the peer sent until it closed the connection (at most 1 MiB).
    func receiveAll() async throws -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        try await eventually("the answer, to its end") {
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { received += buffer.prefix(count) }
            return count == 0 || (count < 0 && errno != EAGAIN) || received.count > 1_048_576
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends `request` (which asks for `Connection: close`) and returns the whole answer.
    static func exchange(port: Int, _ request: String) async throws -> String {
        let connection = try RawConnection(port: port)
        defer { connection.close() }
        connection.send(request)
        return try await connection.receiveAll()
    }
}

@Suite("Web sessions")
struct SessionStoreTests {
    @Test("logging in again and again ends only the account's own oldest sessions")
    func perAccountCap() {
        let store = SessionStore(lifetime: .seconds(3600), capacity: 6, perAccount: 3)
        let owner = store.start(account: "owner")
        let other = store.start(account: "sam")
        var guests: [Session] = []
        for _ in 0..<10 { guests.append(store.start(account: "guest")) }
        #expect(store.session(owner.token) != nil)
        #expect(store.session(other.token) != nil)
        #expect(guests.filter { store.session($0.token) != nil }.map(\.token) == guests.suffix(3).map(\.token))
    }

    @Test("logins at the same instant still end oldest first (a clock that did not move between them)")
    func sameInstant() {
        let moment = ContinuousClock.now
        let store = SessionStore(lifetime: .seconds(3600), capacity: 100, perAccount: 2, now: { moment })
        let sessions = (0..<5).map { _ in store.start(account: "guest") }
        #expect(sessions.map { store.session($0.token) != nil } == [false, false, false, true, true])
    }

    @Test("when all sessions are taken, the account holding the most gives up its oldest")
    func globalCap() {
        let store = SessionStore(lifetime: .seconds(3600), capacity: 4, perAccount: 3)
        let a = (0..<3).map { _ in store.start(account: "a") }
        let b = store.start(account: "b")
        let c = store.start(account: "c")
        #expect(store.session(a[0].token) == nil)
        #expect(store.session(a[1].token) != nil && store.session(b.token) != nil && store.session(c.token) != nil)
    }
}

@Suite("Live streams")
struct LiveFeedTests {
    let home = HomeID("main-house")

    func open(
        _ feed: LiveFeed, _ session: String, _ account: String, administrator: Bool = false, live: Set<String>? = nil
    )
        -> Bool
    {
        let result = feed.open(
            homes: [home], session: session, account: account, isAdministrator: administrator,
            isLive: { live?.contains($0) ?? true })
        if case .success = result { return true }
        return false
    }

    @Test("per session, per account, and a share for guests: two guests cannot starve the owner")
    func limits() {
        let feed = LiveFeed(perSession: 2, perAccount: 3, capacity: 8, reservedForAdministrators: 3)
        #expect(open(feed, "g1", "guest") && open(feed, "g1", "guest"))
        #expect(!open(feed, "g1", "guest"), "a third stream of one session")
        #expect(open(feed, "g2", "guest"))
        #expect(!open(feed, "g2", "guest"), "a fourth stream of one account")
        #expect(open(feed, "h1", "homeassistant") && open(feed, "h2", "homeassistant"))
        #expect(!open(feed, "h3", "homeassistant"), "a sixth stream of guests: their share is full")
        #expect(!open(feed, "x1", "another-guest"), "another guest account: the share is the guests' together")
        #expect(open(feed, "o1", "owner", administrator: true) && open(feed, "o1", "owner", administrator: true))
        #expect(open(feed, "o2", "owner", administrator: true))
        #expect(feed.openPages == 8)
        #expect(!open(feed, "a1", "admin2", administrator: true), "the gateway's capacity")
    }

    @Test("streams of sessions that ended are closed when the next one opens, and make room")
    func endedSessionsMakeRoom() {
        let feed = LiveFeed(perSession: 2, perAccount: 2, capacity: 8, reservedForAdministrators: 0)
        #expect(open(feed, "old", "guest") && open(feed, "old", "guest"))
        #expect(!open(feed, "new", "guest"))
        #expect(open(feed, "new", "guest", live: ["new"]), "the old session ended: its streams go")
        #expect(feed.openPages == 1)
    }
}

extension HTTPFields {
    fileprivate static func + (lhs: HTTPFields, rhs: HTTPFields) -> HTTPFields {
        var fields = lhs
        fields.append(contentsOf: rhs)
        return fields
    }
}

extension LiveFeed {
    /// How many updates streams wrote to their pages.
    var writtenUpdates: Int { written.withLock { $0 } }
}
