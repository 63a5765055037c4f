import Execution
import HAPModel
import HomeModel
import JSON
import Logging
import NIOHTTP1

extension HomeBridge {
    // MARK: The accessory database

    /// The home's accessories as this bridge serves them; what HAP would refuse is logged, one line
    /// each, once (`warned` holds what was said).
    static func build(
        _ home: Home?, state: inout BridgeState, name: String, firmware: String, logger: Logger,
        warned: inout Set<String>
    ) -> BridgeAccessories {
        let identity = BridgeIdentity(name: name, deviceID: state.deviceID, firmware: firmware)
        let accessories = BridgeAccessories(
            accessories: home?.accessories ?? [], bridge: identity, numbering: &state.numbering)
        for line in accessories.leftOut where warned.insert(line).inserted {
            logger.warning("HomeKit bridge leaves out \(line)", metadata: ["home": "\(name)"])
        }
        _ = state.configurationNumber.update(content: accessories.structure)
        return accessories
    }

    /// The values of `home`'s characteristics that `accessories` serves.
    static func values(of home: Home?, in accessories: BridgeAccessories) -> [HAPAddress: CharacteristicValue] {
        var values: [HAPAddress: CharacteristicValue] = [:]
        for accessory in home?.accessories ?? [] {
            for service in accessory.services {
                for characteristic in service.characteristics {
                    let key = ValueKey(
                        accessory: accessory.id, service: service.id, characteristic: characteristic.type)
                    if let address = accessories.addresses[key], let value = characteristic.value {
                        values[address] = value
                    }
                }
            }
        }
        return values
    }

    /// `GET /accessories`: every accessory with the values as they stand.
    func accessoryDatabase() -> JSON {
        accessories.json { address, entry in entry.isReadable ? valueJSON(address, entry) : nil }
    }

    /// A readable characteristic's value as HAP's JSON: a press has none (`null`), a value not
    /// known yet is the format's least valid one.
    func valueJSON(_ address: HAPAddress, _ entry: BridgeAccessories.Entry) -> JSON {
        switch entry.source {
        case .fixed(let value): return HAPValues.json(value, entry.metadata.format)
        case .identify: return .null
        case .model(let key):
            if key.characteristic.isEvent { return .null }
            if let value = values[address] { return HAPValues.json(value, entry.metadata.format) }
            let metadata = entry.metadata
            switch metadata.format {
            case .bool: return .bool(false)
            case .string, .data, .tlv8: return .string("")
            case .float: return .number(metadata.minimumValue.map { max($0, 0) } ?? 0)
            default:
                return .integer(metadata.validValues?.first ?? Int(metadata.minimumValue.map { max($0, 0) } ?? 0))
            }
        }
    }

    // MARK: Reads

    /// `GET /characteristics?id=1.10,2.11[&meta=1][&perms=1][&type=1][&ev=1]`, answered from the
    /// values the bridge follows.
    func read(_ request: HAPRequest, on id: Int) -> HAPResponse {
        guard let list = request.query("id"), !list.isEmpty else { return Self.status(.badRequest, -70410) }
        var addresses: [HAPAddress] = []
        for item in list.split(separator: ",") {
            let parts = item.split(separator: ".")
            guard parts.count == 2, let aid = Int(parts[0]), let iid = Int(parts[1]) else {
                return Self.status(.badRequest, -70410)
            }
            addresses.append(HAPAddress(aid: aid, iid: iid))
        }
        let flag = { (name: String) in request.query(name) == "1" }
        let subscriptions = connections[id]?.subscriptions ?? []
        var failed = false
        let items = addresses.map { address -> JSON in
            var members: [(key: String, value: JSON)] = [
                ("aid", .integer(address.aid)), ("iid", .integer(address.iid)),
            ]
            let status: Int
            if let entry = accessories.entries[address] {
                if !entry.isReadable {
                    status = -70405
                } else if unreachable.contains(address.aid) {
                    status = -70402
                } else {
                    status = 0
                    members.append(("value", valueJSON(address, entry)))
                }
                if flag("type") { members.append(("type", .string(entry.hapType))) }
                if flag("perms") { members.append(("perms", .array(entry.permissions.map { .string($0) }))) }
                if flag("meta") { members += BridgeAccessories.metadata(entry.metadata) }
                if flag("ev") { members.append(("ev", .bool(subscriptions.contains(address)))) }
            } else {
                status = -70409
            }
            if status != 0 { failed = true }
            members.append(("status", .integer(status)))
            return .object(members)
        }
        // Statuses only in a multi-status answer; a plain 200 lists values alone.
        let listed = failed ? items : items.map { item in .object(item.objectMembers!.filter { $0.key != "status" }) }
        return .json(failed ? .multiStatus : .ok, JSON.object([("characteristics", .array(listed))]).bytes)
    }

    // MARK: Writes

    /// `PUT /characteristics`: values written as the bridge's account, subscriptions (`ev`) changed.
    /// The writes to one accessory go in one call, the accessories' side by side, so a slow device
    /// holds up no other.
    func write(_ body: [UInt8], on id: Int) async -> HAPResponse {
        guard let root = try? JSON.parse(body), let items = root["characteristics"]?.arrayValue, !items.isEmpty else {
            return Self.status(.badRequest, -70410)
        }
        if let pid = root["pid"]?.integerValue {
            guard let prepared = connections[id]?.prepared, prepared.id == UInt64(truncatingIfNeeded: pid),
                clock.now < prepared.expiry
            else { return Self.status(.badRequest, -70410) }
            connections[id]?.prepared = nil
        }
        var statuses: [(address: HAPAddress, status: Int, echo: Bool)] = []
        var writes: [AccessoryID: [(index: Int, request: ActionRequest)]] = [:]
        var identify: [(index: Int, accessory: AccessoryID?)] = []
        for item in items {
            guard let aid = item["aid"]?.integerValue, let iid = item["iid"]?.integerValue else {
                return Self.status(.badRequest, -70410)
            }
            let address = HAPAddress(aid: aid, iid: iid)
            let index = statuses.count
            statuses.append((address, 0, item["r"]?.boolValue == true))
            guard let entry = accessories.entries[address] else {
                statuses[index].status = -70409
                continue
            }
            if let events = item["ev"] {
                guard let subscribe = events.boolValue else {
                    statuses[index].status = -70410
                    continue
                }
                guard entry.isReadable else {
                    statuses[index].status = -70406
                    continue
                }
                if subscribe {
                    connections[id]?.subscriptions.insert(address)
                } else {
                    connections[id]?.subscriptions.remove(address)
                }
            }
            guard let json = item["value"] else { continue }
            guard entry.isWritable else {
                statuses[index].status = -70404
                continue
            }
            guard let value = HAPValues.value(json, entry.metadata.format) else {
                statuses[index].status = -70410
                continue
            }
            switch entry.source {
            case .model(let key):
                connections[id]?.ownWrites[address] = (try? entry.metadata.validate(value)) ?? value
                let target = CharacteristicReference(
                    accessory: entry.accessoryName, service: entry.serviceName, characteristic: key.characteristic)
                writes[key.accessory, default: []].append((index, ActionRequest(target, value)))
            case .identify(let accessory): identify.append((index, accessory))
            case .fixed: statuses[index].status = -70404
            }
        }
        for (index, status) in await perform(writes, identify: identify) {
            statuses[index].status = status
            let address = statuses[index].address
            if status == 0, let entry = accessories.entries[address], case .model = entry.source,
                let written = connections[id]?.ownWrites[address]
            {
                values[address] = written
            } else {
                connections[id]?.ownWrites[address] = nil
            }
        }
        guard statuses.contains(where: { $0.status != 0 || $0.echo }) else { return .noContent }
        let answer = statuses.map { item -> JSON in
            var members: [(key: String, value: JSON)] = [
                ("aid", .integer(item.address.aid)), ("iid", .integer(item.address.iid)),
                ("status", .integer(item.status)),
            ]
            if item.echo, item.status == 0, let entry = accessories.entries[item.address], entry.isReadable {
                members.append(("value", valueJSON(item.address, entry)))
            }
            return .object(members)
        }
        return .json(.multiStatus, JSON.object([("characteristics", .array(answer))]).bytes)
    }

    /// Runs the writes and identifies; each item's HAP status by its index.
    private func perform(
        _ writes: [AccessoryID: [(index: Int, request: ActionRequest)]],
        identify: [(index: Int, accessory: AccessoryID?)]
    ) async -> [(Int, Int)] {
        let manager = self.manager
        let home = homeName
        let account = settings.account
        let names = Dictionary(
            identify.compactMap { item in
                item.accessory.flatMap { id in
                    accessories.entries.values.first { entry in
                        if case .identify(id) = entry.source { true } else { false }
                    }.map { (id, $0.accessoryName) }
                }
            }, uniquingKeysWith: { first, _ in first })
        // One accessory's writes (what the Home app sends) go straight to the manager, on the same
        // executor; several go side by side, so a slow device holds up no other.
        if identify.isEmpty, writes.count == 1, let items = writes.first?.value {
            do throws(HomeError) {
                try await manager.writeValues(items.map(\.request), home: home, account: account)
                return items.map { ($0.index, 0) }
            } catch {
                return items.map { ($0.index, HAPStatus.status(of: error)) }
            }
        }
        return await withTaskGroup(of: [(Int, Int)].self) { group in
            for (_, items) in writes {
                group.addTask {
                    do throws(HomeError) {
                        try await manager.writeValues(items.map(\.request), home: home, account: account)
                        return items.map { ($0.index, 0) }
                    } catch {
                        return items.map { ($0.index, HAPStatus.status(of: error)) }
                    }
                }
            }
            for item in identify {
                guard let accessory = item.accessory, let name = names[accessory] else { continue }
                group.addTask {
                    do throws(HomeError) {
                        try await manager.identify(accessory: name, home: home, account: account)
                        return [(item.index, 0)]
                    } catch {
                        return [(item.index, HAPStatus.status(of: error))]
                    }
                }
            }
            var statuses: [(Int, Int)] = []
            for await results in group { statuses += results }
            return statuses
        }
    }

    /// `PUT /prepare`: a timed write's id and time to live (ms), for the next write that names it.
    func prepare(_ body: [UInt8], on id: Int) -> HAPResponse {
        guard let root = try? JSON.parse(body), let ttl = root["ttl"]?.integerValue, ttl > 0,
            let pid = root["pid"]?.integerValue
        else { return Self.status(.badRequest, -70410) }
        connections[id]?.prepared = (UInt64(truncatingIfNeeded: pid), clock.now.advanced(by: .milliseconds(ttl)))
        return .json(.ok, JSON.object([("status", .integer(0))]).bytes)
    }
}
