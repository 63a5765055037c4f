import AsyncMailbox
import Execution
import Foundation
import HomeModel
import Logging

/// Returns what automations with a "turn back after" wrote to the values it had before them, when
/// their wait is over (Apple Home's "Turn off after"). The manager stores each pending return when
/// the automation fires (``HomeManager/fireTrigger(_:home:cause:at:)``); this service waits on its clock
/// for the earliest and writes it back. At start a return whose time passed while the hub was down
/// happens at once; one still ahead, at its time. Each firing announced cuts the wait short, for a
/// return that is new or moved. Its writes count as the automation's own in `loopGuard` (the
/// ``AutomationService``'s): what they set off continues the chain of the firing that left them.
package struct TurnBackService: ChangeFollowingService {
    private let manager: HomeManager
    private let clock: ScheduleClock
    private let loopGuard: FiringChains
    private let logger: Logger

    package init(manager: HomeManager, clock: ScheduleClock = .system, loopGuard: FiringChains, logger: Logger) {
        self.manager = manager
        self.clock = clock
        self.loopGuard = loopGuard
        self.logger = logger
    }

    /// The changes that may add or move a pending return: the first (the whole model), and firings.
    package func changes() async -> Mailbox<HomeChange> {
        await manager.changes(where: { change in
            switch change.event {
            case .homeManagerDidUpdateHomes, .didFireTrigger: true
            default: false
            }
        })
    }

    /// Writes back the pending returns as they come due, until `changes` end (or the task is cancelled).
    package func follow(_ changes: Mailbox<HomeChange>) async {
        await TurnBackWaiter(manager: manager, clock: clock, loopGuard: loopGuard, logger: logger).follow(changes)
    }
}

/// The wait for the earliest pending return; what is pending is read from the database on each
/// round, so that a firing that moved a return is never undone early.
actor TurnBackWaiter: PlannedLoop {
    private let manager: HomeManager
    private let clock: ScheduleClock
    private let loopGuard: FiringChains
    private let logger: Logger
    /// The wait for the earliest return, which a firing cuts short.
    private let alarm: DeadlineTimer<AnyClock>.Alarm
    /// The returns done in this run whose rows are still stored, by trigger and due time: one whose
    /// removal failed is not repeated.
    private var done: Set<String> = []

    init(manager: HomeManager, clock: ScheduleClock, loopGuard: FiringChains, logger: Logger) {
        self.manager = manager
        self.clock = clock
        self.loopGuard = loopGuard
        self.logger = logger
        alarm = DeadlineTimer.Alarm(on: clock.timer)
    }

    /// Nothing to plan: each round reads what is pending.
    func start(_ homes: [Home]) {}

    /// Cuts the current wait short: a return may be new or moved.
    func update(_ change: HomeChange) { alarm.ring() }

    func loop() async {
        while !Task.isCancelled {
            let now = clock.now()
            var pending: [PendingTurnBack] = []
            do {
                let stored = try manager.pendingTurnBacks()
                // Only a done return whose row is still stored (its removal failed) is remembered.
                done.formIntersection(stored.map(Self.key))
                pending = stored.filter { !done.contains(Self.key($0)) }
            } catch {
                logger.error("the pending turn-backs could not be read", metadata: ["error": "\(error)"])
            }
            let due = pending.filter { $0.due <= now }
            for entry in due {
                done.insert(Self.key(entry))
                let turnedBack = await manager.turnBack(entry) { [loopGuard] in
                    loopGuard.beginTurnBack(of: entry.trigger, writing: entry.values)
                }
                loopGuard.finishTurnBack(of: entry.trigger, at: .now)
                let home = await manager.allHomes().first { $0.id == entry.home }
                let name = home?.trigger(entry.trigger)?.name ?? entry.trigger.rawValue
                guard let results = turnedBack else {
                    logger.info(
                        "automation '\(name)' was removed or turned off: its turn-back is dropped",
                        metadata: ["home": "\(home?.name ?? entry.home.rawValue)"])
                    continue
                }
                let failures = results.compactMap(\.error?.message)
                let late = now.timeIntervalSince(entry.due)
                let when = late > 5 ? " (\(Int(late)) s late: due while the hub was down)" : ""
                if failures.isEmpty {
                    logger.info(
                        "automation '\(name)' turned \(results.count) value(s) back\(when)",
                        metadata: ["home": "\(home?.name ?? entry.home.rawValue)"])
                } else {
                    logger.warning(
                        "automation '\(name)' turned values back\(when); \(failures.count) failed: \(failures.joined(separator: "; "))",
                        metadata: ["home": "\(home?.name ?? entry.home.rawValue)"])
                }
            }
            if !due.isEmpty { continue }
            await clock.sleep(until: pending.map(\.due).min(), on: alarm)
        }
    }

    private static func key(_ pending: PendingTurnBack) -> String {
        "\(pending.trigger.rawValue)@\(pending.due.timeIntervalSince1970)"
    }
}
