/// Turns, first come first served, for async work that must not interleave on one actor (a layout
/// edit saved while the next waits; one request at a time on a HAP connection). Owned by the actor
/// and used only on it: each call names the actor it runs on (`#isolation`, the caller's), and a
/// debug build stops at a call from anywhere else, where two threads could both take the turn.
package final class Turns {
    private var isTaken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init() {}

    /// Returns once it is the caller's turn; ``end(isolation:)`` passes it on.
    package func take(isolation actor: isolated (any Actor)? = #isolation) async {
        assert(actor != nil, "Turns taken outside an actor")
        actor?.assertIsolated("Turns taken off its actor")
        guard isTaken else {
            isTaken = true
            return
        }
        // Decided again where the wait begins: the `await` may suspend before the closure runs (seen
        // with a request's task, which prefers the global executor), and the turn may have ended
        // meanwhile with nobody waiting. Deciding only before it left a waiter behind a free turn
        // until the next taker came (a guest's `addRoom` unanswered).
        await withCheckedContinuation(isolation: actor) { turn in
            actor?.assertIsolated("Turns waited for off its actor")
            if isTaken {
                waiting.append(turn)
            } else {
                isTaken = true
                turn.resume()
            }
        }
    }

    /// Ends the current turn: the longest waiting caller goes on.
    package func end(isolation actor: isolated (any Actor)? = #isolation) {
        actor?.assertIsolated("Turns ended off its actor")
        if waiting.isEmpty {
            isTaken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
