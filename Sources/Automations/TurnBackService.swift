import AsyncMailbox
import Execution
import Foundation
import HomeModel
import Logging
import ServiceLifecycle

/// Returns what automations with a "turn back after" wrote to the values it had before them, when
/// their wait is over (Apple Home's "Turn off after"). The manager stores each pending return when
/// the automation fires (``HomeManager/fireTrigger(_:home:at:)``); this service waits on its clock
/// for the earliest and writes it back. At start a return whose time passed while the hub was down
/// happens at once; one still ahead, at its time. Each firing announced cuts the wait short, for a
/// return that is new or moved.
package struct TurnBackService: ServiceLifecycle.Service {
    private let manager: HomeManager
    private let clock: ScheduleClock
    private let logger: Logger

    package init(manager: HomeManager, clock: ScheduleClock = .system, logger: Logger) {
        self.manager = manager
        self.clock = clock
        self.logger = logger
    }

    package func run() async throws {
        let changes = await changes()
        await cancelWhenGracefulShutdown { await follow(changes) }
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
        let waiter = TurnBackWaiter(manager: manager, clock: clock, logger: logger)
        await withDiscardingTaskGroup { group in
            group.addTask { await waiter.loop() }
            for await _ in changes { await waiter.wake() }
            group.cancelAll()
        }
    }
}

/// The wait for the earliest pending return; what is pending is read from the database on each
/// round, so that a firing that moved a return is never undone early.
actor TurnBackWaiter {
    private let manager: HomeManager
    private let clock: ScheduleClock
    private let logger: Logger
    private var sleeper: Task<Void, Never>?
    /// A wake that came while the loop was not asleep: the next round does not sleep before reading.
    private var woken = false
    /// The returns done in this run, by trigger and due time: one whose removal failed is not repeated.
    private var done: Set<String> = []

    init(manager: HomeManager, clock: ScheduleClock, logger: Logger) {
        self.manager = manager
        self.clock = clock
        self.logger = logger
    }

    /// Cuts the current wait short: a return may be new or moved.
    func wake() {
        woken = true
        sleeper?.cancel()
    }

    func loop() async {
        while !Task.isCancelled {
            woken = false
            let now = clock.now()
            var pending: [PendingTurnBack] = []
            do {
                pending = try manager.pendingTurnBacks().filter { !done.contains(Self.key($0)) }
            } catch {
                logger.error("the pending turn-backs could not be read", metadata: ["error": "\(error)"])
            }
            let due = pending.filter { $0.due <= now }
            for entry in due {
                done.insert(Self.key(entry))
                let results = await manager.turnBack(entry)
                let home = await manager.allHomes().first { $0.id == entry.home }
                let name = home?.trigger(entry.trigger)?.name ?? entry.trigger.rawValue
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
            if !due.isEmpty || woken { continue }
            var wait = SchedulePlanner.longestWait
            if let earliest = pending.map(\.due).min() {
                wait = min(wait, .milliseconds(Int64((earliest.timeIntervalSince(now) * 1_000).rounded(.up))))
            }
            let deadline = clock.clock.now.advanced(by: wait)
            // A task of its own, so that a change of plan cancels it (``sleeper``) and ends the wait early.
            let sleeping = Task { [clock] in _ = try? await clock.clock.sleep(until: deadline) }
            sleeper = sleeping
            await withTaskCancellationHandler {
                await sleeping.value
            } onCancel: {
                sleeping.cancel()
            }
            sleeper = nil
        }
    }

    private static func key(_ pending: PendingTurnBack) -> String {
        "\(pending.trigger.rawValue)@\(pending.due.timeIntervalSince1970)"
    }
}
