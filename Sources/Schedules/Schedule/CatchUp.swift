import Foundation

/// What came due while the hub was down, and what to do about each: the latest firing runs once
/// at start if it is less than the grace late; every other one is missed, to be logged.
package struct CatchUp: Sendable, Hashable {
    /// One firing that came due between the hub's last run and now.
    package struct Due: Sendable, Hashable {
        package let firing: Firing
        /// How long before now it came due.
        package let lateness: Duration
        package let verdict: Verdict
    }

    package enum Verdict: Sendable, Hashable {
        /// Runs now, once.
        case runs
        /// Not run: it is a grace or more late.
        case tooLate
        /// Not run: a later firing came due within the grace too, and only one runs.
        case supersededByLater
    }

    /// How late a firing may be and still run at start, unless an automation says otherwise.
    package static let standardGrace = Duration.seconds(15 * 60)

    /// The most firings listed: an every-five-minutes timer down for a month came due 8,640 times.
    package static let standardLimit = 100

    /// The firings that came due, oldest first: the latest ``standardLimit`` of them.
    package let due: [Due]
    /// How many more came due before those listed (all missed).
    package let omitted: Int

    /// The firings in (`lastRun`, `now`] of `schedule`, after `lastFiring` if it fired before the
    /// hub went down, each with its verdict.
    package init(
        _ schedule: some FiringSchedule, lastRun: Date, lastFiring: Firing? = nil, now: Date, timeZone: TimeZone,
        grace: Duration = CatchUp.standardGrace, limit: Int = CatchUp.standardLimit
    ) {
        var firings: [Firing] = []
        var omitted = 0
        var last = lastFiring
        var from = lastRun
        while let next = schedule.nextFiring(after: from, following: last, in: timeZone), next.instant <= now {
            firings.append(next)
            if firings.count > limit {
                firings.removeFirst()
                omitted += 1
            }
            last = next
            from = next.instant
        }
        let graceSeconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) * 1e-18
        self.due = firings.enumerated().map { index, firing in
            let late = now.timeIntervalSince(firing.instant)
            let verdict: Verdict =
                late >= graceSeconds ? .tooLate : index < firings.count - 1 ? .supersededByLater : .runs
            return Due(firing: firing, lateness: .seconds(late), verdict: verdict)
        }
        self.omitted = omitted
    }

    /// The firing to run now, if any.
    package var runs: Firing? { due.last.flatMap { $0.verdict == .runs ? $0.firing : nil } }
}
