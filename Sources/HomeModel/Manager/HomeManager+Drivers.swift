import Execution
import Foundation
import Logging

extension HomeManager {
    // MARK: Drivers

    /// Takes a driver in: hands it the stored accessories, starts it and puts what it found into
    /// the browser. Its work and its updates (values, reachability, accessories found and lost) are
    /// ``serve(_:)``'s, for the driver's lifetime.
    package func register(_ driver: any AccessoryDriver) async throws -> RegisteredDriver {
        RegisteredDriver(driver: driver, index: try await drivers.register(driver))
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
    package func driverReports() async -> [DriverReport] { await drivers.reports() }

    private func follow(_ updates: AsyncStream<DriverUpdate>, driver: Int) async {
        await preferringChosenExecutor {
            for await update in updates { await drivers.take(update, driver: driver) }
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
        try await drivers.write([write], to: accessory)
    }

    /// Writes several values of one accessory together (admin or guest): all are validated first, then
    /// sent in one driver write; either all are recorded or none.
    package func writeValues(_ requests: [ActionRequest], home: String, account: String) async throws(HomeError) {
        let (accessory, writes) = try resolveWrites(requests, home: home, account: account)
        try await drivers.write(writes, to: accessory)
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
        let driver = try drivers.reachableDriver(for: accessory)
        // One call for them all: the driver batches what its devices take in one request.
        let asked = targets.map {
            ValueKey(accessory: $0.0.id, service: $0.1.id, characteristic: $0.2.type)
        }
        let values = try await drivers.call(accessory, "read") { try await driver.read(asked) }
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
        let driver = try drivers.reachableDriver(for: accessory)
        let id = accessory.id
        try await drivers.call(accessory, "identify") { try await driver.identify(id) }
    }
}

/// A driver the manager took in (``HomeManager/register(_:)``), to be served for its lifetime
/// (``HomeManager/serve(_:)``).
package struct RegisteredDriver: Sendable {
    package let driver: any AccessoryDriver
    fileprivate let index: Int
}
