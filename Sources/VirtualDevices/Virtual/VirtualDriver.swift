import Execution
import HomeModel

/// A driver of simulated devices that behave like real ones: a thermostat heats toward its target, a
/// lock takes a moment (and can jam), a garage door opens and closes and stops on an obstruction,
/// sensors drift. For the demo and for tests.
///
/// Time comes from an injected clock: ``run()`` advances the simulation every `tick` of it
/// (``AnyClock/every(_:_:)``), and tests call ``advance(by:)`` directly instead of waiting.
///
/// It runs on the executor it is given (the gateway's loop, where the manager calls it without a hop).
package actor VirtualDriver: AccessoryDriver {
    package nonisolated let name = "virtual"
    private nonisolated let executor: ExecutorChoice
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.unownedExecutor }
    package nonisolated let updates: AsyncStream<DriverUpdate>
    private let continuation: AsyncStream<DriverUpdate>.Continuation
    var devices: [AccessoryID: VirtualDevice] = [:]
    private var order: [AccessoryID] = []
    private let clock: any Clock<Duration>
    private let tick: Duration
    private var random: SplitMix64

    /// - Parameters:
    ///   - devices: the devices, bridges with their bridged devices inside.
    ///   - clock: the clock the simulation and write delays run on.
    ///   - tick: how much simulated time passes per step of the running loop.
    ///   - seed: the seed of the random readings and failures.
    ///   - executor: where the driver runs (the manager's), or a queue of its own.
    package init(
        devices: [VirtualDeviceConfiguration], clock: any Clock<Duration> = ContinuousClock(),
        tick: Duration = .seconds(1), seed: UInt64 = 0x686F_6D65, executor: (any SerialExecutor)? = nil
    ) {
        self.executor = ExecutorChoice(executor, otherwise: "homegate-virtual")
        (updates, continuation) = AsyncStream.makeStream(of: DriverUpdate.self, bufferingPolicy: .unbounded)
        self.clock = clock
        self.tick = tick
        random = SplitMix64(seed: seed)
        self.devices.reserveCapacity(devices.count)
        order.reserveCapacity(devices.count)
        for configuration in devices {
            for device in Self.flatten(configuration, bridge: nil) {
                self.devices[device.accessory.id] = device
                order.append(device.accessory.id)
            }
        }
    }

    private static func flatten(_ configuration: VirtualDeviceConfiguration, bridge: AccessoryID?) -> [VirtualDevice] {
        let device = VirtualDevice(configuration, bridge: bridge)
        return [device] + configuration.bridged.flatMap { flatten($0, bridge: device.accessory.id) }
    }

    // MARK: AccessoryDriver

    /// Takes the values the home database holds for these devices, so a simulated lamp set to 37 %
    /// is still at 37 % after the gateway restarts; devices of no home keep their configured values.
    package func restore(_ accessories: [Accessory]) async {
        for accessory in accessories {
            devices[accessory.id]?.restore(accessory)
        }
    }

    /// Moves simulated time on by `tick` after each `tick` of the clock, until cancelled. Devices that
    /// only do what they are told need no clock: a home of switches and lamps keeps the process
    /// asleep until a command comes.
    package func run() async {
        guard devices.values.contains(where: \.changesOverTime) else { return await untilCancelled() }
        await AnyClock(clock).every(tick) { await self.advance(by: self.tick) }
    }

    package func stop() async {
        continuation.finish()
    }

    package func accessories() async -> [Accessory] {
        order.compactMap { id in
            devices[id].map { device in
                var accessory = device.accessory
                accessory.isReachable = isReachable(id)
                return accessory
            }
        }
    }

    package func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        try await hangWhileSilent(accessory)
        let device = devices.values[try usableDevice(accessory)]
        try failRandomly(device)
        guard let value = device.accessory.characteristic(service, characteristic)?.value else {
            throw HomeError(.notFound, "'\(device.accessory.name)' has no \(characteristic) in service \(service).")
        }
        return value
    }

    package func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        try await hangWhileSilent(accessory)
        // The device is found once and changed in place: a write is every command's path.
        var index = try usableDevice(accessory)
        let delay = devices.values[index].configuration.writeDelay
        if delay > .zero {
            try await clock.sleep(for: delay)
            index = try usableDevice(accessory)
        }
        try failRandomly(devices.values[index])
        for write in values
        where devices.values[index].accessory.characteristic(write.service, write.characteristic) == nil {
            throw HomeError(.notFound, "'\(devices.values[index].accessory.name)' has no \(write.characteristic).")
        }
        devices.values[index].write(values)
        for change in devices.values[index].takeChanges() { continuation.yield(change) }
    }

    package func identify(_ accessory: AccessoryID) async throws {
        try await hangWhileSilent(accessory)
        devices.values[try usableDevice(accessory)].identifyCount += 1
    }

    // MARK: Control, for the demo and tests

    /// Lets simulated time pass for every device and reports what changed.
    package func advance(by duration: Duration) {
        let seconds = duration / .seconds(1)
        for id in order {
            devices[id]?.advance(by: seconds, using: &random)
            for change in devices[id]?.takeChanges() ?? [] { continuation.yield(change) }
        }
    }

    /// Switches a device's reachability; a bridge takes its bridged devices with it.
    package func setReachable(_ isReachable: Bool, _ accessory: AccessoryID) {
        let affected = [accessory] + (devices[accessory]?.accessory.bridgedAccessories ?? [])
        let before = affected.map(self.isReachable)
        devices[accessory]?.configuration.isReachable = isReachable
        for (id, was) in zip(affected, before) where self.isReachable(id) != was {
            continuation.yield(.reachability(id, isReachable: !was))
        }
    }

    /// Makes a device (and a bridge's bridged devices) stop answering or answer again. The driver
    /// still reports it reachable: only a caller's timeout notices. Requests made while it was silent
    /// hang until cancelled.
    package func setAnswering(_ isAnswering: Bool, _ accessory: AccessoryID) {
        devices[accessory]?.isAnswering = isAnswering
    }

    package func setWriteDelay(_ delay: Duration, _ accessory: AccessoryID) {
        devices[accessory]?.configuration.writeDelay = delay
    }

    /// Sets the share (0...1) of reads and writes that fail.
    package func setFailureRate(_ rate: Double, _ accessory: AccessoryID) {
        devices[accessory]?.configuration.failureRate = min(1, max(0, rate))
    }

    /// The device's current value, as the device holds it.
    package func value(
        _ accessory: AccessoryID, _ characteristic: CharacteristicType, service: ServiceID = ServiceID("main")
    )
        -> CharacteristicValue?
    {
        devices[accessory]?.value(characteristic, service: service)
    }

    /// How many times the device was asked to identify itself.
    package func identifyCount(_ accessory: AccessoryID) -> Int { devices[accessory]?.identifyCount ?? 0 }

    // MARK: Helpers

    private func isReachable(_ id: AccessoryID) -> Bool { devices[id].map(isReachable) ?? false }

    private func isReachable(_ device: VirtualDevice) -> Bool {
        device.configuration.isReachable && (device.accessory.bridge.map(isReachable) ?? true)
    }

    private func isSilent(_ id: AccessoryID) -> Bool {
        guard let device = devices[id] else { return false }
        return !device.isAnswering || (device.accessory.bridge.map(isSilent) ?? false)
    }

    /// Never returns for a silent device: waits on the clock until the caller cancels.
    private func hangWhileSilent(_ id: AccessoryID) async throws {
        guard isSilent(id) else { return }
        while true { try await clock.sleep(for: .seconds(3600)) }
    }

    /// Where the device is among `devices`, if it exists and is reachable; valid until `devices`
    /// gains or loses a device (across a suspension, look it up again).
    private func usableDevice(_ id: AccessoryID) throws(HomeError) -> [AccessoryID: VirtualDevice].Index {
        guard let index = devices.index(forKey: id) else { throw HomeError(.notFound, "No virtual device '\(id)'.") }
        guard isReachable(devices.values[index]) else {
            throw HomeError(
                .accessoryNotReachable, "The accessory '\(devices.values[index].accessory.name)' is not reachable.")
        }
        return index
    }

    private func failRandomly(_ device: VirtualDevice) throws(HomeError) {
        let rate = device.configuration.failureRate
        guard rate > 0, Double.random(in: 0..<1, using: &random) < rate else { return }
        throw HomeError(
            .communicationFailure, "The accessory '\(device.accessory.name)' did not confirm (simulated failure).")
    }
}
