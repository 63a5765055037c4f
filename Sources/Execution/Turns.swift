/// Turns, first come first served, for async work that must not interleave on one actor (a layout
/// edit saved while the next waits; one request at a time on a HAP connection). Owned by the actor
/// and used only on it.
package final class Turns {
    private var isTaken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init() {}

    /// Returns once it is the caller's turn; ``end()`` passes it on.
    nonisolated(nonsending) package func take() async {
        guard isTaken else {
            isTaken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Ends the current turn: the longest waiting caller goes on.
    package func end() {
        if waiting.isEmpty {
            isTaken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
