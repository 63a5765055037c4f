import Foundation
import History
import HomeModel
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Web

/// The history pages: a member sees what was recorded, drawn and as a table; a non-member learns
/// nothing; the home page links to them only when history is kept.
struct HistoryPageTests {
    static let brightness =
        "/history?home=Main%20House&accessory=Floor%20Lamp&service=Lightbulb&characteristic=Brightness"

    /// A fixture whose history holds two brightness points an hour apart and the back door opening.
    private func recorded() async throws -> WebFixture {
        let history = try HistoryStore.inMemory()
        let fixture = try await WebFixture.make(history: history)
        let home = try await fixture.manager.home("Main House", account: "owner")
        let lamp = try home.accessory(named: "Floor Lamp")
        let light = try lamp.service(named: "Lightbulb")
        let key = SeriesKey(
            home: home.id, value: ValueKey(accessory: lamp.id, service: light.id, characteristic: .brightness))
        let now = Date()
        try await history.write([
            .point(key, HistoryPoint(time: now - 7_200, value: 40)),
            .point(key, HistoryPoint(time: now - 3_600, value: 70)),
            .event(
                TimelineEvent(
                    home: home.id, time: now - 600, kind: .contact, accessory: nil, subject: "Back Door",
                    detail: "opened")),
        ])
        return fixture
    }

    @Test("the owner and a guest see the recorded values drawn and in the table; a stranger sees no such home")
    func characteristicHistory() async throws {
        try await recorded().test { client in
            for account in ["owner", "guest"] {
                let browser = try await client.logIn(account)
                let page = try await client.execute(uri: Self.brightness, method: .get, headers: browser.headers)
                #expect(page.status == .ok, "\(account)")
                #expect(page.bodyText.contains("<polyline class=\"line\""), "\(account)")
                #expect(page.bodyText.contains("<td>40</td>") && page.bodyText.contains("<td>70</td>"), "\(account)")
                #expect(page.bodyText.contains("Floor Lamp: Brightness"), "\(account)")
            }
            let stranger = try await client.logIn("stranger")
            let refused = try await client.execute(uri: Self.brightness, method: .get, headers: stranger.headers)
            #expect(refused.status == .notFound)
            #expect(!refused.bodyText.contains("<svg"))
        }
    }

    @Test("the home's timeline says what happened in words; the home page links to it and to each recorded value")
    func timelineAndLinks() async throws {
        try await recorded().test { client in
            let owner = try await client.logIn("owner")
            let timeline = try await client.execute(
                uri: "/timeline?home=Main%20House", method: .get, headers: owner.headers)
            #expect(timeline.status == .ok)
            #expect(timeline.bodyText.contains("Back Door opened"))
            let home = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(home.bodyText.contains(#"href="/timeline?home=Main%20House""#))
            #expect(home.bodyText.contains(Self.brightness.replacingOccurrences(of: "&", with: "&amp;")))
        }
    }

    @Test("the lamp's card carries a small line of its last day: the recorded points read back, an older one left out")
    func sparkline() async throws {
        let history = try HistoryStore.inMemory()
        let fixture = try await WebFixture.make(history: history)
        let home = try await fixture.manager.home("Main House", account: "owner")
        let lamp = try home.accessory(named: "Floor Lamp")
        let key = SeriesKey(
            home: home.id,
            value: ValueKey(
                accessory: lamp.id, service: try lamp.service(named: "Lightbulb").id, characteristic: .brightness))
        // Given five brightness points within the last day (each in a half-hour slice of its own) and one before it
        let now = Date()
        let day: [(hoursAgo: Double, value: Double)] = [(20, 10), (15, 50), (10, 30), (5, 90), (1, 60)]
        try await history.write(
            [.point(key, HistoryPoint(time: now - 30 * 3_600, value: 99))]
                + day.map { .point(key, HistoryPoint(time: now - $0.hoursAgo * 3_600, value: $0.value)) })

        try await fixture.test { client in
            for account in ["owner", "guest"] {
                // When a member opens the home's page
                let browser = try await client.logIn(account)
                let page = try await client.execute(
                    uri: "/home?name=Main%20House", method: .get, headers: browser.headers)
                let opened = Date()

                // Then the lamp's History link draws the five points where they belong
                let link = Self.brightness.replacingOccurrences(of: "&", with: "&amp;")
                let line = try #require(Self.sparklinePoints(in: page.bodyText, after: link), "\(account)")
                // (and the last value carried on to the day's end)
                #expect(line.count == day.count + 1, "\(account): \(line)")
                #expect(line.last?.x == 96 && line.last?.y == line.dropLast().last?.y, "\(account): \(line)")
                // 10 to 90 with a tenth of room: 2 at the bottom (24), 98 at the top (0); a day across 96.
                for (drawn, recorded) in zip(line, day) {
                    let value = 2 + (24 - drawn.y) / 24 * 96
                    let hoursAgo = (1 - drawn.x / 96) * 24
                    #expect(abs(value - recorded.value) < 0.1, "\(account): \(drawn) for \(recorded)")
                    // Drawn at the middle of its half-hour slice of the page's day, which ended between
                    // `now` and `opened`.
                    let slack = 0.25 + opened.timeIntervalSince(now) / 3_600 + 0.01
                    #expect(abs(hoursAgo - recorded.hoursAgo) <= slack, "\(account): \(drawn) for \(recorded)")
                }
                // and a value without recorded points has no line
                #expect(page.bodyText.components(separatedBy: #"class="sparkline""#).count == 2, "\(account)")
            }
            // A stranger gets no page of the home, and no line
            let stranger = try await client.logIn("stranger")
            let refused = try await client.execute(
                uri: "/home?name=Main%20House", method: .get, headers: stranger.headers)
            #expect(refused.status == .notFound)
            #expect(!refused.bodyText.contains("sparkline"))
        }
    }

    /// The (x, y) of the small line drawn in the link to `href`.
    static func sparklinePoints(in page: String, after href: String) -> [(x: Double, y: Double)]? {
        guard let link = page.range(of: #"href="\#(href)""#),
            let svg = page[link.upperBound...].firstMatch(
                of: /^[^>]*><svg[^>]*class="sparkline"[^>]*><polyline[^>]*points="([^"]*)"/)
        else { return nil }
        return svg.1.split(separator: " ").compactMap { pair in
            let xy = pair.split(separator: ",").compactMap { Double($0) }
            return xy.count == 2 ? (xy[0], xy[1]) : nil
        }
    }

    @Test("an unknown characteristic is named in the answer; without history the page says it is not kept")
    func problems() async throws {
        try await recorded().test { client in
            let owner = try await client.logIn("owner")
            let unknown = try await client.execute(
                uri: "/history?home=Main%20House&accessory=Floor%20Lamp&service=Lightbulb&characteristic=Nonsense",
                method: .get, headers: owner.headers)
            #expect(unknown.status == .notFound)
            #expect(unknown.bodyText.contains("has no Nonsense"))
        }
        try await WebFixture.make().test { client in
            let owner = try await client.logIn("owner")
            let page = try await client.execute(uri: Self.brightness, method: .get, headers: owner.headers)
            #expect(page.status == .notFound)
            #expect(page.bodyText.contains("keeps no history"))
            let home = try await client.execute(uri: "/home?name=Main%20House", method: .get, headers: owner.headers)
            #expect(!home.bodyText.contains("/history?"))
        }
    }
}
