import Foundation
import Logging

/// Automations' firings: the action sets they run, their conditions, and what they leave to turn
/// back.
extension HomeManager {
    /// Fires an automation: runs its action sets one after another, as the home's administrator
    /// would run them, and announces ``HomeEvent/didFireTrigger(home:trigger:failedActions:)``.
    /// Returns `nil`, and runs nothing, when the automation is gone or turned off by now; one turned
    /// off or removed while it runs runs no further action set. One whose conditions do not hold at
    /// `now` runs nothing and announces nothing (``TriggerFiring/conditionsFailed``).
    ///
    /// One with a ``TriggerOptions/turnBackAfter`` stores, before the announcement, the values its
    /// action sets' characteristics had before it ran, due `now` plus the duration (a pending one
    /// keeps its values, from before the first firing, and moves to the new due time). One that
    /// executes once is then turned off, as an administrator would, with its event.
    package func fireTrigger(_ id: TriggerID, home homeID: HomeID, at now: Date = Date()) async -> TriggerFiring? {
        guard let home = store.currentHome(homeID), let trigger = home.trigger(id), trigger.isEnabled else {
            return nil
        }
        guard trigger.conditionsHold(in: home, at: now) else {
            return TriggerFiring(trigger: trigger.name, home: home.name, actionSets: [], conditionsFailed: true)
        }
        var before: [Action] = []
        if trigger.options.turnBackAfter != nil {
            for action in trigger.actionSets.compactMap(home.actionSet).flatMap(\.actions) {
                guard
                    let value = store.currentAccessory(action.accessory)?.characteristic(
                        action.service, action.characteristic)?.value
                else { continue }
                before.append(
                    Action(
                        accessory: action.accessory, service: action.service, characteristic: action.characteristic,
                        value: value))
            }
        }
        var firing = TriggerFiring(trigger: trigger.name, home: home.name, actionSets: [])
        for actionSetID in trigger.actionSets {
            // Looked up again for each: an earlier action set's writes give the actor away, and the
            // home may be renamed, or the automation turned off, meanwhile.
            guard let current = store.currentHome(homeID), current.trigger(id)?.isEnabled == true,
                let administrator = current.users.first(where: { $0.role == .administrator })
            else { break }
            guard let actionSet = current.actionSet(actionSetID) else { continue }
            do throws(HomeError) {
                let results = try await executeActionSet(
                    actionSet.name, home: current.name, account: administrator.account)
                firing.actionSets.append((actionSet.name, .success(results)))
            } catch {
                firing.actionSets.append((actionSet.name, .failure(error)))
            }
        }
        if let duration = trigger.options.turnBackAfter {
            await storeTurnBack(of: id, home: homeID, values: before, due: now + Double(duration.components.seconds))
        }
        store.publish([.didFireTrigger(home: homeID, trigger: id, failedActions: firing.failedActions)])
        if trigger.options.executeOnce, let current = store.currentHome(homeID),
            let administrator = current.users.first(where: { $0.role == .administrator }),
            let name = current.trigger(id)?.name
        {
            do {
                _ = try await store.edit(
                    .enableTrigger(home: current.name, trigger: name, enabled: false), account: administrator.account)
            } catch {
                logger.error(
                    "automation '\(name)' executes once but could not be turned off", metadata: ["error": "\(error)"])
            }
        }
        return firing
    }

    /// Whether the automation's conditions hold at `now` in the home as it is: what the automation
    /// service asks before it counts a firing. False when the automation or its home is gone.
    package func conditionsHold(_ id: TriggerID, home homeID: HomeID, at now: Date) -> Bool {
        guard let home = store.currentHome(homeID), let trigger = home.trigger(id) else { return false }
        return trigger.conditionsHold(in: home, at: now)
    }

    /// Sets when the home's schedule automations fire next, as the schedule service planned them;
    /// announces ``HomeEvent/didUpdateNextFirings(home:)`` when that changed. Kept in place and not
    /// saved, like a device's reachability.
    package func setNextFirings(_ firings: [TriggerID: Date], home: HomeID) {
        store.commitDeviceState { graph, events in
            guard let h = graph.homes.firstIndex(where: { $0.id == home }), graph.homes[h].nextFirings != firings
            else { return }
            graph.homes[h].nextFirings = firings
            events.append(.didUpdateNextFirings(home: home))
        }
    }

    /// Stores the pending turn-back of a firing: a pending one keeps its values (from before its
    /// first firing) and takes those of characteristics it did not hold yet.
    private func storeTurnBack(of id: TriggerID, home: HomeID, values: [Action], due: Date) async {
        do {
            var pending =
                try database.pendingTurnBack(id) ?? PendingTurnBack(trigger: id, home: home, due: due, values: [])
            pending.due = due
            for value in values
            where !pending.values.contains(where: {
                $0.accessory == value.accessory && $0.service == value.service
                    && $0.characteristic == value.characteristic
            }) {
                pending.values.append(value)
            }
            try await database.savePendingTurnBack(pending)
        } catch {
            logger.error(
                "an automation's turn-back could not be stored: its values will not return",
                metadata: ["error": "\(error)"])
        }
    }

    /// Writes a pending turn-back's values back, as the home's administrator would, and drops it
    /// (unless a firing moved it meanwhile). Each value is attempted; the results say which failed.
    package func turnBack(_ pending: PendingTurnBack) async -> [ActionResult] {
        var results: [ActionResult] = []
        for action in pending.values { results.append(await run(action)) }
        do {
            try await database.removePendingTurnBack(pending.trigger, due: pending.due)
        } catch {
            logger.error("a done turn-back could not be removed: a restart repeats it", metadata: ["error": "\(error)"])
        }
        return results
    }
}
