import Logging
import Synchronization

/// Every log line a logger wrote, for tests: `Logger(label: "test") { _ in lines }`, or ``logger``.
package final class LogLines: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[(level: Logger.Level, message: String)]>([])
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .trace

    package init() {}

    package var all: [(level: Logger.Level, message: String)] { lines.withLock { $0 } }

    /// A logger that writes here.
    package var logger: Logger { Logger(label: "test") { _ in self } }

    /// Whether a line holds `text`.
    package func contains(_ text: String) -> Bool { all.contains { $0.message.contains(text) } }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        lines.withLock { $0.append((event.level, "\(event.message)")) }
    }
}
