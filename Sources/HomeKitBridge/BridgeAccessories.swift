import HAPModel
import HomeModel
import JSON

/// What one bridge serves: the bridge itself (aid 1) and each accessory of the home as a bridged
/// accessory, with HAP's types, formats, permissions and metadata from the model and the lasting
/// numbers of ``BridgeNumbering``. The structure only: values are filled in when it is served
/// (``json(values:)``), so the structure's bytes (``structure``) are what ``ConfigurationNumber``
/// hashes.
struct BridgeAccessories: Sendable {
    /// What a served characteristic stands for.
    enum Source: Sendable, Hashable {
        /// A characteristic of the model, read and written through the home manager.
        case model(ValueKey)
        /// A fixed value of the information service (Manufacturer, Model, Name, ...).
        case fixed(CharacteristicValue)
        /// The information service's Identify of a bridged accessory (`nil`: the bridge's own).
        case identify(AccessoryID?)
    }

    /// One served characteristic.
    struct Entry: Sendable {
        let type: CharacteristicType
        let hapType: String
        let metadata: CharacteristicMetadata
        let source: Source
        /// The accessory's and service's names in the home, for writes, which name what they write.
        let accessoryName: String
        let serviceName: String

        /// HAP's permissions: every readable characteristic of the model reports its changes, since
        /// the bridge follows the home's change stream whatever the device does; the information
        /// service's fixed values are read only.
        var permissions: [String] {
            if case .fixed = source { return ["pr"] }
            var words: [String] = []
            if metadata.permissions.contains(.read) { words += ["pr", "ev"] }
            if metadata.permissions.contains(.write) { words.append("pw") }
            if metadata.permissions.contains(.hidden) { words.append("hd") }
            return words
        }

        var isReadable: Bool { metadata.permissions.contains(.read) }
        var isWritable: Bool { metadata.permissions.contains(.write) }
    }

    private struct ServedService: Sendable {
        let iid: Int
        let hapType: String
        let characteristics: [HAPAddress]
    }

    private struct ServedAccessory: Sendable {
        let aid: Int
        let services: [ServedService]
    }

    private var served: [ServedAccessory] = []
    private(set) var entries: [HAPAddress: Entry] = [:]
    /// The address of each model characteristic served.
    private(set) var addresses: [ValueKey: HAPAddress] = [:]
    /// Each accessory's aid.
    private var aids: [AccessoryID: Int] = [:]
    /// What was left out, one line each, for the log.
    private(set) var leftOut: [String] = []

    /// A home's accessories as one bridge's (bridges are not served, their accessories are), numbered by
    /// `numbering` (which learns the new ones and forgets the removed ones). Beyond HAP's limit
    /// of accessories, the ones numbered first are served and the others are in ``leftOut``.
    init(accessories all: [Accessory], bridge: BridgeIdentity, numbering: inout BridgeNumbering) {
        let bridged = all.filter { $0.category != .bridge && !$0.services.isEmpty }
        var present: [AccessoryID: Set<ServiceID>] = [
            BridgeIdentity.accessoryID: [Self.informationID, Self.protocolID]
        ]
        for accessory in bridged {
            present[accessory.id] = Set(accessory.services.map(\.id)).union([Self.informationID])
        }
        numbering.keep(only: present)
        addBridge(bridge, numbering: &numbering)
        for accessory in bridged {
            let aid: Int
            do throws(HomeError) {
                aid = try numbering.aid(of: accessory.id)
            } catch {
                // Over HAP's limit: the accessories numbered first are served, the rest named.
                leftOut.append("'\(accessory.name)': \(error.message)")
                continue
            }
            aids[accessory.id] = aid
            var services = [information(of: accessory, aid: aid, numbering: &numbering)]
            for service in accessory.services where service.type.rawValue != "AccessoryInformation" {
                guard let hapType = HAPTypes.uuid(of: service.type) else {
                    leftOut.append("'\(accessory.name)' \(service.name): HAP has no service type \(service.type)")
                    continue
                }
                let serviceIID = numbering.iid(of: service.id, in: accessory.id)
                var addresses: [HAPAddress] = []
                for characteristic in service.characteristics {
                    let key = ValueKey(
                        accessory: accessory.id, service: service.id, characteristic: characteristic.type)
                    let entry = Entry(
                        type: characteristic.type, hapType: HAPTypes.uuid(of: characteristic.type) ?? "",
                        metadata: characteristic.metadata, source: .model(key), accessoryName: accessory.name,
                        serviceName: service.name)
                    if let problem = Self.problem(with: entry) {
                        leftOut.append("'\(accessory.name)' \(service.name) \(characteristic.type): \(problem)")
                        continue
                    }
                    let address = HAPAddress(
                        aid: aid, iid: numbering.iid(of: service.id, characteristic.type, in: accessory.id))
                    entries[address] = entry
                    self.addresses[key] = address
                    addresses.append(address)
                }
                guard !addresses.isEmpty else { continue }
                services.append(ServedService(iid: serviceIID, hapType: hapType, characteristics: addresses))
            }
            served.append(ServedAccessory(aid: aid, services: services))
        }
    }

    /// The aid of a served accessory.
    func aid(of accessory: AccessoryID) -> Int? { aids[accessory] }

    /// The service ids the information and protocol information services are numbered under (no
    /// model service has them).
    static let informationID = ServiceID("#information")
    static let protocolID = ServiceID("#protocol")

    private mutating func addBridge(_ bridge: BridgeIdentity, numbering: inout BridgeNumbering) {
        let id = BridgeIdentity.accessoryID
        let information = informationService(
            aid: 1, accessory: id, name: bridge.name, manufacturer: "homegate", model: "homegate bridge",
            serial: bridge.deviceID, firmware: bridge.firmware, identify: nil, numbering: &numbering)
        let protocolIID = numbering.iid(of: Self.protocolID, in: id)
        let version = HAPAddress(aid: 1, iid: numbering.iid(of: Self.protocolID, "Version", in: id))
        entries[version] = Entry(
            type: "Version", hapType: "37", metadata: CharacteristicMetadata(format: .string, permissions: [.read]),
            source: .fixed(.string("1.1.0")), accessoryName: bridge.name, serviceName: "Protocol Information")
        let protocolService = ServedService(iid: protocolIID, hapType: "A2", characteristics: [version])
        served.append(ServedAccessory(aid: 1, services: [information, protocolService]))
    }

    private mutating func information(of accessory: Accessory, aid: Int, numbering: inout BridgeNumbering)
        -> ServedService
    {
        let own = accessory.services.first { $0.type.rawValue == "AccessoryInformation" }
        func text(_ type: CharacteristicType) -> String? {
            if case .string(let text)? = own?.characteristic(type)?.value, !text.isEmpty { text } else { nil }
        }
        return informationService(
            aid: aid, accessory: accessory.id, name: accessory.name,
            manufacturer: accessory.manufacturer.isEmpty ? "homegate" : accessory.manufacturer,
            model: accessory.model.isEmpty ? accessory.category.rawValue : accessory.model,
            serial: text("SerialNumber") ?? String(accessory.id.rawValue.suffix(64)),
            firmware: text("FirmwareRevision") ?? "1.0", identify: accessory.id, numbering: &numbering)
    }

    /// The accessory information service (iid 1) that HAP requires of every accessory.
    private mutating func informationService(
        aid: Int, accessory: AccessoryID, name: String, manufacturer: String, model: String, serial: String,
        firmware: String, identify: AccessoryID?, numbering: inout BridgeNumbering
    ) -> ServedService {
        let serviceIID = numbering.iid(of: Self.informationID, in: accessory, isInformation: true)
        let readOnly = CharacteristicMetadata(format: .string, permissions: [.read])
        let fields: [(CharacteristicType, String, CharacteristicMetadata, Source)] = [
            ("Identify", "14", CharacteristicMetadata(format: .bool, permissions: [.write]), .identify(identify)),
            ("Manufacturer", "20", readOnly, .fixed(.string(manufacturer))),
            ("Model", "21", readOnly, .fixed(.string(model))),
            ("Name", "23", readOnly, .fixed(.string(name))),
            ("SerialNumber", "30", readOnly, .fixed(.string(serial))),
            ("FirmwareRevision", "52", readOnly, .fixed(.string(firmware))),
        ]
        var addresses: [HAPAddress] = []
        for (type, hapType, metadata, source) in fields {
            let address = HAPAddress(
                aid: aid, iid: numbering.iid(of: Self.informationID, type, in: accessory, isInformation: true))
            entries[address] = Entry(
                type: type, hapType: hapType, metadata: metadata, source: source, accessoryName: name,
                serviceName: "Accessory Information")
            addresses.append(address)
        }
        return ServedService(iid: serviceIID, hapType: "3E", characteristics: addresses)
    }

    /// Why HAP would refuse a characteristic, or nil when it is fine.
    private static func problem(with entry: Entry) -> String? {
        let metadata = entry.metadata
        guard !entry.hapType.isEmpty else { return "HAP has no characteristic type \(entry.type)" }
        guard Self.formats.contains(metadata.format) else { return "HAP has no format \(metadata.format)" }
        guard metadata.validStrings == nil else { return "a list of valid strings is not HAP's" }
        if let minimum = metadata.minimumValue, let maximum = metadata.maximumValue, minimum > maximum {
            return "its minimum \(minimum) is above its maximum \(maximum)"
        }
        if let range = metadata.format.unsignedRange, let minimum = metadata.minimumValue, minimum < 0 {
            return "its minimum \(minimum) is below \(range.lowerBound), the least a \(metadata.format) holds"
        }
        guard !metadata.permissions.isDisjoint(with: [.read, .write]) else { return "it is neither read nor written" }
        return nil
    }

    private static let formats: Set<CharacteristicFormat> = [
        .bool, .int, .uint8, CharacteristicFormat(rawValue: "uint16"), .uint32,
        CharacteristicFormat(rawValue: "uint64"),
        .float, .string, .data, .tlv8,
    ]

    // MARK: Serving

    /// The structure's bytes: the accessory database without values, what ``ConfigurationNumber`` hashes.
    var structure: [UInt8] { document { _, _ in nil }.bytes }

    /// The `/accessories` answer, each readable characteristic with its value from `value`.
    func json(values value: (HAPAddress, Entry) -> JSON?) -> JSON { document(value) }

    private func document(_ value: (HAPAddress, Entry) -> JSON?) -> JSON {
        .object([
            (
                "accessories",
                .array(
                    served.map { accessory in
                        .object([
                            ("aid", .integer(accessory.aid)),
                            ("services", .array(accessory.services.map { service(accessory.aid, $0, value) })),
                        ])
                    })
            )
        ])
    }

    private func service(_ aid: Int, _ service: ServedService, _ value: (HAPAddress, Entry) -> JSON?) -> JSON {
        .object([
            ("iid", .integer(service.iid)), ("type", .string(service.hapType)),
            (
                "characteristics",
                .array(
                    service.characteristics.compactMap { address in
                        entries[address].map { characteristic(address, $0, value: value(address, $0)) }
                    })
            ),
        ])
    }

    /// One characteristic as `/accessories` and a read with `meta=1` give it.
    func characteristic(_ address: HAPAddress, _ entry: Entry, value: JSON?) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("iid", .integer(address.iid)), ("type", .string(entry.hapType)),
            ("perms", .array(entry.permissions.map { .string($0) })),
        ]
        if let value { members.append(("value", value)) }
        members += Self.metadata(entry.metadata)
        return .object(members)
    }

    /// HAP's metadata fields of a characteristic.
    static func metadata(_ metadata: CharacteristicMetadata) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = [("format", .string(metadata.format.rawValue))]
        if let unit = metadata.unit { members.append(("unit", .string(unit.rawValue))) }
        func number(_ value: Double) -> JSON {
            metadata.format == .float || value != value.rounded() ? .number(value) : .integer(Int(value))
        }
        if let minimum = metadata.minimumValue { members.append(("minValue", number(minimum))) }
        if let maximum = metadata.maximumValue { members.append(("maxValue", number(maximum))) }
        if let step = metadata.stepValue { members.append(("minStep", number(step))) }
        if let length = metadata.maxLength {
            members.append((metadata.format == .string ? "maxLen" : "maxDataLen", .integer(length)))
        }
        if let valid = metadata.validValues { members.append(("valid-values", .array(valid.map { .integer($0) }))) }
        return members
    }
}

extension CharacteristicFormat {
    /// The range of an unsigned integer format; nil for the others.
    fileprivate var unsignedRange: ClosedRange<Int>? {
        switch rawValue {
        case "uint8", "uint16", "uint32", "uint64": 0...Int.max
        default: nil
        }
    }
}
