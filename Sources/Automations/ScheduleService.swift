import AsyncMailbox
import Execution
import Foundation
import HomeModel
import Logging
import Schedules

/// Runs the homes' schedule triggers (times of day, sunrise and sunset, timers): for each enabled
/// one it computes the next firing in its home's time zone (the system's when the home has no
/// location; a sun event needs one), waits for the earliest on its clock, stores the firing and
/// fires it through the manager, as ``AutomationService`` fires characteristic events. Layout
/// changes (an automation added, removed, turned on or off, the home's location) move the plan.
///
/// At start, what came due while the hub was down (``CatchUp``, from each trigger's stored
/// ``ScheduleState``) runs once if less than its grace late (the automation's
/// ``TriggerOptions/catchUpGrace``, else `grace`), and is logged as missed otherwise.
package struct ScheduleService: ChangeFollowingService {
    private let manager: HomeManager
    private let clock: ScheduleClock
    private let grace: Duration
    private let logger: Logger

    package init(
        manager: HomeManager, clock: ScheduleClock = .system, grace: Duration = CatchUp.standardGrace, logger: Logger
    ) {
        self.manager = manager
        self.clock = clock
        self.grace = grace
        self.logger = logger
    }

    /// The changes that move the schedules: the first (the whole model), automations added, removed,
    /// renamed or changed, homes removed, a home's location.
    package func changes() async -> Mailbox<HomeChange> {
        await manager.changes(where: { change in
            switch change.event {
            case .homeManagerDidUpdateHomes, .didRemoveHome, .didAddTrigger, .didRemoveTrigger, .didUpdateTrigger,
                .didUpdateNameForTrigger, .didUpdateLocationForHome:
                true
            default: false
            }
        })
    }

    /// Runs the schedules of the homes `changes` carries until they end (or the task is cancelled).
    package func follow(_ changes: Mailbox<HomeChange>) async {
        await SchedulePlanner(manager: manager, clock: clock, grace: grace, logger: logger).follow(changes)
    }
}

/// One schedule trigger as planned: what it is, in which home and time zone, and its next firing.
struct PlannedSchedule {
    let home: HomeID
    var name: String
    let schedule: TriggerSchedule
    let location: HomeLocation?
    /// The schedule to ask; nil for a sun event in a home with no location (it never fires).
    let firings: (any FiringSchedule)?
    let timeZone: TimeZone
    var next: Firing?
    /// How late a firing missed while the hub was down may be and still run at start.
    var grace: Duration
    /// The accessories its action sets write: firings due together that share one run in order.
    var accessories: Set<AccessoryID> = []
}

/// The service's state: the plan, each trigger's stored state, and the wait for the earliest firing,
/// which a layout change cuts short.
actor SchedulePlanner: PlannedLoop {
    private let manager: HomeManager
    private let clock: ScheduleClock
    private let grace: Duration
    private let logger: Logger
    private var plan: [TriggerID: PlannedSchedule] = [:]
    private var states: [TriggerID: ScheduleState] = [:]
    /// The wait for the earliest firing, which a layout change cuts short.
    private let alarm: DeadlineTimer<AnyClock>.Alarm
    /// The next firings each home was last told (``HomeManager/setNextFirings(_:home:)``).
    private var told: [HomeID: [TriggerID: Date]] = [:]
    /// The local day each home's polar day or night was last logged for.
    private var polarLogged: [HomeID: LocalDate] = [:]

    init(manager: HomeManager, clock: ScheduleClock, grace: Duration, logger: Logger) {
        self.manager = manager
        self.clock = clock
        self.grace = grace
        self.logger = logger
        alarm = DeadlineTimer.Alarm(on: clock.timer)
    }

    /// Plans the homes' schedules and runs what came due while the hub was down.
    func start(_ homes: [Home]) async {
        do {
            states = try manager.scheduleStates()
        } catch {
            logger.error("Schedules start afresh: their state could not be read", metadata: ["error": "\(error)"])
        }
        let now = clock.now()
        replan(homes, now: now)
        var recorded: [TriggerID: ScheduleState] = [:]
        var runs: [(TriggerID, HomeID, Firing)] = []
        for (id, entry) in plan.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let firings = entry.firings, let state = states[id] else { continue }
            let lastRun = max(state.since, state.lastFiring?.instant ?? state.since)
            let catchUp = CatchUp(
                firings, lastRun: lastRun, lastFiring: state.lastFiring, now: now, timeZone: entry.timeZone,
                grace: entry.grace)
            guard let latest = catchUp.due.last else { continue }
            if catchUp.omitted > 0 {
                logger.warning(
                    "automation '\(entry.name)' missed \(catchUp.omitted) firings while the hub was down (more than listed)",
                    metadata: ["home": "\(entry.home)"])
            }
            for due in catchUp.due where due.verdict != .runs {
                logger.warning(
                    "automation '\(entry.name)' missed its firing of \(due.firing.slot) while the hub was down (\(due.lateness) late; \(due.verdict == .tooLate ? "beyond the grace of \(entry.grace)" : "a later one came due"))",
                    metadata: ["home": "\(entry.home)"])
            }
            recorded[id] = ScheduleState(since: state.since, lastFiring: latest.firing)
            if latest.verdict == .runs {
                logger.info(
                    "automation '\(entry.name)' runs its firing of \(latest.firing.slot), due while the hub was down",
                    metadata: ["home": "\(entry.home)"])
                runs.append((id, entry.home, latest.firing))
            }
            plan[id]?.next = entry.firings?.nextFiring(after: now, following: latest.firing, in: entry.timeZone)
        }
        for id in plan.keys where states[id] == nil { recorded[id] = ScheduleState(since: now) }
        await record(recorded)
        await forgetRemoved(homes)
        await fire(runs.map { ($0, $1, .catchUp($2)) })
        await tellNextFirings(homes.map(\.id), now: now)
    }

    /// Plans the homes' schedules again after a layout change, and cuts the current wait short.
    func update(_ change: HomeChange) async {
        let now = clock.now()
        replan(change.homes, now: now)
        var new: [TriggerID: ScheduleState] = [:]
        for id in plan.keys where states[id] == nil { new[id] = ScheduleState(since: now) }
        await record(new)
        await forgetRemoved(change.homes)
        await tellNextFirings(change.homes.map(\.id), now: now)
        alarm.ring()
    }

    /// Tells the model each home's next firings where they changed (for `$layout`), and logs once
    /// a local day that a home's sun automations fire nothing, on a polar day or night.
    private func tellNextFirings(_ homes: [HomeID], now: Date) async {
        var firings: [HomeID: [TriggerID: Date]] = Dictionary(uniqueKeysWithValues: homes.map { ($0, [:]) })
        for (id, entry) in plan {
            if let next = entry.next { firings[entry.home, default: [:]][id] = next.instant }
        }
        for (home, next) in firings where told[home] != next {
            told[home] = next
            await manager.setNextFirings(next, home: home)
        }
        for home in told.keys where firings[home] == nil { told[home] = nil }
        logPolarDays(now: now)
    }

    private func logPolarDays(now: Date) {
        var sunEntries: [HomeID: (location: HomeLocation, names: [String])] = [:]
        for entry in plan.values {
            guard case .sun = entry.schedule, let location = entry.location else { continue }
            sunEntries[entry.home, default: (location, [])].names.append(entry.name)
        }
        for (home, (location, names)) in sunEntries {
            let today = LocalDate(now, in: location.timeZone)
            guard polarLogged[home] != today else { continue }
            let kind: String
            switch SunCalculator.day(today, at: location.coordinates, in: location.timeZone) {
            case .polarDay: kind = "a polar day (the sun does not set)"
            case .polarNight: kind = "a polar night (the sun does not rise)"
            case .risesAndSets: continue
            }
            polarLogged[home] = today
            logger.notice(
                "\(today) is \(kind) at the home's location: its sunrise and sunset automations (\(names.sorted().map { "'\($0)'" }.joined(separator: ", "))) fire nothing today",
                metadata: ["home": "\(home)"])
        }
    }

    /// Fires each firing when it comes due, until the task is cancelled. The firings due together
    /// are stored in one transaction, then run side by side: none waits for another's disk write
    /// or device.
    func loop() async {
        while !Task.isCancelled {
            let now = clock.now()
            let due = plan.filter { $0.value.next.map { $0.instant <= now } ?? false }
                .sorted { ($0.value.next!.instant, $0.key.rawValue) < ($1.value.next!.instant, $1.key.rawValue) }
            var recorded: [TriggerID: ScheduleState] = [:]
            var firings: [(TriggerID, HomeID, FiringCause)] = []
            for (id, entry) in due {
                guard let firing = entry.next else { continue }
                recorded[id] = ScheduleState(since: states[id]?.since ?? now, lastFiring: firing)
                firings.append((id, entry.home, .schedule(firing)))
            }
            await record(recorded)
            await fire(firings)
            // Planned on after they ran, not before: their next firings keep none of them waiting. A
            // plan changed meanwhile computed its own from the stored last firings.
            for (id, entry) in due {
                guard let firing = entry.next, plan[id]?.next == firing else { continue }
                plan[id]?.next = entry.firings?.nextFiring(after: now, following: firing, in: entry.timeZone)
            }
            await tellNextFirings(Array(told.keys), now: now)
            if !due.isEmpty { continue }
            let steadyBefore = clock.clock.now
            await clock.sleep(until: plan.values.compactMap(\.next?.instant).min(), on: alarm)
            // The wall clock moved unlike the steady one (the system clock was set): every next
            // firing moves with it, and none fires twice (the last firings' slots hold them back).
            let steady = steadyBefore.duration(to: clock.clock.now)
            let wallNow = clock.now()
            let drift =
                wallNow.timeIntervalSince(now)
                - (Double(steady.components.seconds) + Double(steady.components.attoseconds) * 1e-18)
            if abs(drift) > 5 {
                logger.notice("the system clock moved by \(Int(drift)) s: the schedules follow it")
                for id in plan.keys { plan[id]?.next = next(of: id, after: wallNow) }
            }
        }
    }

    /// The plan for `homes`: entries whose trigger, schedule and location are unchanged keep their
    /// next firing; the others are computed from `now` and their last firing.
    private func replan(_ homes: [Home], now: Date) {
        var new: [TriggerID: PlannedSchedule] = [:]
        for home in homes {
            for trigger in home.triggers {
                guard let schedule = trigger.activeSchedule else { continue }
                if var kept = plan[trigger.id], kept.home == home.id, kept.schedule == schedule,
                    kept.location == home.location
                {
                    kept.name = trigger.name
                    kept.grace = trigger.options.catchUpGrace ?? grace
                    kept.accessories = Self.accessories(written: trigger, in: home)
                    new[trigger.id] = kept
                    continue
                }
                let timeZone = home.location?.timeZone ?? .current
                var entry = PlannedSchedule(
                    home: home.id, name: trigger.name, schedule: schedule, location: home.location,
                    firings: Self.firings(schedule, location: home.location), timeZone: timeZone, next: nil,
                    grace: trigger.options.catchUpGrace ?? grace,
                    accessories: Self.accessories(written: trigger, in: home))
                if entry.firings == nil {
                    logger.warning(
                        "automation '\(trigger.name)' follows the sun, but the home has no location: it does not fire until the home's location is set",
                        metadata: ["home": "\(home.name)"])
                }
                entry.next = entry.firings?.nextFiring(
                    after: now, following: states[trigger.id]?.lastFiring, in: timeZone)
                new[trigger.id] = entry
            }
        }
        plan = new
    }

    private func next(of id: TriggerID, after now: Date) -> Firing? {
        guard let entry = plan[id] else { return nil }
        return entry.firings?.nextFiring(after: now, following: states[id]?.lastFiring, in: entry.timeZone)
    }

    /// The computation for `schedule` in a home at `location`; nil for a sun event without one.
    static func firings(_ schedule: TriggerSchedule, location: HomeLocation?) -> (any FiringSchedule)? {
        switch schedule {
        case .timeOfDay(let time, let weekdays):
            return try? TimeOfDaySchedule(time: time, weekdays: weekdays)
        case .timer(let start, let recurrence):
            return try? TimerSchedule(start: start, recurrence: recurrence)
        case .sun(let event, let offset, let weekdays):
            guard let location, let sun = try? SunSchedule(event, offset: offset, at: location.coordinates) else {
                return nil
            }
            return OnWeekdays(base: sun, weekdays: weekdays)
        }
    }

    /// Keeps `recorded` here and on disk, in one transaction; a failure to store is logged, and the
    /// firings still run.
    private func record(_ recorded: [TriggerID: ScheduleState]) async {
        guard !recorded.isEmpty else { return }
        states.merge(recorded) { $1 }
        do {
            try await manager.recordScheduleStates(recorded)
        } catch {
            logger.error(
                "automations' schedule states could not be stored: a restart may repeat or miss a firing",
                metadata: ["error": "\(error)"])
        }
    }

    /// Drops the states of automations no longer in `homes`, here and on disk.
    private func forgetRemoved(_ homes: [Home]) async {
        let kept = Set(homes.flatMap { $0.triggers.map(\.id) })
        let gone = states.keys.filter { !kept.contains($0) }
        guard !gone.isEmpty else { return }
        for id in gone { states[id] = nil }
        do {
            try await manager.forgetScheduleStates(gone)
        } catch {
            logger.error(
                "removed automations' schedule states could not be dropped", metadata: ["error": "\(error)"])
        }
    }

    /// The accessories `trigger`'s action sets write.
    private static func accessories(written trigger: Trigger, in home: Home) -> Set<AccessoryID> {
        Set(trigger.actionSets.compactMap(home.actionSet).flatMap { $0.actions.map(\.accessory) })
    }

    /// Runs `firings` (in their due order) side by side, except that those writing a common accessory
    /// run one after another in that order, so the last due wins as it would alone; returns when all
    /// have run.
    private func fire(_ firings: [(TriggerID, HomeID, FiringCause)]) async {
        let lanes = Self.lanes(firings.map { plan[$0.0]?.accessories ?? [] })
        await withDiscardingTaskGroup { group in
            for lane in lanes {
                let run = lane.map { firings[$0] }
                group.addTask { [manager, clock, logger] in
                    for (id, home, cause) in run {
                        guard let firing = await manager.fireTrigger(id, home: home, cause: cause, at: clock.now())
                        else { continue }
                        AutomationService.log(firing, logger: logger)
                    }
                }
            }
        }
    }

    /// Positions of `written` (each firing's accessories, in due order) grouped into lanes: firings
    /// that share an accessory, directly or through others, are in one lane, in their order.
    static func lanes(_ written: [Set<AccessoryID>]) -> [[Int]] {
        var lanes: [(accessories: Set<AccessoryID>, members: [Int])] = []
        for (position, accessories) in written.enumerated() {
            let sharing = lanes.indices.filter { !lanes[$0].accessories.isDisjoint(with: accessories) }
            var lane = (accessories: accessories, members: [position])
            for index in sharing.reversed() {
                let merged = lanes.remove(at: index)
                lane.accessories.formUnion(merged.accessories)
                lane.members += merged.members
            }
            lane.members.sort()
            lanes.append(lane)
        }
        return lanes.map(\.members)
    }
}

/// A schedule's firings on the chosen weekdays only (by the firing's slot date: for a sun event, the
/// day whose sunrise or sunset it is).
struct OnWeekdays<Base: FiringSchedule>: FiringSchedule {
    let base: Base
    let weekdays: Set<Weekday>

    func nextFiring(after now: Date, following last: Firing?, in timeZone: TimeZone) -> Firing? {
        var from = now
        var previous = last
        for _ in 0..<8 {
            guard let firing = base.nextFiring(after: from, following: previous, in: timeZone) else { return nil }
            if weekdays.contains(firing.slot.date.weekday) { return firing }
            from = firing.instant
            previous = firing
        }
        return nil
    }
}
