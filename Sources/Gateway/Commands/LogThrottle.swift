import Synchronization

/// Says when something may be logged again for one key: once a minute, with how many times it
/// happened since the last log line. Remembers at most `keys` keys (the oldest are forgotten), so
/// made-up keys cannot grow memory without bound.
final class LogThrottle: Sendable {
    private struct Entry {
        var logged: ContinuousClock.Instant
        var count: Int
    }

    let interval = Duration.seconds(60)
    private let keys = 1024
    private let entries = Mutex<[String: Entry]>([:])

    /// Counts one occurrence for `key`; returns the occurrences since the last log line when one
    /// is due now, else nil.
    func admit(_ key: String, at now: ContinuousClock.Instant = .now) -> Int? {
        entries.withLock { entries in
            if var entry = entries[key] {
                entry.count += 1
                guard now - entry.logged >= interval else {
                    entries[key] = entry
                    return nil
                }
                entries[key] = Entry(logged: now, count: 0)
                return entry.count
            }
            if entries.count >= keys, let oldest = entries.min(by: { $0.value.logged < $1.value.logged })?.key {
                entries[oldest] = nil
            }
            entries[key] = Entry(logged: now, count: 0)
            return 1
        }
    }
}
