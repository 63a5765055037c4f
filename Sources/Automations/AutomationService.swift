import AsyncMailbox
import HomeModel
import Logging
import ServiceLifecycle

/// Runs the homes' automations (HomeKit's event triggers): follows the model's changes and, when a
/// characteristic takes the value an automation waits for (a button's press, a door opening), fires
/// it through the manager, which runs its action sets as the home's administrator would. It is a
/// service beside the adapters: it reads the same change stream they do and changes the home only
/// through the manager.
///
/// A home's firings run one after another, in the order their changes came: a press that comes
/// while the previous firing still runs waits for it. Homes do not wait for each other. An automation that sets off itself, or two that set off
/// each other, would fire for ever: each fires at most ``FiringLimit/count`` times a
/// ``FiringLimit/window``; what comes beyond it is skipped, with one warning per window.
package struct AutomationService: ServiceLifecycle.Service {
    /// How often one automation may fire.
    package struct FiringLimit: Sendable {
        package var count: Int
        package var window: Duration

        /// Far above what a person pressing a button does; a loop reaches it within a second.
        package static let standard = FiringLimit(count: 30, window: .seconds(60))
    }

    private let manager: HomeManager
    private let limit: FiringLimit
    private let logger: Logger

    package init(manager: HomeManager, limit: FiringLimit = .standard, logger: Logger) {
        self.manager = manager
        self.limit = limit
        self.logger = logger
    }

    package func run() async throws {
        let changes = await changes()
        await cancelWhenGracefulShutdown { await follow(changes) }
    }

    /// The manager's changes this service fires on: the values an automation waits for. A value
    /// no automation waits for (nearly every one) does not wake it: waking it for each cost a sixth
    /// of the gateway's CPU per write in the benchmark's window (docs/benchmarks.md).
    package func changes() async -> Mailbox<HomeChange> {
        await manager.changes(where: { !Self.fired(by: $0).isEmpty })
    }

    /// Fires what `changes` (the manager's, subscribed to by the caller) set off, until they end.
    /// Each home's firings run one after another on a task of their own: an automation waiting on
    /// a slow device holds up its own home's, not another home's.
    package func follow(_ changes: Mailbox<HomeChange>) async {
        var firings = RecentFirings(limit: limit)
        await withDiscardingTaskGroup { group in
            var queues: [HomeID: AsyncStream<TriggerID>.Continuation] = [:]
            for await change in changes {
                for (home, trigger) in Self.fired(by: change) {
                    guard firings.admit(trigger.id, at: .now) else {
                        if firings.shouldWarn(trigger.id) {
                            logger.warning(
                                "automation '\(trigger.name)' fired \(limit.count) times within \(limit.window): skipped until the window passes (does it set itself off?)",
                                metadata: ["home": "\(home.name)"])
                        }
                        continue
                    }
                    if queues[home.id] == nil {
                        let (queue, continuation) = AsyncStream.makeStream(of: TriggerID.self)
                        queues[home.id] = continuation
                        group.addTask { [manager, homeID = home.id] in
                            for await id in queue {
                                guard let firing = await manager.fireTrigger(id, home: homeID) else { continue }
                                Self.log(firing, logger: logger)
                            }
                        }
                    }
                    queues[home.id]?.yield(trigger.id)
                }
            }
            for queue in queues.values { queue.finish() }
        }
    }

    /// The enabled automations a value change fires, with their home.
    static func fired(by change: HomeChange) -> [(Home, Trigger)] {
        guard
            case .didUpdateValueForCharacteristic(let homeID, let accessory, let service, let type, let value) =
                change.event,
            let home = change.homes.first(where: { $0.id == homeID }), !home.triggers.isEmpty
        else { return [] }
        let key = ValueKey(accessory: accessory, service: service, characteristic: type)
        return home.triggers.filter { $0.isFired(by: key, value: value) }.map { (home, $0) }
    }

    /// Logs what a firing did: its action sets, and each action that failed.
    static func log(_ firing: TriggerFiring, logger: Logger) {
        let ran = firing.actionSets.map { "'\($0.name)'" }.joined(separator: ", ")
        let metadata: Logger.Metadata = ["home": "\(firing.home)"]
        guard firing.failedActions > 0 else {
            logger.info("automation '\(firing.trigger)' ran \(ran.isEmpty ? "no action set" : ran)", metadata: metadata)
            return
        }
        var problems: [String] = []
        for (name, outcome) in firing.actionSets {
            switch outcome {
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
