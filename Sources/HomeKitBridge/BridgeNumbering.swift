import HomeModel

/// The numbers HAP gives what a bridge serves, kept for good: an aid per accessory (1 is the bridge
/// itself) and an iid per service and characteristic within an accessory (1 is the accessory's
/// information service). Keyed on the model's ids, so a rename or a move changes none; never reused
/// after a removal, so a controller that cached an old number never reaches something else with it.
/// Stored with the home (issue 48); Apple Home loses an accessory's rooms and automations when its
/// numbers move.
package struct BridgeNumbering: Sendable, Equatable, Codable {
    /// The most accessories one bridge serves, the bridge included (HAP: 150).
    package static let accessoryLimit = 150

    private var aids: [AccessoryID: Int] = [:]
    private var nextAID = 2
    private var iids: [AccessoryID: [InstanceKey: Int]] = [:]
    private var nextIIDs: [AccessoryID: Counters] = [:]

    /// A service, or a characteristic of a service, within one accessory.
    private struct InstanceKey: Hashable, Sendable, Codable {
        let service: ServiceID
        let characteristic: CharacteristicType?
    }

    package init() {}

    /// The aid of `accessory`, a new one (never given before) the first time.
    ///
    /// - Throws: `.maximumObjectLimitReached` when the bridge would serve more than ``accessoryLimit`` accessories.
    package mutating func aid(of accessory: AccessoryID) throws(HomeError) -> Int {
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
    package mutating func iid(
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
    package mutating func keep(only present: [AccessoryID: Set<ServiceID>]) {
        aids = aids.filter { present[$0.key] != nil }
        nextIIDs = nextIIDs.filter { present[$0.key] != nil }
        iids = iids.filter { present[$0.key] != nil }
        for (accessory, services) in present {
            iids[accessory] = iids[accessory]?.filter { services.contains($0.key.service) }
        }
    }

    /// The next iids of one accessory: for its information service, and for the rest.
    private struct Counters: Equatable, Sendable, Codable {
        var information = 1
        var other = BridgeNumbering.firstFreeIID
    }

    static let firstFreeIID = 16
}
