import Foundation
import HAPModel
import HAPProtocol
import HomeModel
import JSON

/// A device's `/accessories` answer as model accessories, with the address of every characteristic
/// for reads, writes and events. Accessory ids: the device's pairing identifier for aid 1 (the
/// accessory, or the bridge), `<identifier>:<aid>` for a bridged accessory.
struct HAPAccessoryDatabase: Sendable {
    struct Entry: Sendable {
        let accessory: AccessoryID
        let service: ServiceID
        let type: CharacteristicType
        let metadata: CharacteristicMetadata
        let permissions: Set<String>
    }

    private(set) var accessories: [Accessory] = []
    private var addresses: [ValueKey: HAPAddress] = [:]
    private var entries: [HAPAddress: Entry] = [:]
    private var usedAccessoryNames: Set<String> = []

    init(json body: [UInt8], deviceID: String) throws {
        guard let list = try Self.parse(body)["accessories"]?.arrayValue else {
            throw HAPError(.unexpectedMessage, "/accessories has no accessories list")
        }
        for item in list {
            guard let aid = item["aid"]?.integerValue, let services = item["services"]?.arrayValue else {
                throw HAPError(.unexpectedMessage, "an accessory without aid or services")
            }
            try add(aid: aid, services: services, deviceID: deviceID)
        }
        // aid 1 of a device with several accessories is its bridge.
        if accessories.count > 1, let bridge = accessories.firstIndex(where: { $0.id.rawValue == deviceID }) {
            accessories[bridge].category = .bridge
            accessories[bridge].bridgedAccessories = accessories.map(\.id).filter { $0.rawValue != deviceID }
            for index in accessories.indices where index != bridge {
                accessories[index].bridge = accessories[bridge].id
            }
        }
    }

    private mutating func add(aid: Int, services: [JSON], deviceID: String) throws {
        let id = AccessoryID(aid == 1 ? deviceID : "\(deviceID):\(aid)")
        var modelServices: [Service] = []
        var name: String?
        var manufacturer = ""
        var model = ""
        var usedNames: Set<String> = []
        for service in services {
            guard let iid = service["iid"]?.integerValue, let typeText = service["type"]?.stringValue,
                let characteristics = service["characteristics"]?.arrayValue
            else { throw HAPError(.unexpectedMessage, "a service without iid, type or characteristics") }
            let type = HAPTypes.service(typeText)
            let serviceID = ServiceID("\(iid)")
            var modelCharacteristics: [Characteristic] = []
            var serviceName: String?
            for characteristic in characteristics {
                guard let ciid = characteristic["iid"]?.integerValue,
                    let ctypeText = characteristic["type"]?.stringValue
                else { throw HAPError(.unexpectedMessage, "a characteristic without iid or type") }
                let ctype = HAPTypes.characteristic(ctypeText)
                let (metadata, permissions) = Self.metadata(characteristic)
                let value = characteristic["value"].flatMap { HAPValues.value($0, metadata.format) }
                // The information service's Name is the accessory's; it names other services.
                if ctype == .name, type.rawValue != "AccessoryInformation", case .string(let text)? = value {
                    serviceName = text
                }
                if type.rawValue == "AccessoryInformation", case .string(let text)? = value {
                    switch ctype.rawValue {
                    case "Name": name = text
                    case "Manufacturer": manufacturer = text
                    case "Model": model = text
                    default: break
                    }
                }
                let address = HAPAddress(aid: aid, iid: ciid)
                addresses[ValueKey(accessory: id, service: serviceID, characteristic: ctype)] = address
                entries[address] = Entry(
                    accessory: id, service: serviceID, type: ctype, metadata: metadata, permissions: permissions)
                modelCharacteristics.append(Characteristic(type: ctype, metadata: metadata, value: value))
            }
            // A service's name is a topic level: the device's made valid (`Switch #1` → `Switch 1`,
            // `Main/Light+` → `Main Light`), else its type's, numbered when taken.
            let base =
                serviceName.flatMap(HomeName.suggestion(from:)) ?? HomeName.suggestion(from: type.rawValue)
                ?? "Service \(iid)"
            let unique = HomeName.firstFree(base) { usedNames.contains(HomeName.key($0)) }
            usedNames.insert(HomeName.key(unique))
            modelServices.append(
                Service(id: serviceID, type: type, name: unique, characteristics: modelCharacteristics))
        }
        // An accessory's name is a name of the home: the device's made valid (`Fan-2 (Bedroom)` →
        // `Fan 2 Bedroom`, `Lamp #2` → `Lamp 2`; `HomeKit accessory` when nothing is left) and unique
        // on the device (a second `Outlet` is `Outlet 2`). The device's own is kept as `deviceName`.
        let base = HomeName.suggestion(from: name ?? "") ?? "HomeKit accessory"
        let homeName = HomeName.firstFree(base) { usedAccessoryNames.contains(HomeName.key($0)) }
        usedAccessoryNames.insert(HomeName.key(homeName))
        var accessory = Accessory(
            id: id, name: homeName, category: HAPTypes.category(of: modelServices), manufacturer: manufacturer,
            model: model, services: modelServices)
        if let name, homeName != name { accessory.deviceName = name }
        accessories.append(accessory)
    }

    // MARK: Lookups

    /// Where the characteristic `key` names is; `notFound` for one the device does not have.
    func address(of key: ValueKey) throws(HomeError) -> HAPAddress {
        guard let address = addresses[key] else {
            throw HomeError(.notFound, "'\(key.accessory)' has no \(key.characteristic) in '\(key.service)'.")
        }
        return address
    }

    /// The characteristics the device reports changes of (`ev`).
    var eventAddresses: [HAPAddress] {
        entries.filter { $0.value.permissions.contains("ev") }.keys.sorted { ($0.aid, $0.iid) < ($1.aid, $1.iid) }
    }

    func requiresTimedWrite(_ address: HAPAddress) -> Bool { entries[address]?.permissions.contains("tw") ?? false }

    /// The Identify characteristic of the accessory's information service.
    func identifyCharacteristic(of accessory: AccessoryID) -> (ServiceID, CharacteristicType)? {
        entries.values.first { $0.accessory == accessory && $0.type == .identify }.map { ($0.service, $0.type) }
    }

    /// The values a `GET /characteristics` answer or an `EVENT` carries (both are
    /// `{"characteristics":[{"aid","iid","value"}, …]}`), in order, each with the characteristic it
    /// is; entries this database does not know, or without a value, are left out.
    func values(in body: [UInt8]) -> [(address: HAPAddress, entry: Entry, value: CharacteristicValue)] {
        guard let list = (try? Self.parse(body))?["characteristics"]?.arrayValue else { return [] }
        return list.compactMap { item in
            guard let aid = item["aid"]?.integerValue, let iid = item["iid"]?.integerValue, let json = item["value"],
                let entry = entries[HAPAddress(aid: aid, iid: iid)],
                let value = HAPValues.value(json, entry.metadata.format)
            else { return nil }
            return (address: HAPAddress(aid: aid, iid: iid), entry: entry, value: value)
        }
    }

    /// A value as HAP's JSON for the characteristic at `address`.
    func json(_ value: CharacteristicValue, at address: HAPAddress) -> JSON {
        HAPValues.json(value, entries[address]?.metadata.format)
    }

    // MARK: Reading JSON

    private static func parse(_ body: [UInt8]) throws -> JSON {
        do {
            return try JSON.parse(body)
        } catch {
            throw HAPError(.unexpectedMessage, "an answer that is not JSON: \(error)")
        }
    }

    private static func metadata(_ fields: JSON) -> (CharacteristicMetadata, Set<String>) {
        let permissions = Set(fields["perms"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let words: [String: CharacteristicPermissions] = ["pr": .read, "pw": .write, "ev": .notify, "hd": .hidden]
        let modelPermissions = CharacteristicPermissions(permissions.compactMap { words[$0] })
        let metadata = CharacteristicMetadata(
            format: fields["format"]?.stringValue.map(CharacteristicFormat.init(rawValue:)) ?? .string,
            unit: fields["unit"]?.stringValue.map(CharacteristicUnit.init(rawValue:)),
            minimumValue: fields["minValue"]?.numberValue, maximumValue: fields["maxValue"]?.numberValue,
            stepValue: fields["minStep"]?.numberValue,
            maxLength: fields["maxLen"]?.integerValue ?? fields["maxDataLen"]?.integerValue,
            validValues: fields["valid-values"]?.arrayValue.map { list in
                list.compactMap { if case .integer(let number) = $0 { number } else { nil } }
            },
            permissions: modelPermissions)
        return (metadata, permissions)
    }
}
