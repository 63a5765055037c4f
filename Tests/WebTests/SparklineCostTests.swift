import Foundation
import History
import HomeModel
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Web

/// What the small lines cost a big home's page: 100 temperature sensors, each with a day of one
/// point a minute. Prints the figures (no timed assertion: the machine's load decides them).
struct SparklineCostTests {
    static let sensors = 100

    /// A home file of `sensors` virtual temperature sensors, 20 to a room.
    static func homeFile() throws -> URL {
        var yaml = "devices:\n"
        for index in 1...sensors {
            yaml += "  - { id: sensor-\(index), name: Sensor \(index), kind: temperatureSensor }\n"
        }
        yaml += "homes:\n  - name: Main House\n    primary: true\n    administrator: { account: owner, name: Olivia }\n"
        yaml += "    guests:\n      - { account: guest, name: Gabriel }\n    rooms: ["
        yaml += (1...(sensors / 20)).map { "Room \($0)" }.joined(separator: ", ") + "]\n    accessories:\n"
        for index in 1...sensors { yaml += "      - { id: sensor-\(index), room: Room \((index - 1) / 20 + 1) }\n" }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sparkline-home-\(UUID()).yml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("a home of 100 sensors with a day of points each: one line per card, and what the page costs")
    func hundredSensors() async throws {
        let file = try Self.homeFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let history = try HistoryStore.inMemory()
        let withHistory = try await WebFixture.make(history: history, home: file)
        let without = try await WebFixture.make(home: file)

        // Given a day of one point a minute for every sensor's temperature (144,000 points)
        let home = try await withHistory.manager.home("Main House", account: "owner")
        let keys = home.accessories.compactMap { accessory in
            accessory.services.first { $0.characteristic(.currentTemperature) != nil }.map {
                SeriesKey(
                    home: home.id,
                    value: ValueKey(accessory: accessory.id, service: $0.id, characteristic: .currentTemperature))
            }
        }
        #expect(keys.count == Self.sensors)
        let now = Date()
        for minute in stride(from: 1440, to: 0, by: -1) {
            let time = now - Double(minute) * 60
            try await history.write(
                keys.enumerated().map {
                    .point($1, HistoryPoint(time: time, value: 20 + Double(($0 + minute) % 50) / 10))
                })
        }

        // When the page is opened again and again, with history and without
        func timings(_ fixture: WebFixture) async throws -> (median: Duration, cards: Int) {
            try await fixture.test { client in
                let browser = try await client.logIn("guest")
                var times: [Duration] = []
                var body = ""
                for _ in 0..<7 {
                    let start = ContinuousClock.now
                    let page = try await client.execute(
                        uri: "/home?name=Main%20House", method: .get, headers: browser.headers)
                    times.append(start.duration(to: .now))
                    body = page.bodyText
                }
                return (times.sorted()[times.count / 2], body.components(separatedBy: #"class="sparkline""#).count - 1)
            }
        }
        let drawn = try await timings(withHistory)
        let plain = try await timings(without)

        // Then every sensor's card has its line, and the figures are printed
        #expect(drawn.cards == Self.sensors)
        #expect(plain.cards == 0)
        let query = ContinuousClock.now
        _ = try await history.recentLines(home: home.id, from: now - 86_400, to: now)
        let queried = query.duration(to: .now)
        print(
            "sparkline cost, \(Self.sensors) sensors × 1,440 points: the home page in \(drawn.median) with the lines, "
                + "\(plain.median) without (medians of 7); the one query alone \(queried)")
    }
}
