import Foundation
import HomeModel
import JSON

/// The numbers HAP gives what a bridge serves, kept for good: an aid per accessory (1 is the bridge
/// itself) and an iid per service and characteristic within an accessory (1 is the accessory's
/// information service). Keyed on the model's ids, so a rename or a move changes none; never reused
/// after a removal, so a controller that cached an old number never reaches something else with it.
/// Stored with the home (issue 48); Apple Home loses an accessory's rooms and automations when its
/// numbers move.
struct BridgeNumbering: Sendable, Equatable {
    /// The most accessories one bridge serves, the bridge included (HAP: 150).
    static let accessoryLimit = 150

    private var aids: [AccessoryID: Int] = [:]
    private var nextAID = 2
    private var iids: [AccessoryID: [InstanceKey: Int]] = [:]
    private var nextIIDs: [AccessoryID: Counters] = [:]

    /// A service, or a characteristic of a service, within one accessory.
    private struct InstanceKey: Hashable, Sendable {
        let service: ServiceID
        let characteristic: CharacteristicType?
    }

    init() {}

    /// The aid of `accessory`, a new one (never given before) the first time.
    ///
    /// - Throws: `.maximumObjectLimitReached` when the bridge would serve more than ``accessoryLimit`` accessories.
    mutating func aid(of accessory: AccessoryID) throws(HomeError) -> Int {
        if let aid = aids[accessory] { return aid }
        guard aids.count + 1 < Self.accessoryLimit else {
            throw HomeError(
                .maximumObjectLimitReached,
                "A HomeKit bridge serves at most \(Self.accessoryLimit - 1) accessories besides itself; "
                    + "serve the others through a second bridge with its own pairing.")
        }
        defer { nextAID += 1 }
        aids[accessory] = nextAID
        return nextAID
    }

    /// The iid of a service (`characteristic` nil) or of one of its characteristics within
    /// `accessory`, a new one the first time. The accessory information service (`isInformation`)
    /// takes iid 1 as HAP requires, its characteristics the next ones up to 15; the others start at 16.
    mutating func iid(
        of service: ServiceID, _ characteristic: CharacteristicType? = nil, in accessory: AccessoryID,
        isInformation: Bool = false
    ) -> Int {
        let key = InstanceKey(service: service, characteristic: characteristic)
        if let iid = iids[accessory]?[key] { return iid }
        var counters = nextIIDs[accessory, default: Counters()]
        let iid: Int
        if isInformation && counters.information < Self.firstFreeIID {
            iid = counters.information
            counters.information += 1
        } else {
            iid = counters.other
            counters.other += 1
        }
        nextIIDs[accessory] = counters
        iids[accessory, default: [:]][key] = iid
        return iid
    }

    /// Forgets what no longer exists (accessories gone from the home, services gone from an
    /// accessory); their numbers are not given again. An accessory that comes back is a new one to
    /// controllers: it gets a new aid.
    mutating func keep(only present: [AccessoryID: Set<ServiceID>]) {
        aids = aids.filter { present[$0.key] != nil }
        nextIIDs = nextIIDs.filter { present[$0.key] != nil }
        iids = iids.filter { present[$0.key] != nil }
        for (accessory, services) in present {
            iids[accessory] = iids[accessory]?.filter { services.contains($0.key.service) }
        }
    }

    /// The next iids of one accessory: for its information service, and for the rest.
    private struct Counters: Equatable, Sendable {
        var information = 1
        var other = BridgeNumbering.firstFreeIID
    }

    static let firstFreeIID = 16

    // MARK: Stored

    /// The numbering as the bridge's stored state keeps it.
    var json: JSON {
        let accessories = Set(iids.keys).union(nextIIDs.keys).sorted { $0.rawValue < $1.rawValue }
        return .object([
            ("nextAID", .integer(nextAID)),
            ("aids", .object(aids.sorted { $0.value < $1.value }.map { ($0.key.rawValue, .integer($0.value)) })),
            (
                "accessories",
                .object(
                    accessories.map { accessory in
                        let counters = nextIIDs[accessory] ?? Counters()
                        let instances = (iids[accessory] ?? [:]).sorted { $0.value < $1.value }.map { key, iid in
                            JSON.array([
                                .string(key.service.rawValue), key.characteristic.map { .string($0.rawValue) } ?? .null,
                                .integer(iid),
                            ])
                        }
                        return (
                            accessory.rawValue,
                            .object([
                                ("next", .array([.integer(counters.information), .integer(counters.other)])),
                                ("iids", .array(instances)),
                            ])
                        )
                    })
            ),
        ])
    }

    /// Reads what ``json`` wrote; nil when it is not that.
    init?(json: JSON) {
        guard let nextAID = json["nextAID"]?.integerValue, let aids = json["aids"]?.objectMembers,
            let accessories = json["accessories"]?.objectMembers
        else { return nil }
        self.nextAID = nextAID
        for (accessory, aid) in aids {
            guard let aid = aid.integerValue else { return nil }
            self.aids[AccessoryID(accessory)] = aid
        }
        for (name, numbers) in accessories {
            let accessory = AccessoryID(name)
            guard let next = numbers["next"]?.arrayValue?.compactMap(\.integerValue), next.count == 2,
                let instances = numbers["iids"]?.arrayValue
            else { return nil }
            nextIIDs[accessory] = Counters(information: next[0], other: next[1])
            for instance in instances {
                guard let parts = instance.arrayValue, parts.count == 3, let service = parts[0].stringValue,
                    let iid = parts[2].integerValue
                else { return nil }
                let key = InstanceKey(
                    service: ServiceID(service),
                    characteristic: parts[1].stringValue.map { CharacteristicType(rawValue: $0) })
                iids[accessory, default: [:]][key] = iid
            }
        }
    }
}
