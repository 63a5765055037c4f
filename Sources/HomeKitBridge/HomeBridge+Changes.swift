import AsyncMailbox
import HAPModel
import HomeModel
import JSON
import Logging

extension HomeBridge {
    /// Follows the home's changes until `changes` ends: values go to subscribed controllers as
    /// events at once (a press too: every one is told, none coalesced), reachability is kept for
    /// reads, and a change of the home's structure, names or members rebuilds the accessories
    /// (and moves `c#` when what is served changed).
    func follow(_ changes: Mailbox<HomeChange>) async {
        for await change in changes { await apply(change.event) }
    }

    func apply(_ event: HomeEvent) async {
        guard event.home == nil || event.home == homeID else { return }
        switch event {
        case .didUpdateValueForCharacteristic(_, let accessory, let service, let characteristic, let value):
            let key = ValueKey(accessory: accessory, service: service, characteristic: characteristic)
            guard let address = accessories.addresses[key], let entry = accessories.entries[address] else { return }
            if !characteristic.isEvent { values[address] = value }
            notify(address, value, entry)
        case .accessoryDidUpdateReachability(_, let accessory, let isReachable):
            guard let aid = accessories.aid(of: accessory) else { return }
            if isReachable { unreachable.remove(aid) } else { unreachable.insert(aid) }
        case .didUpdateNameForHome(_, _, let name):
            homeName = name
            await rebuild()
        case .didExecuteActionSet, .didFireTrigger, .didFindNewAccessory, .didRemoveNewAccessory,
            .didUpdatePrimaryHome, .didUpdateLocationForHome, .didUpdateNextFirings:
            return
        default:
            await rebuild()
        }
    }

    /// Tells every controller subscribed to `address` its new value, but the one that wrote it.
    private func notify(_ address: HAPAddress, _ value: CharacteristicValue, _ entry: BridgeAccessories.Entry) {
        let item: JSON = .object([
            ("aid", .integer(address.aid)), ("iid", .integer(address.iid)),
            ("value", HAPValues.json(value, entry.metadata.format)),
        ])
        let body = JSON.object([("characteristics", .array([item]))]).bytes
        for (id, connection) in connections where connection.subscriptions.contains(address) {
            if let written = connection.ownWrites[address] {
                connections[id]?.ownWrites[address] = nil
                if written == value && !entry.type.isEvent { continue }
            }
            connection.send(.event(body))
        }
    }

    /// Builds the accessories anew from the home as the bridge's account sees it; without the
    /// home (removed, or the account no member now), serves the bridge alone and says why.
    func rebuild() async {
        let home: Home?
        do throws(HomeError) {
            home = try await manager.home(homeName, account: settings.account)
        } catch {
            logger.error(
                "HomeKit bridge serves no accessories: \(error.message)",
                metadata: ["home": "\(homeName)", "account": "\(settings.account)"])
            home = nil
        }
        let before = state
        accessories = Self.build(
            home, state: &state, name: homeName, firmware: firmware, logger: logger, warned: &warned)
        values = Self.values(of: home, in: accessories)
        unreachable = Set(
            (home?.accessories ?? []).filter { !$0.isReachable }.compactMap { accessories.aid(of: $0.id) })
        let addresses = Set(accessories.entries.keys)
        for id in connections.keys { connections[id]?.subscriptions.formIntersection(addresses) }
        guard state != before else { return }
        await persist("its accessory numbers")
        if state.configurationNumber != before.configurationNumber {
            logger.info(
                "HomeKit bridge's accessories changed",
                metadata: ["home": "\(homeName)", "c#": "\(state.configurationNumber.value)"])
            advertisementChanged()
        }
    }
}
