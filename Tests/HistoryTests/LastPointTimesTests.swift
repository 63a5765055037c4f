import Foundation
import HomeModel
import Testing

@testable import History

@Suite("Points of one millisecond")
struct LastPointTimesTests {
    static let series = SeriesKey(home: HistoryStoreTests.home, value: HistoryStoreTests.sensor)

    static func time(_ entry: HistoryEntry) -> Date? {
        if case .point(_, let point) = entry { point.time } else { nil }
    }

    @Test(
        "points of one series in one millisecond are spaced a millisecond apart, in order; a clock set back keeps its time"
    )
    func spacing() {
        var last = LastPointTimes()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let taken = [start, start, start, start.addingTimeInterval(-0.5), start.addingTimeInterval(-3_600)].map {
            last.spaced(.point(Self.series, HistoryPoint(time: $0, value: 1)))
        }
        let milliseconds = taken.compactMap(Self.time).map(\.timeIntervalSince1970).map { Int64(($0 * 1000).rounded()) }
        let first = Int64(1_800_000_000_000)
        // Taken together or half a second early (within a batch): the next millisecond each; an hour
        // early (the system clock set back): its own time, not an hour of points squeezed after the last
        #expect(milliseconds == [first, first + 1, first + 2, first + 3, first - 3_600_000])
    }
}
