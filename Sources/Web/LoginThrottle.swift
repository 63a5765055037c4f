import Synchronization

/// Limits password guessing: after `limit` failed logins within `window` for one account, or
/// `limit × 4` from one address, further attempts are refused unchecked until the oldest failure
/// leaves the window. A login being checked counts as a failure until it succeeds, so logins sent
/// side by side get no more checks than logins sent one after another. A successful login clears
/// its account's failures.
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

    /// Starts checking one login: nil and the attempt counted as a failure until ``finish(_:account:address:at:)``
    /// says otherwise (so logins sent side by side cannot all be checked before the first failure is
    /// recorded); else how long until one may be checked, and nothing counted.
    func begin(account: String, address: String) -> Attempt {
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
            if let wait = waits.max() { return .refused(wait: wait) }
            failures.byAccount[account, default: []].append(moment)
            failures.byAddress[address, default: []].append(moment)
            return .admitted(moment)
        }
    }

    /// What ``begin(account:address:)`` decided.
    enum Attempt: Equatable {
        /// Check it; pass the instant to ``finish(_:account:address:at:)``.
        case admitted(ContinuousClock.Instant)
        case refused(wait: Duration)
    }

    /// How a checked login ended: a failure stays counted; a success clears the account's failures;
    /// a check that could not be made (broker unreachable) is not counted.
    enum Outcome {
        case failed, succeeded, notChecked
    }

    func finish(_ outcome: Outcome, account: String, address: String, at moment: ContinuousClock.Instant) {
        failures.withLock { failures in
            switch outcome {
            case .failed:
                break
            case .succeeded:
                failures.byAccount[account] = nil
                Self.remove(moment, from: &failures.byAddress, key: address)
            case .notChecked:
                Self.remove(moment, from: &failures.byAccount, key: account)
                Self.remove(moment, from: &failures.byAddress, key: address)
            }
        }
    }

    private static func remove(
        _ moment: ContinuousClock.Instant, from table: inout [String: [ContinuousClock.Instant]], key: String
    ) {
        guard var times = table[key], let index = times.lastIndex(of: moment) else { return }
        times.remove(at: index)
        table[key] = times.isEmpty ? nil : times
    }

    private func prune(_ failures: inout Failures, at moment: ContinuousClock.Instant) {
        let oldest = moment - window
        for table in [\Failures.byAccount, \Failures.byAddress] {
            failures[keyPath: table] = failures[keyPath: table].compactMapValues { times in
                let kept = times.filter { $0 > oldest }
                return kept.isEmpty ? nil : kept
            }
        }
    }
}
