import Execution
import Logging

/// An accessory whose driver still calls it reachable but that let a request time out is shown
/// unreachable (HomeKit's "No Response"), so clients see it on `$reachable` and later commands fail at
/// once with `accessoryNotReachable` instead of each waiting out the timeout. A probe reads one of its
/// characteristics every ``DriverHub/probeInterval``; the first answer makes it reachable again.
/// Anything the driver itself reports about its reachability (found, lost, reachable or not) wins.
extension DriverHub {
    /// Shows `id` unreachable and starts trying it again; nothing happens when it is already shown
    /// unreachable (by its driver or by an earlier timeout).
    func markUnresponsive(_ id: AccessoryID) {
        guard !isShutDown, unresponsive[id] == nil, let accessory = store.currentAccessory(id), accessory.isReachable
        else { return }
        logger.warning(
            "An accessory stopped answering; it is shown unreachable until it answers again",
            metadata: ["accessory": "\(accessory.name)", "timeout": "\(driverTimeout)"])
        unresponsive[id] = scheduleProbe(id)
        store.commitDeviceState { graph, events in graph.recordReachability(false, accessory: id, events: &events) }
    }

    /// Stops treating `id` as silent, because its driver reported on it; the report sets reachability.
    func forgetUnresponsive(_ id: AccessoryID) {
        if let probe = unresponsive.removeValue(forKey: id) { deadlines.cancel(probe.ticket) }
    }

    /// The next probe of `id`, one ``probeInterval`` from now, on the owner's timer.
    private func scheduleProbe(_ id: AccessoryID) -> Probe {
        probesScheduled &+= 1
        let number = probesScheduled
        let reenter = self.reenter
        let ticket = deadlines.schedule(after: probeInterval) { await reenter { await $0.probeAgain(id, number) } }
        return Probe(ticket: ticket, number: number)
    }

    /// Probes `id`, and schedules the next probe unless this one ended it or another probe (of a
    /// later timeout) took its place meanwhile.
    private nonisolated(nonsending) func probeAgain(_ id: AccessoryID, _ number: UInt64) async {
        guard !isShutDown, unresponsive[id]?.number == number else { return }
        if await !probe(id), !isShutDown, unresponsive[id]?.number == number { unresponsive[id] = scheduleProbe(id) }
    }

    /// Reads one characteristic of the silent accessory `id`; true when the probe is over (it
    /// answered, or it is no longer silent or no longer in a home).
    private nonisolated(nonsending) func probe(_ id: AccessoryID) async -> Bool {
        guard unresponsive[id] != nil else { return true }
        guard let accessory = store.currentAccessory(id) else {
            unresponsive[id] = nil
            return true
        }
        guard let driver = browser.driver(for: id), browser.isReachable(id),
            let target = Self.probeTarget(of: accessory)
        else {
            return false
        }
        let outcome = await Deadline.race(timeout: driverTimeout, timer: deadlines) {
            try await driver.read(id, service: target.service, characteristic: target.characteristic)
        }
        guard case .success = outcome, unresponsive[id] != nil else { return unresponsive[id] == nil }
        unresponsive[id] = nil
        logger.notice("An accessory answers again", metadata: ["accessory": "\(accessory.name)"])
        store.commitDeviceState { graph, events in graph.recordReachability(true, accessory: id, events: &events) }
        return true
    }

    /// A readable characteristic to ask: one with a known value first (so the device has it).
    private static func probeTarget(of accessory: Accessory) -> (
        service: ServiceID, characteristic: CharacteristicType
    )? {
        let readable = accessory.services.flatMap { service in
            service.characteristics.filter { $0.metadata.permissions.contains(.read) }.map { (service.id, $0) }
        }
        guard let chosen = readable.first(where: { $0.1.value != nil }) ?? readable.first else { return nil }
        return (chosen.0, chosen.1.type)
    }
}

/// The next probe of a silent accessory: its deadline on the owner's timer, and its number.
struct Probe {
    let ticket: DeadlineTimer<AnyClock>.Ticket
    let number: UInt64
}
