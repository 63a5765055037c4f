import AsyncMailbox
import Execution
import Foundation
import HomeModel
import ServiceLifecycle

/// The wall time and the timer the schedule and turn-back services wait on: they read "now" as a
/// date (what a schedule is computed from) and wait on the timer's clock, so tests move both by hand.
package struct ScheduleClock: Sendable {
    /// What the services wait on.
    package let timer: DeadlineTimer<AnyClock>
    /// The wall-clock time now.
    package let now: @Sendable () -> Date

    /// The steady clock the timer runs on.
    package var clock: AnyClock { timer.clock }

    package init(clock: some Clock<Duration>, now: @escaping @Sendable () -> Date) {
        self.init(timer: DeadlineTimer(clock: AnyClock(clock)), now: now)
    }

    private init(timer: DeadlineTimer<AnyClock>, now: @escaping @Sendable () -> Date) {
        self.timer = timer
        self.now = now
    }

    /// The system's clocks, on the process's shared timer.
    package static let system = ScheduleClock(timer: .continuous, now: { Date() })

    /// The longest wait: a system clock set while a service waits is noticed within it.
    static let longestWait = Duration.seconds(60)

    /// Waits on `alarm` until the wall clock reaches `next` (for ever: nil), at most ``longestWait``.
    /// The steady clock is read before the wall clock: time that passes between the two reads makes
    /// the wait end early (the loop then looks again), never late.
    func sleep(until next: Date?, on alarm: DeadlineTimer<AnyClock>.Alarm) async {
        let steady = clock.now
        var wait = Self.longestWait
        if let next { wait = min(wait, .milliseconds(Int64((next.timeIntervalSince(now()) * 1_000).rounded(.up)))) }
        await alarm.sleep(until: steady.advanced(by: wait))
    }
}

/// A service that follows some of the manager's changes: it subscribes to them, then follows them
/// until they end or a graceful shutdown begins.
package protocol ChangeFollowingService: ServiceLifecycle.Service {
    /// The manager's changes the service follows, subscribed to before ``follow(_:)``.
    func changes() async -> Mailbox<HomeChange>
    /// Acts on `changes` until they end (or the task is cancelled).
    func follow(_ changes: Mailbox<HomeChange>) async
}

extension ChangeFollowingService {
    package func run() async throws {
        let changes = await changes()
        await cancelWhenGracefulShutdown { await follow(changes) }
    }
}

/// The shape of the schedule and turn-back services: a plan of what is due when, a loop that does
/// what is due and waits on the timer for the next, and the manager's changes, which move the plan
/// and cut the wait short.
protocol PlannedLoop: Actor {
    /// Plans from the whole model (the first change) before the loop starts.
    func start(_ homes: [Home]) async
    /// Does what comes due, until the task is cancelled.
    func loop() async
    /// Plans again after `change`, cutting the loop's wait short.
    func update(_ change: HomeChange) async
}

extension PlannedLoop {
    /// Runs the plan on the homes `changes` carries until they end (or the task is cancelled).
    nonisolated func follow(_ changes: Mailbox<HomeChange>) async {
        var iterator = changes.makeAsyncIterator()
        guard let first = await iterator.next() else { return }
        await start(first.homes)
        await withDiscardingTaskGroup { group in
            group.addTask { await self.loop() }
            while let change = await iterator.next() { await update(change) }
            group.cancelAll()
        }
    }
}
