import AsyncMailbox
import Foundation
import HomeModel
import Logging
import Synchronization

/// Runs the homes' automations (HomeKit's event triggers): follows the model's changes and, when a
/// characteristic takes the value an automation waits for (a button's press, a door opening), fires
/// it through the manager, which runs its action sets as the home's administrator would. It is a
/// service beside the adapters: it reads the same change stream they do and changes the home only
/// through the manager.
///
/// A home's firings run one after another, in the order their changes came: a press that comes
/// while the previous firing still runs waits for it. Homes do not wait for each other.
///
/// An automation that sets off itself, or two that set off each other, would fire for ever: a
/// change that one of the recent firings wrote (``FiringChains``) continues that firing's chain,
/// and an automation coming round in its own chain for the ``LoopRule/rounds``+1-th time is not
/// fired: the loop ends there, with one warning naming its automations. A turn-back's writes
/// (``TurnBackService``, given the same ``loopGuard``) continue the chain of the firing that left it
/// pending, so a loop through a "turn back after" is one too. Beyond that, each
/// automation fires at most ``FiringLimit/count`` times a ``FiringLimit/window``; what comes
/// beyond it is skipped, with one warning per window.
package struct AutomationService: ChangeFollowingService {
    /// How often one automation may fire.
    package struct FiringLimit: Sendable {
        package var count: Int
        package var window: Duration

        /// Far above what a person pressing a button does; a loop reaches it within a second.
        package static let standard = FiringLimit(count: 30, window: .seconds(60))
    }

    /// When a firing's chain is a loop: how many times an automation may come round in it, and how
    /// long after a firing ends a change it wrote still counts as its doing.
    package struct LoopRule: Sendable {
        package var rounds: Int
        package var window: Duration

        /// Three rounds; a device's report of a write arrives well within five seconds.
        package static let standard = LoopRule(rounds: 3, window: .seconds(5))
    }

    private let manager: HomeManager
    /// The wall time a firing happens at (when its turn-back is due from, what its conditions'
    /// time windows are judged at).
    private let clock: ScheduleClock
    private let limit: FiringLimit
    private let loops = LoopRule.standard
    private let logger: Logger
    /// What recent firings wrote, for the ``TurnBackService`` to add its writes to.
    package let loopGuard: FiringChains

    package init(
        manager: HomeManager, clock: ScheduleClock = .system, limit: FiringLimit = .standard, logger: Logger
    ) {
        self.manager = manager
        self.clock = clock
        self.limit = limit
        self.logger = logger
        loopGuard = FiringChains(rule: loops)
    }

    /// The manager's changes this service fires on: the values an automation waits for (any value
    /// of a threshold automation's characteristic, to know where it stands), and the layout changes
    /// that add or change automations. A value no automation waits for (nearly every one) does not
    /// wake it: waking it for each cost a sixth of the gateway's CPU per write in the benchmark's
    /// window (docs/benchmarks.md).
    package func changes() async -> Mailbox<HomeChange> {
        await manager.changes(where: { change in
            switch change.event {
            case .didUpdateValueForCharacteristic(let homeID, let accessory, let service, let type, let value):
                guard let home = change.homes.first(where: { $0.id == homeID }), !home.triggers.isEmpty else {
                    return false
                }
                let key = ValueKey(accessory: accessory, service: service, characteristic: type)
                return home.triggers.contains { $0.isFired(by: key, value: value) }
                    || ThresholdCrossings.watches(key, in: home)
            case .homeManagerDidUpdateHomes, .didAddTrigger, .didUpdateTrigger: return true
            default: return false
            }
        })
    }

    /// Fires what `changes` (the manager's, subscribed to by the caller) set off, until they end.
    /// Each home's firings run one after another on a task of their own: an automation waiting on
    /// a slow device holds up its own home's, not another home's.
    package func follow(_ changes: Mailbox<HomeChange>) async {
        var firings = RecentFirings(limit: limit)
        let chains = loopGuard
        await withDiscardingTaskGroup { group in
            var queues: [HomeID: AsyncStream<(TriggerID, FiringCause, Int)>.Continuation] = [:]
            var crossings = ThresholdCrossings()
            var isFirst = true
            for await change in changes {
                defer { isFirst = false }
                guard
                    case .didUpdateValueForCharacteristic(let homeID, let accessory, let service, let type, let value) =
                        change.event
                else {
                    crossings.follow(change.homes, atStart: isFirst)
                    continue
                }
                guard let home = change.homes.first(where: { $0.id == homeID }) else { continue }
                let key = ValueKey(accessory: accessory, service: service, characteristic: type)
                let crossed = crossings.report(key, value: value, in: home)
                for trigger in home.triggers {
                    let cause: FiringCause
                    if trigger.isFired(by: key, value: value) {
                        cause = .value(key, value)
                    } else if crossed.contains(trigger.id), case .threshold(_, let range) = trigger.event {
                        cause = .range(key, value, range)
                    } else {
                        continue
                    }
                    // A firing whose conditions fail does nothing, and counts for neither guard.
                    if !trigger.conditions.isEmpty,
                        await !manager.conditionsHold(trigger.id, home: home.id, at: clock.now())
                    {
                        Self.logConditionsFailed(trigger.name, home: home.name, logger: logger)
                        continue
                    }
                    let serial: Int
                    switch chains.admit(trigger, in: home, after: key, took: value, at: .now) {
                    case .fires(let admitted): serial = admitted
                    case .loop(let members):
                        let names = members.map { "'\(home.trigger($0)?.name ?? $0.rawValue)'" }
                        logger.warning(
                            members.count == 1
                                ? "automation \(names[0]) sets itself off: stopped after \(loops.rounds) rounds"
                                : "automations \(names.joined(separator: ", ")) set each other off: stopped after \(loops.rounds) rounds",
                            metadata: ["home": "\(home.name)"])
                        continue
                    }
                    guard firings.admit(trigger.id, at: .now) else {
                        chains.finish(serial, at: .now)
                        if firings.shouldWarn(trigger.id) {
                            logger.warning(
                                "automation '\(trigger.name)' fired \(limit.count) times within \(limit.window): skipped until the window passes (does it set itself off?)",
                                metadata: ["home": "\(home.name)"])
                        }
                        continue
                    }
                    if queues[home.id] == nil {
                        let (queue, continuation) = AsyncStream.makeStream(of: (TriggerID, FiringCause, Int).self)
                        queues[home.id] = continuation
                        group.addTask { [manager, clock, homeID = home.id] in
                            for await (id, cause, serial) in queue {
                                // Its conditions are judged again: they may have changed while it waited.
                                let firing = await manager.fireTrigger(id, home: homeID, cause: cause, at: clock.now())
                                chains.finish(serial, at: .now, leftTurnBack: firing?.leftTurnBack == true)
                                if let firing { Self.log(firing, logger: logger) }
                            }
                        }
                    }
                    queues[home.id]?.yield((trigger.id, cause, serial))
                }
            }
            for queue in queues.values { queue.finish() }
        }
    }

    static func logConditionsFailed(_ trigger: String, home: String, logger: Logger) {
        logger.info("automation '\(trigger)': its conditions do not hold, nothing ran", metadata: ["home": "\(home)"])
    }

    /// Logs what a firing did: its action sets, and each action that failed.
    static func log(_ firing: TriggerFiring, logger: Logger) {
        guard !firing.conditionsFailed else {
            logConditionsFailed(firing.trigger, home: firing.home, logger: logger)
            return
        }
        let ran = firing.actionSets.map { "'\($0.name)'" }.joined(separator: ", ")
        let metadata: Logger.Metadata = ["home": "\(firing.home)"]
        guard firing.failedActions > 0 else {
            logger.info("automation '\(firing.trigger)' ran \(ran.isEmpty ? "no action set" : ran)", metadata: metadata)
            return
        }
        var problems: [String] = []
        for run in firing.actionSets {
            let name = run.name
            switch run.outcome {
            case .success(let results):
                for case let error? in results.map(\.error) { problems.append("'\(name)': \(error.message)") }
            case .failure(let error):
                problems.append("'\(name)' did not run: \(error.message)")
            }
        }
        logger.warning(
            "automation '\(firing.trigger)' ran \(ran); \(firing.failedActions) action(s) failed: \(problems.joined(separator: "; "))",
            metadata: metadata)
    }
}

/// The recent firings of each automation, to hold one that fires too often.
struct RecentFirings {
    let limit: AutomationService.FiringLimit
    private var times: [TriggerID: [ContinuousClock.Instant]] = [:]
    private var warned: Set<TriggerID> = []

    init(limit: AutomationService.FiringLimit) { self.limit = limit }

    /// Whether `trigger` may fire at `now`; counts it when it may.
    mutating func admit(_ trigger: TriggerID, at now: ContinuousClock.Instant) -> Bool {
        var recent = times[trigger, default: []].filter { now - $0 < limit.window }
        if recent.isEmpty { warned.remove(trigger) }
        guard recent.count < limit.count else {
            times[trigger] = recent
            return false
        }
        recent.append(now)
        times[trigger] = recent
        return true
    }

    /// True once per window in which `trigger` was held.
    mutating func shouldWarn(_ trigger: TriggerID) -> Bool { warned.insert(trigger).inserted }
}

/// The recent firings with what each writes, to tell a loop from a person: a change to a value a
/// firing writes, while it runs or within ``AutomationService/LoopRule/window`` after it ended,
/// is taken for that firing's doing, and what it fires continues that firing's chain. A change no
/// firing wrote (a press, a person's switch) starts a new chain. A turn-back counts as a firing of
/// its automation in the chain of the firing that left it pending. Shared between the service's
/// loop, which admits firings, its homes' tasks, which finish them, and the turn-back service.
package final class FiringChains: Sendable {
    /// What admitting a firing decided.
    enum Admission: Equatable {
        /// It fires; ``finish(_:at:)`` takes this serial when it has run.
        case fires(Int)
        /// It would come round once too often: the automations of the loop, in firing order.
        case loop([TriggerID])
    }

    struct Record {
        let serial: Int
        let chain: [TriggerID]
        let writes: [ValueKey: CharacteristicValue]
        var finished: ContinuousClock.Instant?
        /// Its turn-back began before it finished (its action sets took longer than the wait).
        var turnBackBegun = false
    }

    struct State {
        var next = 0
        var records: [Record] = []
        /// The chain of each automation's latest firing that left a turn-back, until the turn-back runs.
        var turnBackChains: [TriggerID: [TriggerID]] = [:]
        /// The turn-back of each automation that is writing now, by its serial.
        var turnBacksWriting: [TriggerID: Int] = [:]

        mutating func begin(_ chain: [TriggerID], writing actions: [Action]) -> Int {
            var writes: [ValueKey: CharacteristicValue] = [:]
            for action in actions { writes[action.key] = action.value }
            next += 1
            records.append(Record(serial: next, chain: chain, writes: writes, finished: nil))
            return next
        }
    }

    private let rule: AutomationService.LoopRule
    let state = Mutex(State())

    init(rule: AutomationService.LoopRule) { self.rule = rule }

    /// Admits `trigger`, set off by `key` taking `value`, unless it comes round in its chain once
    /// more than the rule's rounds allow.
    func admit(
        _ trigger: Trigger, in home: Home, after key: ValueKey, took value: CharacteristicValue,
        at now: ContinuousClock.Instant
    ) -> Admission {
        let actions = trigger.actionSets.compactMap(home.actionSet).flatMap(\.actions)
        return state.withLock { state in
            state.records.removeAll { $0.finished.map { now - $0 > rule.window } ?? false }
            let cause = state.records.last { $0.writes[key] == value }
            let chain = (cause?.chain ?? []) + [trigger.id]
            if chain.count(where: { $0 == trigger.id }) > rule.rounds {
                let loop = chain[chain.firstIndex(of: trigger.id)!..<chain.index(before: chain.endIndex)]
                var members: [TriggerID] = []
                for id in loop where !members.contains(id) { members.append(id) }
                return .loop(members)
            }
            return .fires(state.begin(chain, writing: actions))
        }
    }

    /// Records `trigger`'s turn-back about to write `values`, in the chain of the firing that left it
    /// pending: finished, or still running when its action sets took longer than the wait (a chain
    /// of its own after a restart); ``finishTurnBack(of:at:)`` marks it run.
    func beginTurnBack(of trigger: TriggerID, writing values: [Action]) {
        state.withLock { state in
            var chain = state.turnBackChains.removeValue(forKey: trigger)
            if chain == nil,
                let running = state.records.lastIndex(where: { $0.finished == nil && $0.chain.last == trigger })
            {
                state.records[running].turnBackBegun = true
                chain = state.records[running].chain
            }
            state.turnBacksWriting[trigger] = state.begin(chain ?? [trigger], writing: values)
        }
    }

    /// Marks `trigger`'s turn-back as run, if it began writing (``beginTurnBack(of:writing:)``); one
    /// that wrote nothing (its automation removed or turned off) only drops the chain it would have
    /// continued.
    func finishTurnBack(of trigger: TriggerID, at now: ContinuousClock.Instant) {
        let serial = state.withLock { state in
            let serial = state.turnBacksWriting.removeValue(forKey: trigger)
            if serial == nil { state.turnBackChains[trigger] = nil }
            return serial
        }
        if let serial { finish(serial, at: now) }
    }

    /// Marks a firing as run: its writes count as its doing for the rule's window from now. One that
    /// `leftTurnBack` hands its chain to that turn-back.
    package func finish(_ serial: Int, at now: ContinuousClock.Instant, leftTurnBack: Bool = false) {
        state.withLock { state in
            guard let i = state.records.firstIndex(where: { $0.serial == serial }) else { return }
            state.records[i].finished = now
            if leftTurnBack, !state.records[i].turnBackBegun, let trigger = state.records[i].chain.last {
                state.turnBackChains[trigger] = state.records[i].chain
            }
        }
    }
}
