import Execution
import Foundation
import Logging

extension HomeManager {
    // MARK: Drivers

    /// Takes a driver in: hands it the stored accessories, starts it and puts what it found into
    /// the browser. Its work and its updates (values, reachability, accessories found and lost) are
    /// ``serve(_:)``'s, for the driver's lifetime.
    package func register(_ driver: any AccessoryDriver) async throws -> RegisteredDriver {
        let index = browser.add(driver)
        await driver.restore(store.graph.homes.flatMap(\.accessories))
        try await driver.start()
        let accessories = await driver.accessories()
        browser.reserve(accessories.count)
        for accessory in accessories {
            apply(.found(accessory), driver: index)
        }
        for accessory in accessories { await followBridge(accessory) }
        return RegisteredDriver(driver: driver, index: index)
    }

    /// Serves a registered driver for as long as the calling task runs (the driver's service in
    /// the gateway's service group): its long-lived work (``AccessoryDriver/run()``) and its updates
    /// into the model, taken on the manager's executor. Returns when the task is cancelled or the
    /// driver finished its updates (it was stopped).
    package nonisolated func serve(_ registered: RegisteredDriver) async {
        let driver = registered.driver
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            group.addTask { await self.follow(driver.updates, driver: registered.index) }
            await group.next()
            group.cancelAll()
        }
    }

    /// ``register(_:)`` and ``serve(_:)`` in a task of the manager's, which ``shutdown()`` ends: for
    /// callers without a service group (tests, benchmarks, fuzzing).
    package func attach(_ driver: any AccessoryDriver) async throws {
        let registered = try await register(driver)
        // No service group to be a child of: the manager keeps the task and ends it at shutdown.
        driverTasks.append(Task { await self.serve(registered) })
    }

    /// Each driver's accessories (found, in a home, unreachable, waiting for pairing) and what it
    /// says of itself, in the order the drivers were registered: the health page's drivers.
    package func driverReports() async -> [DriverReport] {
        let drivers = browser.drivers
        var reports: [DriverReport] = []
        for (index, driver) in drivers.enumerated() {
            let found = browser.accessories(ofDriver: index)
            let ready = found.filter { !$0.needsPairing }
            reports.append(
                DriverReport(
                    driver: driver.name, accessories: ready.count, inHomes: ready.count { store.isInAHome($0.id) },
                    unreachable: ready.count { !browser.isReachable($0.id) || unresponsive[$0.id] != nil },
                    waitingForPairing: found.count - ready.count, condition: nil))
        }
        // Asked after counting: a driver's answer may take a while, and the counts are of one moment.
        for (index, driver) in drivers.enumerated() {
            reports[index].condition = await driver.condition()
        }
        return reports
    }

    private func follow(_ updates: AsyncStream<DriverUpdate>, driver: Int) async {
        await preferringChosenExecutor {
            for await update in updates {
                apply(update, driver: driver)
                if case .found(let accessory) = update { await followBridge(accessory) }
            }
        }
    }

    /// Keeps a bridge in a home as the bridge is, as HomeKit does: an accessory it lists that is in no
    /// home joins the bridge's home (its default room), and one it no longer lists, that no driver
    /// reports, leaves the home with the actions and automations that named it. Only a bridge that
    /// answered says what it lists: one that is offline or waits to be paired changes nothing. Each
    /// change is an edit like an administrator's, saved and announced on the change stream; the
    /// driver's next reports wait for it, so a new accessory's first values land in its home.
    private func followBridge(_ found: Accessory) async {
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
    private func editForDevice(_ change: HomeEdit, home id: HomeID, _ what: String) async {
        guard let h = store.graph.homes.firstIndex(where: { $0.id == id }) else { return }
        let name = store.graph.homes[h].name
        guard let administrator = store.graph.homes[h].users.first(where: { $0.role == .administrator })?.account else {
            return logger.warning("\(what) the home '\(name)' failed: it has no administrator")
        }
        do {
            try await edit(change, account: administrator)
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

    // MARK: Characteristics

    /// Writes the one characteristic `path` names, found, decoded and checked in a single call on
    /// the manager (the gateway's fast path: one permission check, one lookup, no home copied out).
    /// `decode` reads the value for the characteristic's metadata (a command's payload is text whose
    /// reading depends on the format); it runs on the manager and its errors are the answer. Then as
    /// ``writeValues(_:home:account:)``: validated against the metadata, sent through the driver, and
    /// recorded only once the driver confirmed.
    package func writeValue(
        at path: CharacteristicPath, account: String,
        decode: @Sendable (Characteristic) throws(HomeError) -> CharacteristicValue
    ) async throws(HomeError) {
        let (accessory, write) = try store.withHome(path.accessory.home, account: account) { home throws(HomeError) in
            let accessory = try home.accessory(at: path.accessory)
            let (service, characteristic) = try accessory.characteristic(
                named: path.characteristic, service: path.service)
            let value = try HomeGraph.writable(try decode(characteristic), to: characteristic, of: accessory)
            return (
                accessory, CharacteristicWrite(service: service.id, characteristic: characteristic.type, value: value)
            )
        }
        try await self.write([write], to: accessory)
    }

    /// Writes several values of one accessory together (admin or guest): all are validated first, then
    /// sent in one driver write; either all are recorded or none.
    package func writeValues(_ requests: [ActionRequest], home: String, account: String) async throws(HomeError) {
        let (accessory, writes) = try resolveWrites(requests, home: home, account: account)
        try await write(writes, to: accessory)
    }

    /// The accessory and the checked writes of `requests`. Synchronous, so no snapshot of the home
    /// outlives it: one held across the driver call would make the commit copy the home's accessories.
    private func resolveWrites(_ requests: [ActionRequest], home: String, account: String) throws(HomeError)
        -> (Accessory, [CharacteristicWrite])
    {
        guard !requests.isEmpty else { throw HomeError(.missingParameter, "No values to write.") }
        let snapshot = try store.home(home, account: account)
        var target: Accessory?
        var writes: [CharacteristicWrite] = []
        for request in requests {
            let (accessory, service, characteristic) = try HomeGraph.resolve(request.target, in: snapshot)
            if let target, target.id != accessory.id {
                throw HomeError(.invalidParameter, "Values written together must belong to one accessory.")
            }
            target = accessory
            let value = try HomeGraph.writable(request.value, to: characteristic, of: accessory)
            if writes.contains(where: { $0.service == service.id && $0.characteristic == characteristic.type }) {
                throw HomeError(.invalidParameter, "\(characteristic.type) of '\(accessory.name)' is written twice.")
            }
            writes.append(CharacteristicWrite(service: service.id, characteristic: characteristic.type, value: value))
        }
        guard let accessory = target else { throw HomeError(.missingParameter, "No values to write.") }
        return (accessory, writes)
    }

    /// Writes `writes` through the accessory's driver within the manager's timeout (a command's, an action's).
    func write(_ writes: [CharacteristicWrite], to accessory: Accessory) async throws(HomeError) {
        let driver = try reachableDriver(for: accessory)
        let id = accessory.id
        try await callDriver(accessory, "write") { try await driver.write(id, values: writes) }
        guard !driver.reportsConfirmedValues else { return }
        store.commitDeviceState { graph, events in
            for write in writes {
                graph.recordValue(
                    write.value, accessory: id, service: write.service, characteristic: write.characteristic,
                    events: &events)
            }
        }
    }

    /// Reads values fresh from the accessory (admin or guest): one characteristic, one service's, or all
    /// readable ones. Naming a write-only characteristic fails with `writeOnlyCharacteristic`; an event
    /// (a button's press) has no value to read: it is left out, and naming one fails with `notSupported`.
    package func readValues(
        accessory name: String, service serviceName: String? = nil,
        characteristic type: CharacteristicType? = nil, bridged: Bool = false, home: String, account: String
    )
        async throws(HomeError) -> [CharacteristicRead]
    {
        let snapshot = try store.home(home, account: account)
        let accessory = try snapshot.accessory(named: name)
        var services = accessory.services
        if let serviceName { services = [try accessory.service(named: serviceName)] }
        // A bridge asked with `bridged` reads its bridged accessories' values too, in the same batch.
        if bridged && (serviceName != nil || type != nil || accessory.bridgedAccessories.isEmpty) {
            throw HomeError(
                .invalidParameter,
                "\"bridged\" reads a whole bridge: name a bridge, without a service or characteristic.")
        }
        var targets: [(Accessory, Service, Characteristic)] = []
        for id in bridged ? accessory.bridgedAccessories : [] {
            guard let other = snapshot.accessory(id), other.isReachable else { continue }
            for service in other.services {
                for characteristic in service.characteristics
                where !characteristic.type.isEvent && characteristic.metadata.permissions.contains(.read) {
                    targets.append((other, service, characteristic))
                }
            }
        }
        var own: [(Accessory, Service, Characteristic)] = []
        for service in services {
            for characteristic in service.characteristics where type == nil || characteristic.type == type {
                if characteristic.type.isEvent {
                    guard type == nil else {
                        throw HomeError(
                            .notSupported,
                            "\(characteristic.type) of '\(accessory.name)' is an event: subscribe to its topic to hear presses."
                        )
                    }
                } else if characteristic.metadata.permissions.contains(.read) {
                    own.append((accessory, service, characteristic))
                } else if type != nil {
                    throw HomeError(
                        .writeOnlyCharacteristic, "\(characteristic.type) of '\(accessory.name)' is write-only.")
                }
            }
        }
        if let type, own.isEmpty {
            throw HomeError(.notFound, "The accessory '\(accessory.name)' has no characteristic \(type) there.")
        }
        targets = own + targets
        let driver = try reachableDriver(for: accessory)
        // One call for them all: the driver batches what its devices take in one request.
        let asked = targets.map {
            ValueKey(accessory: $0.0.id, service: $0.1.id, characteristic: $0.2.type)
        }
        let values = try await callDriver(accessory, "read") { try await driver.read(asked) }
        guard values.count == targets.count else {
            throw HomeError(
                .communicationFailure, "'\(accessory.name)' answered \(values.count) of \(targets.count) reads.")
        }
        let reads = zip(targets, values).map { target, value in
            CharacteristicRead(
                accessory: target.0.id, accessoryName: target.0.name, service: target.1.id,
                serviceName: target.1.name, characteristic: target.2.type, value: value)
        }
        store.commitDeviceState { graph, events in
            for read in reads {
                graph.recordValue(
                    read.value, accessory: read.accessory, service: read.service,
                    characteristic: read.characteristic, events: &events)
            }
        }
        return reads
    }

    /// Asks an accessory to identify itself (admin or guest).
    package func identify(accessory name: String, home: String, account: String) async throws(HomeError) {
        let snapshot = try store.home(home, account: account)
        let accessory = try snapshot.accessory(named: name)
        let driver = try reachableDriver(for: accessory)
        let id = accessory.id
        try await callDriver(accessory, "identify") { try await driver.identify(id) }
    }

    // MARK: Helpers

    private func reachableDriver(for accessory: Accessory) throws(HomeError) -> any AccessoryDriver {
        guard store.isReachableNow(accessory.id), let driver = browser.driver(for: accessory.id)
        else {
            throw HomeError(.accessoryNotReachable, "The accessory '\(accessory.name)' is not reachable.")
        }
        return driver
    }

    /// Runs a driver request within `timeout` (the driver timeout when nil), with what it throws as
    /// the model's error. When the time is up the caller hears `operationTimedOut` with what
    /// `whenLate` says, even if the driver ignores cancellation: the request is cancelled and left to
    /// finish on its own, never waited for. A ``HomeError`` is passed on; anything else is
    /// `communicationFailure`, after what `failed` says.
    func callDriver<Value: Sendable>(
        timeout: Duration? = nil, whenLate: () -> String, failed: @autoclosure () -> String,
        _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
    ) async throws(HomeError) -> Value {
        let outcome = await Deadline.race(
            timeout: timeout ?? driverTimeout, timer: deadlines, body)
        switch outcome {
        case .success(let value)?: return value
        case nil: throw HomeError(.operationTimedOut, whenLate())
        case .failure(let error as HomeError)?: throw error
        case .failure(let error)?: throw HomeError(.communicationFailure, "\(failed()): \(error).")
        }
    }

    /// A request named `what` to `accessory`: one that times out shows the accessory unreachable
    /// until it answers again (``markUnresponsive(_:)``).
    private func callDriver<Value: Sendable>(
        _ accessory: Accessory, _ what: String,
        _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
    ) async throws(HomeError) -> Value {
        try await callDriver(
            whenLate: {
                markUnresponsive(accessory.id)
                return "The accessory '\(accessory.name)' did not answer the \(what) in time."
            }, failed: "The \(what) to '\(accessory.name)' failed", body)
    }
}

/// A driver the manager took in (``HomeManager/register(_:)``), to be served for its lifetime
/// (``HomeManager/serve(_:)``).
package struct RegisteredDriver: Sendable {
    package let driver: any AccessoryDriver
    fileprivate let index: Int
}
