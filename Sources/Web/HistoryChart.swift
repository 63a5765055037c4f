import Foundation
import History

/// A characteristic's recorded values drawn as SVG on the hub, with no script and no outside
/// request: a line for a measurement (with the hourly minimum–maximum band when the values are
/// hourly), bands for something on or off (open, detected), bars for a meter's use per day. Colours
/// come from the page's stylesheet (`currentColor` and classes), so the dark palette applies. The
/// same figures go out as a table (``rows(of:kind:)``) for screen readers.
struct HistoryChart: Sendable {
    /// How the values are drawn.
    enum Kind: Sendable, Equatable {
        /// A measurement (temperature, humidity, power): a line.
        case line
        /// A state that is on (1) or off (0): a band where it is on.
        case onOff
        /// A meter that only grows (energy): a bar for each day's growth.
        case dailyUse
    }

    let kind: Kind
    /// The span drawn, left to right.
    let from: Date
    let to: Date
    /// The drawing's size in SVG units; it scales to its box on the page.
    var width = 600.0
    var height = 160.0

    /// The SVG of `answer`, titled `title` (what a screen reader says of the picture).
    func svg(_ answer: HistoryAnswer, title: String) -> String {
        var shapes: [String] = []
        switch (kind, answer) {
        case (.onOff, _):
            shapes = onBands(Self.levels(answer))
        case (.dailyUse, _):
            shapes = bars(Self.dailyGrowth(Self.levels(answer), calendar: Self.utc))
        case (.line, .points(let points)):
            let scale = Scale(points.map(\.value))
            shapes = [polyline(points.map { (x($0.time), scale.y($0.value, height)) })]
        case (.line, .hourly(let hours)):
            let scale = Scale(hours.flatMap { [$0.minimum, $0.maximum] })
            let band =
                hours.map { (x($0.hour), scale.y($0.maximum, height)) }
                + hours.reversed().map { (x($0.hour), scale.y($0.minimum, height)) }
            shapes = [
                #"<polygon class="band" points="\#(Self.coordinates(band))"/>"#,
                polyline(hours.map { (x($0.hour), scale.y($0.mean, height)) }),
            ]
        }
        return
            #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(Self.number(width)) \#(Self.number(height))" role="img" class="history-chart"><title>\#(ScalarHTML().escapeText(title))</title>\#(shapes.joined())</svg>"#
    }

    /// A card's small line of `points` (a day of them, from ``HistoryStore/recentLines``): the
    /// line alone, no band or axis, scaled like the plot, and carried on at the last value to the
    /// span's end (the value still is that, and a single point is then a line too). Empty when
    /// there is nothing to draw.
    func sparkline(_ points: [HistoryPoint]) -> String {
        guard let last = points.last else { return "" }
        let scale = Scale(points.map(\.value))
        var line = points.map { (x($0.time), scale.y($0.value, height)) }
        if x(last.time) < width { line.append((width, scale.y(last.value, height))) }
        return
            #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(Self.number(width)) \#(Self.number(height))" class="sparkline" aria-hidden="true" focusable="false">\#(polyline(line))</svg>"#
    }

    /// The figures drawn, as rows for a table: time and value, or time and minimum, mean, maximum.
    static func rows(of answer: HistoryAnswer) -> [[String]] {
        switch answer {
        case .points(let points): points.map { [timestamp($0.time), number($0.value)] }
        case .hourly(let hours):
            hours.map { [timestamp($0.hour), number($0.minimum), number($0.mean), number($0.maximum)] }
        }
    }

    // MARK: Shapes

    private func polyline(_ points: [(Double, Double)]) -> String {
        guard !points.isEmpty else { return "" }
        return #"<polyline class="line" fill="none" stroke="currentColor" points="\#(Self.coordinates(points))"/>"#
    }

    /// A rectangle from each point that is on to the next point (or the end of the span).
    private func onBands(_ levels: [(time: Date, value: Double)]) -> [String] {
        var shapes: [String] = []
        for (index, level) in levels.enumerated() where level.value >= 0.5 {
            let start = x(level.time)
            let end = index + 1 < levels.count ? x(levels[index + 1].time) : width
            guard end > start else { continue }
            shapes.append(
                #"<rect class="on" x="\#(Self.number(start))" y="0" width="\#(Self.number(end - start))" height="\#(Self.number(height))"/>"#
            )
        }
        return shapes
    }

    private func bars(_ days: [(day: Date, use: Double)]) -> [String] {
        let highest = max(days.map(\.use).max() ?? 0, .leastNonzeroMagnitude)
        let dayWidth = width * 86_400 / max(to.timeIntervalSince(from), 1)
        return days.map { day in
            // The highest day reaches nine tenths of the height; a day of no use has no bar.
            let top = height - day.use / highest * height * 0.9
            return
                #"<rect class="bar" x="\#(Self.number(x(day.day) + dayWidth * 0.1))" y="\#(Self.number(top))" width="\#(Self.number(dayWidth * 0.8))" height="\#(Self.number(height - top))"/>"#
        }
    }

    /// Where `time` is across the drawing, clamped to it.
    private func x(_ time: Date) -> Double {
        let span = max(to.timeIntervalSince(from), 1)
        return min(max(time.timeIntervalSince(from) / span, 0), 1) * width
    }

    // MARK: Figures

    /// The values over time: the points, or each hour's mean.
    static func levels(_ answer: HistoryAnswer) -> [(time: Date, value: Double)] {
        switch answer {
        case .points(let points): points.map { ($0.time, $0.value) }
        case .hourly(let hours): hours.map { ($0.hour, $0.mean) }
        }
    }

    /// How much a growing meter grew each day (its last reading of the day less its first, or less
    /// the day before's last when there is one); a meter that was reset counts from its new start.
    static func dailyGrowth(_ levels: [(time: Date, value: Double)], calendar: Calendar) -> [(day: Date, use: Double)] {
        var days: [(day: Date, use: Double)] = []
        var previous: Double?
        var current: (day: Date, first: Double, last: Double)?
        for level in levels {
            let day = calendar.startOfDay(for: level.time)
            if let open = current, open.day != day {
                days.append((open.day, max(open.last - open.first, 0)))
                previous = open.last
                current = nil
            }
            if current == nil {
                let start = previous.map { $0 <= level.value ? $0 : level.value } ?? level.value
                current = (day, start, level.value)
            }
            current?.last = level.value
        }
        if let open = current { days.append((open.day, max(open.last - open.first, 0))) }
        return days
    }

    private static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    private static func coordinates(_ points: [(Double, Double)]) -> String {
        points.map { "\(number($0.0)),\(number($0.1))" }.joined(separator: " ")
    }

    /// A figure with at most two decimals and no trailing zeros (`21.5`, `3`).
    static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    private static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

/// Values to heights: the lowest at the bottom, the highest at the top, with a tenth of the range
/// of room; a flat series sits in the middle.
private struct Scale {
    let low: Double
    let high: Double

    init(_ values: [Double]) {
        let lowest = values.min() ?? 0
        let highest = values.max() ?? 1
        let room = highest > lowest ? (highest - lowest) / 10 : 1
        low = lowest - room
        high = highest + room
    }

    func y(_ value: Double, _ height: Double) -> Double { height - (value - low) / (high - low) * height }
}
