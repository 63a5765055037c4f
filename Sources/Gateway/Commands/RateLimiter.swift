import HomeModel
import Synchronization

/// How many commands and requests one account may send: a sustained rate and a burst on top of it
/// (config `commands.rateLimit`).
package struct RateLimit: Sendable, Hashable {
    /// Messages per second an account may send for as long as it likes.
    package var perSecond: Double
    /// Messages an idle account may send at once before the rate applies.
    package var burst: Int

    package init(perSecond: Double = 50, burst: Int = 100) {
        self.perSecond = perSecond
        self.burst = burst
    }

    /// 50 per second with bursts of 100: far above what a household or Home Assistant sends, far
    /// below what would keep the gateway from serving the other accounts.
    package static let standard = RateLimit()
}

/// A token bucket per account: every message takes a token, tokens come back at `perSecond` up to
/// `burst`. A message that finds no token is refused, so one account's flood cannot crowd out the
/// others' commands. Thread-safe; checking is a few arithmetic operations under a lock.
package final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    package let limit: RateLimit
    /// Buckets are forgotten once they are full again and more than this many accounts are known,
    /// so made-up account names cannot grow memory without bound.
    private let retainedAccounts: Int
    let buckets = Mutex<[String: Bucket]>([:])

    package init(_ limit: RateLimit, retainedAccounts: Int = 1024) {
        self.limit = limit
        self.retainedAccounts = retainedAccounts
    }

    /// Takes a token for `account`; false when it has none left and the message must be refused.
    func admit(_ account: String, at now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            var bucket = buckets[account] ?? Bucket(tokens: Double(limit.burst), updated: now)
            bucket.tokens = refilled(bucket, at: now)
            bucket.updated = now
            let admitted = bucket.tokens >= 1
            if admitted { bucket.tokens -= 1 }
            buckets[account] = bucket
            if buckets.count > retainedAccounts {
                buckets = buckets.filter { refilled($0.value, at: now) < Double(limit.burst) }
            }
            return admitted
        }
    }

    /// How long until `account` has a token again (zero when it has one now).
    package func retryAfter(_ account: String, at now: ContinuousClock.Instant = .now) -> Duration {
        buckets.withLock { buckets in
            guard let bucket = buckets[account], limit.perSecond > 0 else { return .zero }
            let missing = 1 - refilled(bucket, at: now)
            return missing <= 0 ? .zero : .milliseconds(Int64((missing / limit.perSecond * 1000).rounded(.up)))
        }
    }

    private func refilled(_ bucket: Bucket, at now: ContinuousClock.Instant) -> Double {
        let elapsed = now - bucket.updated
        let seconds = elapsed / .seconds(1)
        return min(Double(limit.burst), bucket.tokens + max(0, seconds) * limit.perSecond)
    }
}

extension RateLimiter {
    /// The answer to a message over the limit.
    static func refusal(_ account: String, _ limiter: RateLimiter) -> HomeError {
        HomeError(
            .tooManyRequests,
            "'\(account)' sent more than \(limiter.limit.burst) messages at once or more than \(limiter.limit.perSecond) a second; nothing was done, send again in \(limiter.retryAfter(account))."
        )
    }
}
