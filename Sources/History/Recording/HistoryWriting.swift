/// Where the recorder puts what it recorded: the ``HistoryStore``, or in a test one that is slow
/// or fails.
package protocol HistoryWriting: Sendable {
    /// Keeps `batch`, all or nothing.
    func write(_ batch: [HistoryEntry]) async throws
    /// Ages what was kept (``HistoryStore/applyRetention()``).
    func applyRetention() async throws
}
