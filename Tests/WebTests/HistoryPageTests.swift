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
