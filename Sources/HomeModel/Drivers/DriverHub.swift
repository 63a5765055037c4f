import Execution
import Foundation
import Logging

/// The drivers' hub: the registry of drivers and what they found (``AccessoryBrowser``), their
/// reports taken into the model, driver requests within a deadline, and the probes of accessories
/// that stopped answering (`DriverHub+Responsiveness.swift`).
///
/// Owned by ``HomeManager`` and isolated to it, as the store is: not `Sendable`, its calls are
/// synchronous or run where their caller runs, and its timers come back onto the owner's actor only
/// through ``reenter``. It commits what drivers report through the store, without a hop.
final class DriverHub {
    let store: HomeStore
    /// How long a driver may take to read, write or identify before the request fails with
    /// `operationTimedOut`.
    let driverTimeout: Duration
    /// How often an accessory that stopped answering is tried again (a read), until it answers.
    let probeInterval: Duration
    /// Runs work on the hub on its owner's actor, from a probe's timer.
    let reenter: Reentry
    /// Accessories shown unreachable because a request to them timed out, with the probe that tries
    /// each again until it answers.
    var unresponsive: [AccessoryID: Probe] = [:]
    /// Counts the probes scheduled: a probe goes on only while it is its accessory's latest.
    var probesScheduled: UInt64 = 0
    /// Set by ``shutdown()``: nothing is scheduled after it.
    private(set) var isShutDown = false

    /// The store's: what the drivers found, the owner's timer (driver deadlines and probes), the log.
    var browser: AccessoryBrowser { store.browser }
    var deadlines: DeadlineTimer<AnyClock> { store.deadlines }
    var logger: Logger { store.logger }

    /// How the hub's timers come back onto its owner's actor: `work` runs there, with the hub,
    /// unless the owner is gone.
    typealias Reentry =
        @Sendable (_ work: nonisolated(nonsending) @escaping @Sendable (DriverHub) async -> Void) async
        -> Void

    init(store: HomeStore, driverTimeout: Duration, probeInterval: Duration, reenter: @escaping Reentry) {
        self.store = store
        self.driverTimeout = driverTimeout
        self.probeInterval = probeInterval
        self.reenter = reenter
    }

    /// Takes a driver in: hands it the stored accessories, starts it and puts what it found into
    /// the browser. Returns its number, which its updates name.
    nonisolated(nonsending) func register(_ driver: any AccessoryDriver) async throws -> Int {
        let index = browser.add(driver)
        await driver.restore(store.graph.homes.flatMap(\.accessories))
        try await driver.start()
        let accessories = await driver.accessories()
        browser.reserve(accessories.count)
        for accessory in accessories {
            apply(.found(accessory), driver: index)
        }
        for accessory in accessories { await followBridge(accessory) }
        return index
    }

    /// Takes one update of the driver numbered `driver` into the model.
    nonisolated(nonsending) func take(_ update: DriverUpdate, driver: Int) async {
        apply(update, driver: driver)
        if case .found(let accessory) = update { await followBridge(accessory) }
    }

    /// Whether `id` is reachable as its driver says and has not let a request time out.
    func isReachable(_ id: AccessoryID) -> Bool { browser.isReachable(id) && unresponsive[id] == nil }

    /// Stops the probes and the drivers; nothing is scheduled after it.
    nonisolated(nonsending) func shutdown() async {
        isShutDown = true
        for probe in unresponsive.values { deadlines.cancel(probe.ticket) }
        unresponsive.removeAll()
        for driver in browser.drivers { await driver.stop() }
    }

    /// Each driver's accessories (found, in a home, unreachable, waiting for pairing) and what it
    /// says of itself, in the order the drivers were registered: the health page's drivers.
    nonisolated(nonsending) func reports() async -> [DriverReport] {
        let drivers = browser.drivers
        var reports: [DriverReport] = []
        for (index, driver) in drivers.enumerated() {
            let found = browser.accessories(ofDriver: index)
            let ready = found.filter { !$0.needsPairing }
            reports.append(
                DriverReport(
                    driver: driver.name, accessories: ready.count, inHomes: ready.count { store.isInAHome($0.id) },
                    unreachable: ready.count { !isReachable($0.id) },
                    waitingForPairing: found.count - ready.count, condition: nil))
        }
        // Asked after counting: a driver's answer may take a while, and the counts are of one moment.
        for (index, driver) in drivers.enumerated() {
            reports[index].condition = await driver.condition()
        }
        return reports
    }

    /// Keeps a bridge in a home as the bridge is, as HomeKit does: an accessory it lists that is in no
    /// home joins the bridge's home (its default room), and one it no longer lists, that no driver
    /// reports, leaves the home with the actions and automations that named it. Only a bridge that
    /// answered says what it lists: one that is offline or waits to be paired changes nothing. Each
    /// change is an edit like an administrator's, saved and announced on the change stream; the
    /// driver's next reports wait for it, so a new accessory's first values land in its home.
    private nonisolated(nonsending) func followBridge(_ found: Accessory) async {
        guard found.isReachable, !found.needsPairing else { return }
        if let bridgeID = found.bridge, !store.isInAHome(found.id), let place = store.graph.locate(bridgeID) {
            let bridge = store.graph.homes[place.home].accessories[place.accessory].name
            await editForDevice(
                .addAccessory(home: store.graph.homes[place.home].name, id: found.id, room: nil, name: nil),
                home: store.graph.homes[place.home].id, "'\(found.name)' is new on the bridge '\(bridge)': added to")
        }
        // A bridge as the home has it: one that lost its last bridged accessory may report itself as
        // a plain accessory, listing none.
        guard let place = store.graph.locate(found.id) else { return }
        let bridged = store.graph.homes[place.home].accessories[place.accessory].bridgedAccessories
        let bridge = store.graph.homes[place.home].accessories[place.accessory].name
        let homeID = store.graph.homes[place.home].id
        for id in bridged where browser.isGone(id, fromBridge: found.id) {
            // Looked up again for each: the edit before gave the actor away.
            guard let (h, a) = store.graph.locate(id), store.graph.homes[h].id == homeID else { continue }
            let accessory = store.graph.homes[h].accessories[a].name
            await editForDevice(
                .removeAccessory(home: store.graph.homes[h].name, accessory: accessory), home: homeID,
                "'\(accessory)' is no longer on the bridge '\(bridge)': removed from")
        }
    }

    /// An edit a device's own change asks for, made as the home's first administrator (the account
    /// whose rights an automation also runs with); logged as `what` the home, and what fails too.
    /// Takes the home's id, not the home: a copy held across the save would make the next value
    /// commit copy the home's accessories.
    private nonisolated(nonsending) func editForDevice(_ change: HomeEdit, home id: HomeID, _ what: String) async {
        guard let h = store.graph.homes.firstIndex(where: { $0.id == id }) else { return }
        let name = store.graph.homes[h].name
        guard let administrator = store.graph.homes[h].users.first(where: { $0.role == .administrator })?.account else {
            return logger.warning("\(what) the home '\(name)' failed: it has no administrator")
        }
        do {
            _ = try await store.edit(change, account: administrator)
            logger.info("\(what) the home '\(name)'")
        } catch {
            logger.warning("\(what) the home '\(name)' failed: \(error.message)")
        }
    }

    /// Records one thing a driver reported. Values and reachability of accessories in a home are
    /// persisted and announced; those of accessories in the browser only update the browser.
    func apply(_ update: DriverUpdate, driver: Int) {
        switch update {
        case .found(let accessory):
            forgetUnresponsive(accessory.id)
            let isNew = browser.found(accessory, driver: driver)
            if store.isInAHome(accessory.id) {
                store.commitDeviceState { graph, events in
                    graph.recordReachability(accessory.isReachable, accessory: accessory.id, events: &events)
                    for service in accessory.services {
                        // An event's value (the last press) is no news when the accessory is found.
                        for characteristic in service.characteristics where !characteristic.type.isEvent {
                            guard let value = characteristic.value else { continue }
                            graph.recordValue(
                                value, accessory: accessory.id, service: service.id,
                                characteristic: characteristic.type, events: &events)
                        }
                    }
                }
            } else if isNew {
                store.publish([.didFindNewAccessory(accessory: accessory.id)])
            }
        case .lost(let id):
            forgetUnresponsive(id)
            browser.lost(id)
            if store.isInAHome(id) {
                store.commitDeviceState { graph, events in
                    graph.recordReachability(false, accessory: id, events: &events)
                }
            } else {
                store.publish([.didRemoveNewAccessory(accessory: id)])
            }
        case .value(let id, let service, let characteristic, let value):
            if !characteristic.isEvent { browser.setValue(value, id, service, characteristic) }
            store.commitDeviceState { graph, events in
                graph.recordValue(
                    value, accessory: id, service: service, characteristic: characteristic, events: &events)
            }
        case .reachability(let id, let isReachable):
            forgetUnresponsive(id)
            browser.setReachable(isReachable, id)
            store.commitDeviceState { graph, events in
                graph.recordReachability(isReachable, accessory: id, events: &events)
            }
        }
    }

    // MARK: Requests

    /// Writes `writes` through the accessory's driver within the timeout (a command's, an action's),
    /// and records them unless the driver reports confirmed values itself.
    nonisolated(nonsending) func write(_ writes: [CharacteristicWrite], to accessory: Accessory) async throws(HomeError)
    {
        let driver = try reachableDriver(for: accessory)
        let id = accessory.id
        try await call(accessory, "write") { try await driver.write(id, values: writes) }
        guard !driver.reportsConfirmedValues else { return }
        store.commitDeviceState { graph, events in
            for write in writes {
                graph.recordValue(
                    write.value, accessory: id, service: write.service, characteristic: write.characteristic,
                    events: &events)
            }
        }
    }

    /// The driver of `accessory`, which the model shows reachable; `accessoryNotReachable` otherwise.
    func reachableDriver(for accessory: Accessory) throws(HomeError) -> any AccessoryDriver {
        guard store.isReachableNow(accessory.id), let driver = browser.driver(for: accessory.id) else {
            throw HomeError(.accessoryNotReachable, "The accessory '\(accessory.name)' is not reachable.")
        }
        return driver
    }

    /// Runs a driver request within `timeout` (the driver timeout when nil), with what it throws as
    /// the model's error. When the time is up the caller hears `operationTimedOut` with what
    /// `whenLate` says, even if the driver ignores cancellation: the request is cancelled and left to
    /// finish on its own, never waited for. A ``HomeError`` is passed on; anything else is
    /// `communicationFailure`, after what `failed` says.
    nonisolated(nonsending) func call<Value: Sendable>(
        timeout: Duration? = nil, whenLate: () -> String, failed: @autoclosure () -> String,
        _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
    ) async throws(HomeError) -> Value {
        let outcome = await Deadline.race(timeout: timeout ?? driverTimeout, timer: deadlines, body)
        switch outcome {
        case .success(let value)?: return value
        case nil: throw HomeError(.operationTimedOut, whenLate())
        case .failure(let error as HomeError)?: throw error
        case .failure(let error)?: throw HomeError(.communicationFailure, "\(failed()): \(error).")
        }
    }

    /// A request named `what` to `accessory`: one that times out shows the accessory unreachable
    /// until it answers again (``markUnresponsive(_:)``).
    nonisolated(nonsending) func call<Value: Sendable>(
        _ accessory: Accessory, _ what: String,
        _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
    ) async throws(HomeError) -> Value {
        try await call(
            whenLate: {
                markUnresponsive(accessory.id)
                return "The accessory '\(accessory.name)' did not answer the \(what) in time."
            }, failed: "The \(what) to '\(accessory.name)' failed", body)
    }
}
