import Synchronization

/// Limits password guessing: after `limit` failed logins within `window` for one account, or
/// `limit × 4` from one address, further attempts are refused unchecked until the oldest failure
/// leaves the window. A successful login clears its account's failures.
final class LoginThrottle: Sendable {
    private struct Failures {
        var byAccount: [String: [ContinuousClock.Instant]] = [:]
        var byAddress: [String: [ContinuousClock.Instant]] = [:]
    }

    private let failures = Mutex(Failures())
    let limit: Int
    let window: Duration
    private let now: @Sendable () -> ContinuousClock.Instant

    init(
        limit: Int = 5, window: Duration = .seconds(300),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.limit = limit
        self.window = window
        self.now = now
    }

    /// Nil when an attempt may be checked now; else how long until one may.
    func wait(account: String, address: String) -> Duration? {
        let moment = now()
        return failures.withLock { failures in
            prune(&failures, at: moment)
            var waits: [Duration] = []
            if let recent = failures.byAccount[account], recent.count >= limit {
                waits.append(recent[recent.count - limit] + window - moment)
            }
            if let recent = failures.byAddress[address], recent.count >= limit * 4 {
                waits.append(recent[recent.count - limit * 4] + window - moment)
            }
            return waits.max()
        }
    }

    func failed(account: String, address: String) {
        let moment = now()
        failures.withLock { failures in
            failures.byAccount[account, default: []].append(moment)
            failures.byAddress[address, default: []].append(moment)
        }
    }

    func succeeded(account: String) {
        _ = failures.withLock { $0.byAccount.removeValue(forKey: account) }
    }

    private func prune(_ failures: inout Failures, at moment: ContinuousClock.Instant) {
        let oldest = moment - window
        failures.byAccount = failures.byAccount.compactMapValues { times in
            let kept = times.filter { $0 > oldest }
            return kept.isEmpty ? nil : kept
        }
        failures.byAddress = failures.byAddress.compactMapValues { times in
            let kept = times.filter { $0 > oldest }
            return kept.isEmpty ? nil : kept
        }
    }
}
