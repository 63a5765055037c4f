import Foundation
import HTTPTypes
import History
import HomeModel
import Hummingbird
import HummingbirdTesting
import Schedules
import Testing

@testable import Web

@Suite("The automations on the home page: the forms, the list, the guest's view", .timeLimit(.minutes(3)))
struct AutomationPageTests {
    /// Posts an automation form as `browser`, asking for the JSON answer.
    static func add(
        _ client: some TestClientProtocol, _ browser: Browser, _ fields: [(String, String)]
    ) async throws -> TestResponse {
        var headers = browser.headers
        headers[.accept] = "application/json"
        return try await client.post(
            "/automation",
            pairs: [("csrf", browser.csrf), ("home", "Main House"), ("return", "/home?name=Main%20House")] + fields,
            headers: headers)
    }

    /// The value of the option whose text is `text` in the page's automation forms.
    static func option(_ page: String, _ text: String) throws -> String {
        for option in page.matches(of: /<option value="([^"]*)">([^<]*)<\/option>/) where option.2 == text {
            return String(option.1).replacing("&quot;", with: "\"")
        }
        throw WebTestError("no option '\(text)' on the page")
    }

    static func triggers(_ fixture: WebFixture) async throws -> [Trigger] {
        try await fixture.manager.home("Main House", account: "owner").triggers
    }

    @Test("each form adds the automation it says, read back from the model, and the page lists it in words")
    func formsAdd() async throws {
        let fixture = try await WebFixture.make()
        _ = try await fixture.manager.edit(
            .setLocation(
                home: "Main House",
                location: try HomeLocation(latitude: 59.91, longitude: 10.75, timeZone: "Europe/Oslo")),
            account: "owner")
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            #expect(page.contains("<summary>At a time</summary>") && page.contains(#"action="/automation""#))
            #expect(!page.contains("The home has no location yet"))
            // Each form carries the session's token, the home and the shape it adds.
            let forms = page.matches(of: /<form method="post" action="\/automation".*?<\/form>/.dotMatchesNewlines())
                .map { String($0.0) }
            #expect(forms.count == 4)
            for (form, shape) in zip(forms, ["time", "sun", "reports", "range"]) {
                #expect(form.contains(#"name="csrf" value="\#(owner.csrf)""#), "\(form)")
                #expect(
                    form.contains(#"name="home" value="Main House""#)
                        && form.contains(#"name="shape" value="\#(shape)""#))
                #expect(form.contains(#"<input type="checkbox" name="actionSets[]" value="Good Night">"#), "\(form)")
            }
            let home = try await fixture.manager.home("Main House", account: "owner")
            let goodNight = try #require(home.actionSets.first { $0.name == "Good Night" }).id
            let goodMorning = try #require(home.actionSets.first { $0.name == "Good Morning" }).id

            // At a time, on weekdays, only between two times, turned back after 5 minutes.
            let atTime = try await Self.add(
                client, owner,
                [
                    ("shape", "time"), ("name", "Heating Down"), ("time", "22:30"), ("weekdays[]", "mon"),
                    ("weekdays[]", "tue"), ("weekdays[]", "wed"), ("weekdays[]", "thu"), ("weekdays[]", "fri"),
                    ("actionSets[]", "Good Night"), ("from", "22:00"), ("to", "06:00"), ("turnBackMinutes", "5"),
                ])
            #expect(atTime.bodyText.contains(#""ok":true"#), "\(atTime.bodyText)")
            #expect(atTime.bodyText.contains("The automation was added."))
            let heating = try #require(try await Self.triggers(fixture).first { $0.name == "Heating Down" })
            #expect(
                heating.event == .schedule(.timeOfDay(try TimeOfDay(hour: 22, minute: 30), weekdays: Weekday.workdays)))
            #expect(heating.actionSets == [goodNight])
            #expect(heating.conditions == [.time(try TimeWindow(from: TimePoint("22:00"), to: TimePoint("06:00")))])
            #expect(heating.options.turnBackAfter == .seconds(300))

            // Sunset, 30 minutes before, every day, two scenes.
            let sun = try await Self.add(
                client, owner,
                [
                    ("shape", "sun"), ("name", "Dusk"), ("sun", "sunset"), ("offsetMinutes", "30"),
                    ("offsetDirection", "before"),
                ]
                    + ["sun", "mon", "tue", "wed", "thu", "fri", "sat"].map { ("weekdays[]", $0) }
                    + [("actionSets[]", "Good Night"), ("actionSets[]", "Good Morning")])
            #expect(sun.bodyText.contains(#""ok":true"#), "\(sun.bodyText)")
            let dusk = try #require(try await Self.triggers(fixture).first { $0.name == "Dusk" })
            #expect(dusk.event == .schedule(.sun(.sunset, offset: -30, weekdays: Set(Weekday.allCases))))
            #expect(dusk.actionSets == [goodNight, goodMorning])

            // A contact sensor reports open.
            let contact = try Self.option(page, "Back Door: contact sensor state")
            let reports = try await Self.add(
                client, owner,
                [
                    ("shape", "reports"), ("name", "Door Opens"), ("characteristic", contact), ("value", "1"),
                    ("actionSets[]", "Good Morning"),
                ])
            #expect(reports.bodyText.contains(#""ok":true"#), "\(reports.bodyText)")
            let door = try #require(try await Self.triggers(fixture).first { $0.name == "Door Opens" })
            let doorKey = try #require(door.event.characteristic)
            #expect(doorKey.accessory == "back-door-contact" && doorKey.characteristic == .contactSensorState)
            #expect(door.event == .characteristic(doorKey, value: .int(1)))

            // Motion, written as on (a bool's word, as `/set` reads it).
            let motion = try await Self.add(
                client, owner,
                [
                    ("shape", "reports"), ("name", "Porch Moves"),
                    ("characteristic", try Self.option(page, "Porch Motion: motion detected")), ("value", "on"),
                    ("actionSets[]", "Good Morning"),
                ])
            #expect(motion.bodyText.contains(#""ok":true"#), "\(motion.bodyText)")
            let moves = try #require(try await Self.triggers(fixture).first { $0.name == "Porch Moves" })
            #expect(moves.event == .characteristic(try #require(moves.event.characteristic), value: .bool(true)))

            // The humidity comes to 70 % or above.
            let humidity = try Self.option(page, "Bathroom Humidity: current relative humidity (%)")
            let range = try await Self.add(
                client, owner,
                [
                    ("shape", "range"), ("name", "Steamy"), ("characteristic", humidity), ("min", "70"), ("max", ""),
                    ("actionSets[]", "Good Morning"),
                ])
            #expect(range.bodyText.contains(#""ok":true"#), "\(range.bodyText)")
            let steamy = try #require(try await Self.triggers(fixture).first { $0.name == "Steamy" })
            guard case .threshold(let key, let bounds) = steamy.event else {
                throw WebTestError("Steamy is no range automation: \(steamy.event)")
            }
            #expect(key.accessory == "bath-humidity" && key.characteristic == .currentRelativeHumidity)
            #expect(bounds.minimum == 70 && bounds.maximum == nil)

            // The list in words, with the next firing the plan gives and the last one stored.
            let homeID = home.id
            let next = try #require(ISO8601DateFormatter().date(from: "2026-11-30T21:30:00Z"))
            await fixture.manager.setNextFirings([heating.id: next], home: homeID)
            let last = try #require(ISO8601DateFormatter().date(from: "2026-11-27T21:30:00Z"))
            try await fixture.manager.recordScheduleStates([
                heating.id: ScheduleState(
                    since: last.addingTimeInterval(-86_400),
                    lastFiring: Firing(
                        instant: last, slot: try LocalDateTime(year: 2026, month: 11, day: 27, hour: 22, minute: 30)))
            ])
            let listed = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            #expect(
                listed.contains(
                    "<strong>Heating Down</strong>: At 22:30 on weekdays, run Good Night; only between 22:00 and 06:00; turned back after 5 min."
                ), "\(listed)")
            #expect(listed.contains("Next: Mon 30 Nov 22:30. Last due: Fri 27 Nov 22:30."))
            #expect(
                listed.contains(
                    "<strong>Dusk</strong>: 30 minutes before sunset every day, run Good Night, then Good Morning."))
            #expect(
                listed.contains(
                    "<strong>Door Opens</strong>: When Back Door contact sensor state becomes No contact, run Good Morning."
                ))
            #expect(
                listed.contains(
                    "Next: when that happens. Last: not recorded for an automation set off by a device (the gateway keeps no history)."
                ))
            #expect(
                listed.contains(
                    "<strong>Steamy</strong>: When Bathroom Humidity current relative humidity comes to at least 70, run Good Morning."
                ))
        }
    }

    @Test("a bad form says why with its code, on the page and in JSON, and adds nothing")
    func badForms() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            let humidity = try Self.option(page, "Bathroom Humidity: current relative humidity (%)")

            // The home has no location: the sun form says so, and a sunset is refused.
            #expect(page.contains("The home has no location yet"))
            let noPlace = try await Self.add(
                client, owner,
                [
                    ("shape", "sun"), ("name", "Dusk"), ("sun", "sunset"), ("weekdays[]", "mon"),
                    ("actionSets[]", "Good Night"),
                ])
            #expect(noPlace.bodyText.contains(#""code":"locationRequired""#), "\(noPlace.bodyText)")

            let noScene = try await Self.add(
                client, owner, [("shape", "time"), ("name", "No Scene"), ("time", "07:00"), ("weekdays[]", "mon")])
            #expect(noScene.bodyText.contains(#""code":"missingParameter""#), "\(noScene.bodyText)")
            #expect(noScene.bodyText.contains("An automation runs at least one action set."))

            let reversed = try await Self.add(
                client, owner,
                [
                    ("shape", "range"), ("name", "Reversed"), ("characteristic", humidity), ("min", "80"),
                    ("max", "60"),
                    ("actionSets[]", "Good Night"),
                ])
            #expect(reversed.bodyText.contains(#""code":"invalidRange""#), "\(reversed.bodyText)")

            let noTime = try await Self.add(
                client, owner,
                [
                    ("shape", "time"), ("name", "No Time"), ("time", ""), ("weekdays[]", "mon"),
                    ("actionSets[]", "Good Night"),
                ])
            #expect(noTime.bodyText.contains(#""code":"invalidSchedule""#), "\(noTime.bodyText)")
            #expect(noTime.bodyText.contains("is no time of day"), "\(noTime.bodyText)")

            let halfWindow = try await Self.add(
                client, owner,
                [
                    ("shape", "time"), ("name", "Half"), ("time", "07:00"), ("weekdays[]", "mon"),
                    ("actionSets[]", "Good Night"), ("from", "22:00"),
                ])
            #expect(halfWindow.bodyText.contains(#""code":"invalidCondition""#), "\(halfWindow.bodyText)")
            #expect(try await Self.triggers(fixture).isEmpty)

            // Without the script: the next page says it at its top, with the code.
            let posted = try await client.post(
                "/automation",
                pairs: [
                    ("csrf", owner.csrf), ("home", "Main House"), ("return", "/home?name=Main%20House"),
                    ("shape", "range"),
                    ("name", "Reversed"), ("characteristic", humidity), ("min", "80"), ("max", "60"),
                    ("actionSets[]", "Good Night"),
                ], headers: owner.headers)
            #expect(posted.status == .seeOther)
            let after = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(after.bodyText.contains("(invalidRange)"), "\(after.bodyText)")
            #expect(try await Self.triggers(fixture).isEmpty)
        }
    }

    @Test("an automation is turned off and on and removed from its list; the list says when it will not fire")
    func offOnRemove() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let added = try await Self.add(
                client, owner,
                [
                    ("shape", "time"), ("name", "Wake"), ("time", "07:00"), ("weekdays[]", "sat"),
                    ("weekdays[]", "sun"), ("actionSets[]", "Good Morning"),
                ])
            #expect(added.bodyText.contains(#""ok":true"#), "\(added.bodyText)")
            var json = owner.headers
            json[.accept] = "application/json"
            let fields: [(String, String)] = [("csrf", owner.csrf), ("home", "Main House"), ("trigger", "Wake")]

            let off = try await client.post(
                "/request", pairs: fields + [("operation", "enableTrigger"), ("enabled", "false")], headers: json)
            #expect(off.bodyText.contains("The automation is off."), "\(off.bodyText)")
            #expect(try await Self.triggers(fixture).first?.isEnabled == false)
            let offPage = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            #expect(
                offPage.contains(
                    #"<strong>Wake</strong> <span class="badge off">off</span>: At 07:00 at weekends, run Good Morning."#
                ))
            #expect(offPage.contains("Next: never while it is off. Last: not yet."))
            #expect(offPage.contains(#"name="enabled" value="true""#) && offPage.contains(">Turn on</button>"))

            let on = try await client.post(
                "/request", pairs: fields + [("operation", "enableTrigger"), ("enabled", "true")], headers: json)
            #expect(on.bodyText.contains("The automation is on."), "\(on.bodyText)")
            #expect(try await Self.triggers(fixture).first?.isEnabled == true)

            let removed = try await client.post(
                "/request", pairs: fields + [("operation", "removeTrigger")], headers: json)
            #expect(removed.bodyText.contains("The automation was removed."), "\(removed.bodyText)")
            #expect(try await Self.triggers(fixture).isEmpty)
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            #expect(!page.contains("<strong>Wake</strong>"))
            #expect(page.contains(#"data-confirm="Remove the automation"#) == false)
        }
    }

    @Test("a guest sees the automations without a form or button; its posts are refused and change nothing")
    func guest() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let added = try await Self.add(
                client, owner,
                [
                    ("shape", "time"), ("name", "Wake"), ("time", "07:00"), ("weekdays[]", "mon"),
                    ("actionSets[]", "Good Morning"),
                ])
            #expect(added.bodyText.contains(#""ok":true"#), "\(added.bodyText)")
            let ownerPage = try await client.execute(
                uri: "/home?name=Main%20House", method: .get, headers: owner.headers
            ).bodyText
            #expect(ownerPage.contains(#"data-confirm="Remove the automation Wake?""#))

            let guest = try await client.logIn("guest")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: guest.headers)
                .bodyText
            #expect(page.contains("<strong>Wake</strong>: At 07:00 on Mon, run Good Morning."), "\(page)")
            #expect(page.contains("Next: none planned. Last: not yet."))
            for absent in [
                #"action="/automation""#, "enableTrigger", "removeTrigger", "Turn off", "<summary>At a time",
            ] {
                #expect(!page.contains(absent), "a guest's page has \(absent)")
            }

            // With its own token, as a forged form would be sent: the model refuses the guest.
            let forged = try await Self.add(
                client, guest,
                [
                    ("shape", "time"), ("name", "Guest's"), ("time", "08:00"), ("weekdays[]", "mon"),
                    ("actionSets[]", "Good Night"),
                ])
            #expect(forged.bodyText.contains(#""code":"insufficientPrivileges""#), "\(forged.bodyText)")
            var json = guest.headers
            json[.accept] = "application/json"
            let off = try await client.post(
                "/request",
                pairs: [
                    ("csrf", guest.csrf), ("operation", "enableTrigger"), ("home", "Main House"), ("trigger", "Wake"),
                    ("enabled", "false"),
                ],
                headers: json)
            #expect(off.bodyText.contains(#""code":"insufficientPrivileges""#), "\(off.bodyText)")
            // Without a token (another site's form): refused before anything is read.
            let noToken = try await client.post(
                "/automation",
                pairs: [
                    ("home", "Main House"), ("shape", "time"), ("name", "Forged"), ("time", "08:00"),
                    ("weekdays[]", "mon"), ("actionSets[]", "Good Night"),
                ],
                headers: guest.headers)
            #expect(noToken.status == .forbidden)
            let triggers = try await Self.triggers(fixture)
            #expect(triggers.map(\.name) == ["Wake"] && triggers.first?.isEnabled == true)
        }
    }

    @Test("with history kept, each automation's last run comes from the timeline, the newest of its own home's")
    func lastRunFromHistory() async throws {
        let history = try HistoryStore.inMemory()
        let fixture = try await WebFixture.make(history: history)
        let home = try await fixture.manager.home("Main House", account: "owner")
        let cabin = try await fixture.manager.home("Lake Cabin", account: "owner")
        let now = Date()
        func fired(_ home: Home, _ name: String, _ secondsAgo: TimeInterval) -> HistoryEntry {
            .event(
                TimelineEvent(
                    home: home.id, time: now - secondsAgo, kind: .automation, accessory: nil, subject: name,
                    detail: "ran"))
        }
        // Given Door Opens fired twice in the Main House, and an automation of that name once later in
        // another home.
        try await history.write([
            fired(home, "Door Opens", 7_200), fired(home, "Door Opens", 3_600), fired(cabin, "Door Opens", 60),
        ])
        try await fixture.test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            let contact = try Self.option(page, "Back Door: contact sensor state")
            for name in ["Door Opens", "Door Closes"] {
                let added = try await Self.add(
                    client, owner,
                    [("shape", "reports"), ("name", name), ("characteristic", contact), ("actionSets[]", "Good Night")])
                #expect(added.bodyText.contains(#""ok":true"#), "\(added.bodyText)")
            }
            // Then the list shows the Main House's latest run, and says the other never ran within the history.
            let listed = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            #expect(listed.contains("Last ran: \(Pages.dateText(now - 3_600, in: home))."), "\(listed)")
            #expect(listed.contains("Last: none in the history kept."), "\(listed)")

            // An entry that names its automation by identifier stays its own when it is renamed.
            let closes = try #require(try await Self.triggers(fixture).first { $0.name == "Door Closes" })
            try await history.write([
                .event(
                    TimelineEvent(
                        home: home.id, time: now - 600, kind: .automation, accessory: nil, subject: "Door Closes",
                        detail: "ran", automation: closes.id))
            ])
            try await fixture.manager.edit(
                .renameTrigger(home: "Main House", trigger: "Door Closes", name: "Door Shut"), account: "owner")
            let renamed = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
                .bodyText
            #expect(renamed.contains("Last ran: \(Pages.dateText(now - 600, in: home))."), "\(renamed)")
            #expect(!renamed.contains("Last: none in the history kept."), "\(renamed)")
        }
    }
}
