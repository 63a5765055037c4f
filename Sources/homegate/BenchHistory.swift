import ArgumentParser
import Foundation
import History
import HomeModel
import Synchronization

/// `homegate bench-history` (hidden): the history figures of `make bench` measured in the binary
/// under test, the hub build included. Simulates a home of `--series` characteristics each changing
/// once a minute for `--days`, written to a history file in `--directory` the way the recorder
/// writes (a batch a minute, retention every simulated hour), with the store's clock moved by the
/// simulation instead of waiting; prints the file's size along the way, then times a week's query
/// of one characteristic and a day's raw points. One JSON line on stdout, the story on stderr.
struct BenchHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-history", abstract: "The history benchmark of make bench (bench/run.sh --only history).",
        shouldDisplay: false)

    @Option(help: "An empty folder for the history file.")
    var directory: String

    @Option(help: "How many characteristics change once a minute.")
    var series = 100

    @Option(help: "How many days to simulate.")
    var days = 30

    @Option(help: "How many times each query is timed.")
    var queries = 50

    @Option(help: "The size bound, in MB (history.maxMegabytes; the gateway's default is 200).")
    var maxMegabytes = 200

    func run() async throws {
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01 00:00 UTC
        let now = Mutex(start)
        let clock = HistoryClock(clock: HistoryClock.system.clock) { now.withLock { $0 } }
        var retention = HistoryRetention.standard
        retention.maximumBytes = maxMegabytes << 20
        let path = URL(fileURLWithPath: directory).appendingPathComponent(HistoryStore.fileName).path
        let store = try HistoryStore.open(atPath: path, retention: retention, clock: clock, lowPriority: false)
        let home: HomeID = "bench"
        let keys = (0..<series).map {
            SeriesKey(
                home: home,
                value: ValueKey(
                    accessory: AccessoryID("sensor-\($0)"), service: "main", characteristic: .currentTemperature))
        }

        // The month: a point a minute for each characteristic, retention every hour.
        var growth: [String] = []
        let simulated = ContinuousClock.now
        for minute in 0..<(days * 1440) {
            let time = start.addingTimeInterval(Double(minute) * 60)
            now.withLock { $0 = time }
            try await store.write(
                keys.enumerated().map { index, key in
                    // A reading to a tenth of a degree that wanders through the day.
                    let value = 20 + 4 * sin(Double(minute + index * 37) / 229) + Double((minute * 7 + index) % 10) / 10
                    return .point(key, HistoryPoint(time: time, value: (value * 10).rounded() / 10))
                })
            if (minute + 1) % 60 == 0 {
                now.withLock { $0 = time.addingTimeInterval(60) }
                try await store.applyRetention()
            }
            if (minute + 1) % 1440 == 0 {
                let day = (minute + 1) / 1440
                let bytes = store.fileBytes()
                growth.append("\"day\(day)_mb\":\(Self.megabytes(bytes))")
                if [1, 7, 10, 11, 20, days].contains(day) {
                    printError("history: day \(day): the file and its WAL \(Self.megabytes(bytes)) MB")
                }
            }
        }
        let simulation = simulated.duration(to: .now)

        // The queries, as of the month's end.
        let key = keys[0].value
        let end = now.withLock { $0 }
        func timed(_ span: TimeInterval, _ resolution: HistoryResolution?) async throws -> (
            p50: Double, p99: Double, count: Int, unit: String
        ) {
            var times: [Double] = []
            var count = 0
            var unit = ""
            for _ in 0..<queries {
                let began = ContinuousClock.now
                let answer = try await store.points(
                    accessory: key.accessory, service: key.service, characteristic: key.characteristic,
                    from: end.addingTimeInterval(-span), to: end, resolution: resolution)
                times.append(Self.milliseconds(began.duration(to: .now)))
                switch answer {
                case .points(let points): (count, unit) = (points.count, "points")
                case .hourly(let hours): (count, unit) = (hours.count, "hours")
                }
            }
            times.sort()
            return (times[times.count / 2], times[min(times.count - 1, times.count * 99 / 100)], count, unit)
        }
        let week = try await timed(7 * 86_400, nil)
        let day = try await timed(86_400, .raw)
        printError(
            "history: \(series) characteristics × \(days) days simulated in \((Self.milliseconds(simulation) / 100).rounded() / 10) s; "
                + "a week of one (answered as \(week.count) \(week.unit)) p50 \(week.p50) ms, p99 \(week.p99) ms; "
                + "a day of its raw points (\(day.count)) p50 \(day.p50) ms, p99 \(day.p99) ms")
        print(
            "{\"series\":\(series),\"days\":\(days),\"bound_mb\":\(maxMegabytes),\"simulation_s\":\((Self.milliseconds(simulation) / 100).rounded() / 10),"
                + "\"file_mb\":\(Self.megabytes(store.fileBytes())),\"used_mb\":\(Self.megabytes(try await store.usedBytes())),"
                + "\"week_answer\":\"\(week.count) \(week.unit)\",\"week_p50_ms\":\(week.p50),\"week_p99_ms\":\(week.p99),"
                + "\"day_points\":\(day.count),\"day_p50_ms\":\(day.p50),\"day_p99_ms\":\(day.p99),\(growth.joined(separator: ","))}"
        )
    }

    private static func megabytes(_ bytes: Int) -> String { String(format: "%.2f", Double(bytes) / 1_048_576) }

    private static func milliseconds(_ duration: Duration) -> Double {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (value * 100).rounded() / 100
    }
}
