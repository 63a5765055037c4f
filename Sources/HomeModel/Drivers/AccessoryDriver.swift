/// A source of accessories: the virtual driver, and later MQTT-bound devices or a HAP controller.
///
/// The ``HomeManager`` is the only caller. It starts the driver, takes the accessories it found into
/// the browser, sends reads, writes and identify requests, and records what ``updates`` reports.
/// Drivers never talk to MQTT, and never change the model themselves.
package protocol AccessoryDriver: Sendable {
    /// A short stable name for logs, e.g. `virtual`.
    var name: String { get }

    /// What the driver reports on its own: values that changed, reachability, accessories found or
    /// lost. One stream per driver, read by one consumer (the manager).
    var updates: AsyncStream<DriverUpdate> { get }

    /// Hands the driver what the home database remembers of its accessories that are in a home,
    /// before ``start()``. A simulated device has no memory of its own and takes its values from
    /// here, so that it keeps its state across restarts as a real device does; a driver of real
    /// devices ignores it (the device knows its state better than the database).
    func restore(_ accessories: [Accessory]) async

    /// Starts talking to devices. Called once, before any other request; quick: what lasts (a
    /// connection, a clock that moves simulated devices, discovery) is ``run()``'s.
    func start() async throws

    /// The driver's long-lived work, for as long as the calling task runs: returns when that task is
    /// cancelled (or the work ends). Called by ``HomeManager/serve(_:)`` beside the following of
    /// ``updates``, in a service of the gateway's service group.
    func run() async

    /// Stops all background work and finishes ``updates``.
    func stop() async

    /// Every accessory the driver knows now, bridges and bridged accessories alike, with current values.
    func accessories() async -> [Accessory]

    /// Reads one value fresh from the device. Throws ``HomeError`` (`accessoryNotReachable`,
    /// `communicationFailure`, ...) when it cannot.
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue

    /// Reads several values fresh from the devices, answered in the order asked: in as few requests
    /// as the devices allow (HAP: one `GET /characteristics` per accessory or bridge for them all).
    /// Throws as ``read(_:service:characteristic:)`` when any fails. Default: one read after another.
    func read(_ targets: [ValueKey]) async throws -> [CharacteristicValue]

    /// Writes values to one accessory, all or none. The values are already validated against the
    /// metadata. Returns only once the device confirmed.
    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws

    /// Asks the device to show itself (blink, beep).
    func identify(_ accessory: AccessoryID) async throws

    /// Whether the driver reports, through ``updates`` and before ``write(_:values:)`` returns, every
    /// value a write changed, as the device reported it. The manager then records nothing itself
    /// after a write, so what it publishes is exactly what the device said, in the order it said it
    /// (a real device may confirm at its own resolution, or change again at once). Default: false,
    /// and the manager records the values written once the driver confirmed.
    var reportsConfirmedValues: Bool { get }

    /// What the driver says of its link to its devices, for the health page; nil when it has nothing
    /// to say beyond its accessories' reachability (the default).
    func condition() async -> DriverCondition?
}

extension AccessoryDriver {
    /// Real devices keep their own state: nothing to restore.
    package func restore(_ accessories: [Accessory]) async {}

    /// Nothing to start before ``run()``.
    package func start() async throws {}

    /// Nothing long-lived: waits for cancellation.
    package func run() async { await untilCancelled() }

    package var reportsConfirmedValues: Bool { false }

    package func read(_ targets: [ValueKey]) async throws -> [CharacteristicValue] {
        var values: [CharacteristicValue] = []
        for target in targets {
            values.append(
                try await read(target.accessory, service: target.service, characteristic: target.characteristic))
        }
        return values
    }
    package func condition() async -> DriverCondition? { nil }
}

/// One value to write, addressed within an accessory.
package struct CharacteristicWrite: Sendable, Hashable {
    package let service: ServiceID
    package let characteristic: CharacteristicType
    package let value: CharacteristicValue

    package init(service: ServiceID, characteristic: CharacteristicType, value: CharacteristicValue) {
        self.service = service
        self.characteristic = characteristic
        self.value = value
    }
}

/// Something a driver reports without being asked.
package enum DriverUpdate: Sendable, Hashable {
    /// A value changed on the device (a sensor reading, a door that finished closing).
    case value(AccessoryID, service: ServiceID, characteristic: CharacteristicType, CharacteristicValue)
    /// The accessory became reachable or unreachable.
    case reachability(AccessoryID, isReachable: Bool)
    /// A new accessory appeared (or an old one changed its services).
    case found(Accessory)
    /// The accessory is gone from the driver.
    case lost(AccessoryID)
}

/// A driver of a network that new devices join only while it is open (zigbee2mqtt's permit join).
package protocol JoinPermitting: AccessoryDriver {
    /// Opens the network to new devices for `seconds` (0 closes it) and returns the seconds the
    /// network says it is open for. Throws ``HomeError`` with the network's own words when it refuses.
    func permitJoin(seconds: Int) async throws -> Int
}

/// What one network answered to a permit-join request.
package struct JoinPermit: Sendable, Hashable {
    /// The driver's name (`zigbee2mqtt`).
    package let network: String
    package let seconds: Int
}

/// Returns when the calling task is cancelled: for work that has nothing to do but last.
package func untilCancelled() async {
    let (never, continuation) = AsyncStream<Never>.makeStream()
    for await _ in never {}
    withExtendedLifetime(continuation) {}
}
