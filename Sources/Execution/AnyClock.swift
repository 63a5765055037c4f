/// Any clock measured in `Duration`, as one concrete type: the timers (driver timeouts, the group
/// commit's window, probes of silent accessories, late `$layout`s, periodic work) run on the clock
/// they are given, so tests can give one they advance by hand instead of sleeping for real.
package struct AnyClock: Clock {
    /// A moment as the time since the clock was wrapped.
    package struct Instant: InstantProtocol {
        fileprivate let offset: Duration

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let elapsed: @Sendable () -> Duration
    private let sleepUntil: @Sendable (Duration) async throws -> Void
    package let minimumResolution: Duration

    package init<Wrapped: Clock<Duration>>(_ clock: Wrapped) {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleepUntil = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
        minimumResolution = clock.minimumResolution
    }

    package var now: Instant { Instant(offset: elapsed()) }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleepUntil(deadline.offset)
    }
}

extension AnyClock {
    /// The real clock, for what nobody needs to run faster than time.
    package static let continuous = AnyClock(ContinuousClock())

    /// Runs `tick` every `interval` (the first one interval from now, each next one interval after
    /// the last ended) until the calling task is cancelled: the periodic timers (the health topic,
    /// a page's heartbeat, HAP's probes and retries).
    nonisolated(nonsending) package func every(_ interval: Duration, _ tick: nonisolated(nonsending) () async -> Void)
        async
    {
        while (try? await sleep(until: now.advanced(by: interval))) != nil {
            await tick()
        }
    }
}

extension DeadlineTimer where C == AnyClock {
    /// A timer on the real clock, shared by those that are given none.
    package static var continuous: DeadlineTimer<AnyClock> { sharedContinuousTimer }
}

private let sharedContinuousTimer = DeadlineTimer(clock: AnyClock.continuous)
