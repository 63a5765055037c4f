/// What every driver found, merged: HomeKit's accessory browser plus the routing of requests to the
/// driver that owns each accessory. Accessories in a home are kept here too (for routing and
/// reachability); ``unowned(by:)`` is what the browser shows.
final class AccessoryBrowser {
    private(set) var drivers: [any AccessoryDriver] = []
    private var found: [AccessoryID: Accessory] = [:]
    private var order: [AccessoryID] = []
    private var owner: [AccessoryID: Int] = [:]

    func add(_ driver: any AccessoryDriver) -> Int {
        drivers.append(driver)
        return drivers.count - 1
    }

    /// Makes room for `count` more accessories (a driver's whole list at once: 10,000 found one by
    /// one grew the tables a dozen times, rehashing each).
    func reserve(_ count: Int) {
        found.reserveCapacity(found.count + count)
        owner.reserveCapacity(owner.count + count)
        order.reserveCapacity(order.count + count)
    }

    /// Records an accessory a driver reports; returns whether it is new to the browser.
    func found(_ accessory: Accessory, driver: Int) -> Bool {
        let isNew = found[accessory.id] == nil
        if isNew { order.append(accessory.id) }
        var accessory = accessory
        accessory.forgetEvents()
        found[accessory.id] = accessory
        owner[accessory.id] = driver
        return isNew
    }

    func lost(_ id: AccessoryID) {
        found[id] = nil
        owner[id] = nil
        order.removeAll { $0 == id }
    }

    func knows(_ id: AccessoryID) -> Bool { found[id] != nil }

    /// Whether `id` is gone from its bridge: the bridge is reported now and lists it no more, and
    /// no driver reports it (a bridge that is only offline has said nothing).
    func isGone(_ id: AccessoryID, fromBridge bridge: AccessoryID) -> Bool {
        guard let listing = found[bridge] else { return false }
        return found[id] == nil && !listing.bridgedAccessories.contains(id)
    }

    /// What the driver at `index` found, in the order it was found.
    func accessories(ofDriver index: Int) -> [Accessory] {
        order.compactMap { owner[$0] == index ? found[$0] : nil }
    }

    func driver(for id: AccessoryID) -> (any AccessoryDriver)? {
        owner[id].map { drivers[$0] }
    }

    /// The index of the driver that reported `id`.
    func driverIndex(for id: AccessoryID) -> Int? { owner[id] }

    func isReachable(_ id: AccessoryID) -> Bool { found[id]?.isReachable ?? false }

    func setReachable(_ isReachable: Bool, _ id: AccessoryID) {
        found[id]?.isReachable = isReachable
    }

    func setValue(
        _ value: CharacteristicValue, _ id: AccessoryID, _ service: ServiceID,
        _ type: CharacteristicType
    ) {
        _ = found[id]?.setValue(value, service: service, type: type)
    }

    /// Found accessories that belong to no home, in the order they were found.
    func unowned(by graph: HomeGraph) -> [Accessory] {
        order.compactMap { found[$0] }.filter { graph.locate($0.id) == nil }
    }

    /// An accessory that belongs to no home, followed by its bridged accessories if it is a bridge.
    func accessoryWithBridged(_ id: AccessoryID, unownedIn graph: HomeGraph) throws(HomeError) -> [Accessory] {
        if let owner = graph.locate(id) {
            throw HomeError(
                .objectAlreadyAssociatedToHome,
                "The accessory '\(id)' already belongs to the home '\(graph.homes[owner.home].name)'.")
        }
        guard let accessory = found[id] else {
            throw HomeError(.notFound, "No driver has found an accessory '\(id)'.")
        }
        if accessory.needsPairing {
            throw HomeError(
                .invalidParameter, "'\(accessory.name)' must be paired first: pairAccessory with its setup code.")
        }
        // A bridge already in a home that lists a new accessory: it joins the bridge's home alone.
        if let bridge = accessory.bridge, graph.locate(bridge) != nil { return [accessory] }
        if let bridge = accessory.bridge {
            throw HomeError(
                .invalidParameter,
                "'\(accessory.name)' sits behind the bridge '\(found[bridge]?.name ?? bridge.rawValue)'; add the bridge."
            )
        }
        let bridged = accessory.bridgedAccessories.compactMap { found[$0] }
            .filter { graph.locate($0.id) == nil }
        return [accessory] + bridged
    }
}
