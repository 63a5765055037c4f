/// How long history is kept and how big it may grow: the budget of docs/history.md.
package struct HistoryRetention: Sendable, Hashable {
    /// How long every recorded value is kept as it came; older values are kept only as hourly
    /// aggregates.
    package var raw: Duration
    /// How long the hourly aggregates are kept.
    package var hourly: Duration
    /// How long the timeline's events are kept.
    package var events: Duration
    /// The most the history database's pages may hold; past it the oldest hour of everything is
    /// dropped, again and again, until it fits.
    package var maximumBytes: Int

    package init(raw: Duration, hourly: Duration, events: Duration, maximumBytes: Int) {
        self.raw = raw
        self.hourly = hourly
        self.events = events
        self.maximumBytes = maximumBytes
    }

    /// Ten days of raw points and events, a year of hourly aggregates, 64 MB at most.
    package static let standard = HistoryRetention(
        raw: .seconds(10 * 86_400), hourly: .seconds(365 * 86_400), events: .seconds(10 * 86_400),
        maximumBytes: 64 << 20)
}
