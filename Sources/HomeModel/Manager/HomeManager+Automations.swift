import Foundation
import Logging

extension HomeManager {
    // MARK: Action sets and automations

    /// Runs an action set (admin or guest): every action is attempted, and the result says for each
    /// whether it succeeded and why not. Throws only when the action set cannot be run at all.
    package func executeActionSet(_ name: String, home: String, account: String) async throws(HomeError)
        -> [ActionResult]
    {
        let (homeID, actionSet) = try actionSet(named: name, home: home, account: account)
        var results: [ActionResult] = []
        for action in actionSet.actions { results.append(await run(action)) }
        store.publish([
            .didExecuteActionSet(
                home: homeID, actionSet: actionSet.id, failedActions: results.count { !$0.succeeded })
        ])
        return results
    }

    /// Writes one action's value, checked against the characteristic as it is now.
    private func run(_ action: Action) async -> ActionResult {
        do throws(HomeError) {
            guard let accessory = store.currentAccessory(action.accessory),
                let characteristic = accessory.characteristic(action.service, action.characteristic)
            else {
                throw HomeError(.notFound, "The action's characteristic \(action.characteristic) no longer exists.")
            }
            let value = try HomeGraph.writable(action.value, to: characteristic, of: accessory)
            try await drivers.write(
                [CharacteristicWrite(service: action.service, characteristic: action.characteristic, value: value)],
                to: accessory)
            return ActionResult(action: action, error: nil)
        } catch {
            return ActionResult(action: action, error: error)
        }
    }

    /// Fires an automation: runs its action sets one after another, as the home's administrator
    /// would run them, and announces ``HomeEvent/didFireTrigger(home:trigger:firing:)`` with
    /// `cause`, what set it off.
    /// Returns `nil`, and runs nothing, when the automation is gone or turned off by now; one turned
    /// off or removed while it runs runs no further action set. One whose conditions do not hold at
    /// `now` runs nothing and announces nothing (``TriggerFiring/conditionsFailed``), even when its
    /// caller judged them as it queued the firing (``conditionsHold(_:home:at:)``): a firing queued
    /// behind a slow one runs only if they still hold when its turn comes.
    ///
    /// One with a ``TriggerOptions/turnBackAfter`` stores, before the announcement, the values its
    /// action sets' characteristics had before it ran, due `now` plus the duration (a pending one
    /// keeps its values, from before the first firing, and moves to the new due time). One that
    /// executes once is then turned off, as an administrator would, with its event.
    package func fireTrigger(
        _ id: TriggerID, home homeID: HomeID, cause: FiringCause, at now: Date = Date()
    ) async -> TriggerFiring? {
        guard let home = store.currentHome(homeID), let trigger = home.trigger(id), trigger.isEnabled else {
            return nil
        }
        guard trigger.conditionsHold(in: home, at: now) else {
            return TriggerFiring(trigger: trigger.name, home: home.name, cause: cause, conditionsFailed: true)
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
        var firing = TriggerFiring(trigger: trigger.name, home: home.name, cause: cause)
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
                firing.actionSets.append(ActionSetRun(name: actionSet.name, outcome: .success(results)))
            } catch {
                firing.actionSets.append(ActionSetRun(name: actionSet.name, outcome: .failure(error)))
            }
        }
        if let duration = trigger.options.turnBackAfter {
            firing.leftTurnBack = await storeTurnBack(
                of: id, home: homeID, values: before, due: now + Double(duration.components.seconds))
        }
        store.publish([.didFireTrigger(home: homeID, trigger: id, firing: firing)])
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
    /// first firing) and takes those of characteristics it did not hold yet. Not for an automation
    /// removed or turned off while it ran (``PendingTurnBack/isKept(by:)``). Returns whether it was stored.
    private func storeTurnBack(of id: TriggerID, home: HomeID, values: [Action], due: Date) async -> Bool {
        do {
            var pending =
                try database.pendingTurnBack(id) ?? PendingTurnBack(trigger: id, home: home, due: due, values: [])
            pending.due = due
            for value in values where !pending.values.contains(where: { $0.key == value.key }) {
                pending.values.append(value)
            }
            return try await database.savePendingTurnBack(pending)
        } catch {
            logger.error(
                "an automation's turn-back could not be stored: its values will not return",
                metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Writes a pending turn-back's values back, as the home's administrator would, and drops it
    /// (unless a firing moved it meanwhile). Each value is attempted; the results say which failed.
    /// Nil, with nothing written, when its automation was removed or turned off since: it is only
    /// dropped. `willWrite` is called just before the first value is written, and only then.
    package func turnBack(_ pending: PendingTurnBack, willWrite: @Sendable () -> Void = {}) async -> [ActionResult]? {
        let kept = store.currentHome(pending.home)?.trigger(pending.trigger).map(PendingTurnBack.isKept) ?? false
        var results: [ActionResult] = []
        if kept {
            willWrite()
            for action in pending.values { results.append(await run(action)) }
        }
        do {
            try await database.removePendingTurnBack(pending.trigger, due: pending.due)
        } catch {
            logger.error("a done turn-back could not be removed: a restart repeats it", metadata: ["error": "\(error)"])
        }
        return kept ? results : nil
    }

    /// The action set `name` names and its home's id; synchronous for the reason ``resolveWrites`` is.
    private func actionSet(named name: String, home: String, account: String) throws(HomeError)
        -> (HomeID, ActionSet)
    {
        let snapshot = try store.home(home, account: account)
        return (snapshot.id, snapshot.actionSets[try HomeGraph.actionSetIndex(name, in: snapshot)])
    }
}
