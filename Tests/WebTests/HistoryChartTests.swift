import Foundation
import History
import Testing

@testable import Web

/// The history chart draws the recorded figures where they belong: the tests read the SVG's
/// coordinates back against the values.
struct HistoryChartTests {
    let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01 00:00 UTC

    @Test("a line: the lowest value near the bottom, the highest near the top, times across the span")
    func line() {
        let chart = HistoryChart(kind: .line, from: start, to: start + 100)
        let svg = chart.svg(
            .points([HistoryPoint(time: start, value: 10), HistoryPoint(time: start + 100, value: 20)]),
            title: "Bedroom temperature")
        // 10 to 20 with a tenth of room: 9 at the bottom (160), 21 at the top (0).
        #expect(svg.contains(#"points="0,146.67 600,13.33""#))
        #expect(svg.contains("<title>Bedroom temperature</title>"))
    }

    @Test("hourly values: each hour's minimum-maximum band and a line through the means")
    func hourly() {
        let chart = HistoryChart(kind: .line, from: start, to: start + 7_200)
        let svg = chart.svg(
            .hourly([
                HourlyAggregate(hour: start, minimum: 0, mean: 5, maximum: 10, count: 60),
                HourlyAggregate(hour: start + 3_600, minimum: 10, mean: 15, maximum: 20, count: 60),
            ]), title: "t")
        // 0 to 20 with 2 of room: y(v) = 160 - (v + 2) / 24 * 160.
        #expect(svg.contains(#"<polygon class="band" points="0,80 300,13.33 300,80 0,146.67"/>"#))
        #expect(svg.contains(#"points="0,113.33 300,46.67""#))
    }

    @Test("on and off: a band from each point that is on to the next point or the span's end")
    func onOff() {
        let chart = HistoryChart(kind: .onOff, from: start, to: start + 100)
        let svg = chart.svg(
            .points([
                HistoryPoint(time: start, value: 1), HistoryPoint(time: start + 50, value: 0),
                HistoryPoint(time: start + 75, value: 1),
            ]), title: "Back door")
        #expect(svg.contains(#"<rect class="on" x="0" y="0" width="300" height="160"/>"#))
        #expect(svg.contains(#"<rect class="on" x="450" y="0" width="150" height="160"/>"#))
        #expect(svg.components(separatedBy: "<rect").count == 3)
    }

    @Test("a meter's use per day: growth within the day and since the day before, a reset counted from its new start")
    func dailyUse() {
        let day = 86_400.0
        let levels: [(time: Date, value: Double)] = [
            (start + 3_600, 100), (start + 7_200, 103),  // day 1: 3
            (start + day + 3_600, 105), (start + day + 7_200, 110),  // day 2: 7 (from 103)
            (start + 2 * day + 60, 1), (start + 2 * day + 3_600, 4),  // day 3: reset, 3 (from 1)
        ]
        let growth = HistoryChart.dailyGrowth(levels, calendar: utc)
        #expect(growth.map(\.use) == [3, 7, 3])
        #expect(growth.map(\.day) == [start, start + day, start + 2 * day])

        let chart = HistoryChart(kind: .dailyUse, from: start, to: start + 3 * day)
        let svg = chart.svg(.points(levels.map { HistoryPoint(time: $0.time, value: $0.value) }), title: "Heater")
        // The highest day (7) reaches nine tenths of the height: 16 from the top.
        #expect(svg.contains(#"<rect class="bar" x="220" y="16" width="160" height="144"/>"#))
    }

    @Test("the title is escaped, and the figures go out as table rows")
    func titleAndRows() {
        let chart = HistoryChart(kind: .line, from: start, to: start + 60)
        #expect(
            chart.svg(.points([]), title: "<b>Tom & Jerry's</b>").contains("&lt;b&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;"))
        let rows = HistoryChart.rows(
            of: .hourly([HourlyAggregate(hour: start, minimum: 1, mean: 2.5, maximum: 4, count: 3)]))
        #expect(rows == [["2026-01-01T00:00:00Z", "1", "2.5", "4"]])
    }

    private var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }
}
