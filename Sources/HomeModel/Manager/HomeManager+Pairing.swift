import Execution

extension HomeManager {
    /// Pairs an accessory from the browser with its setup code (administrator of `home` only) and
    /// takes it into the home, in `room` (default room) under `name` (its own by default); a bridge
    /// brings its bridged accessories. Nothing is added when pairing fails, and a pairing that cannot
    /// be added (a name the home refuses) is removed from the device again: all or nothing. Returns
    /// the name it was added under.
    @discardableResult
    package func pairAccessory(
        _ id: AccessoryID, setupCode: String, home: String, room: String? = nil, name: String? = nil, account: String
    ) async throws(HomeError) -> String {
        _ = try store.graph.homeIndex(home, account: account, .administrator)
        guard let index = drivers.browser.driverIndex(for: id), let driver = drivers.browser.driver(for: id) else {
            throw HomeError(.notFound, "No driver has found an accessory '\(id)'.")
        }
        guard let pairing = driver as? any PairingDriver else {
            throw HomeError(.notSupported, "'\(id)' needs no pairing: add it with addAccessory.")
        }
        // Two minutes: SRP with the 3072-bit group costs seconds on a small hub.
        let paired = try await drivers.call(
            timeout: .seconds(120), whenLate: { "Pairing with '\(id)' did not finish in time." },
            failed: "Pairing with '\(id)' failed"
        ) { try await pairing.pair(id, setupCode: setupCode) }
        guard let primary = paired.first else {
            throw HomeError(.communicationFailure, "'\(id)' paired but listed no accessory.")
        }
        // The driver reports them too, later; the browser must know them before they are added.
        for accessory in paired { drivers.apply(.found(accessory), driver: index) }
        do {
            return try await edit(.addAccessory(home: home, id: primary.id, room: room, name: name), account: account)
                ?? primary.name
        } catch {
            let undone = await Deadline.race(timeout: drivers.driverTimeout, timer: drivers.deadlines) {
                try await pairing.unpair(primary.id)
            }
            guard case .success? = undone else {
                throw HomeError(
                    error.code,
                    "\(error.message) The accessory stays paired with the gateway: removing the pairing failed; reset it to pair it again."
                )
            }
            throw HomeError(error.code, "\(error.message) The pairing was removed from the accessory again.")
        }
    }

    /// The accessories of `home` that hold a pairing of their own, which
    /// ``unpairAccessory(_:home:account:)`` removes: those of a pairing driver (HomeKit) that are not
    /// bridged (a bridge's accessories share its pairing).
    package func accessoriesWithPairing(in home: Home) -> Set<AccessoryID> {
        Set(
            home.accessories.lazy.filter { accessory in
                accessory.bridge == nil && self.drivers.browser.driver(for: accessory.id) is any PairingDriver
            }.map(\.id))
    }

    /// Removes the pairing from the accessory (a bridge, or one without a bridge) and the accessory
    /// from the home (administrator only). When the accessory cannot be reached, nothing changes.
    package func unpairAccessory(_ name: String, home: String, account: String) async throws(HomeError) {
        let accessory = try store.administeredAccessory(name, home: home, account: account)
        guard let pairing = drivers.browser.driver(for: accessory.id) as? any PairingDriver else {
            throw HomeError(.notSupported, "'\(accessory.name)' has no pairing: remove it with removeAccessory.")
        }
        // Refused before the device is asked: its pairing is its bridge's, and the home keeps both.
        if let bridge = accessory.bridge {
            let bridgeName = try? self.home(home, account: account).accessory(bridge)?.name
            throw HomeError(
                .cannotRemoveNonBridgeAccessory,
                "'\(accessory.name)' is paired through its bridge: unpair '\(bridgeName ?? bridge.rawValue)'.")
        }
        try await drivers.call(
            whenLate: { "'\(accessory.name)' did not answer the unpairing in time." },
            failed: "Unpairing '\(accessory.name)' failed"
        ) { try await pairing.unpair(accessory.id) }
        // The driver reports the accessory lost (or unpaired again) by itself.
        try await edit(.removeAccessory(home: home, accessory: accessory.name), account: account)
    }

    /// The controllers paired with an accessory of `home` (administrator only).
    package func pairings(ofAccessory name: String, home: String, account: String) async throws(HomeError)
        -> [ControllerPairing]
    {
        let (accessory, driver) = try pairingDriver(name, home: home, account: account)
        return try await run("listing the pairings of '\(accessory.name)'") {
            try await driver.pairings(of: accessory.id)
        }
    }

    /// Pairs another controller with an accessory of `home` (administrator only).
    package func addPairing(
        _ pairing: ControllerPairing, publicKey: [UInt8], toAccessory name: String, home: String, account: String
    ) async throws(HomeError) {
        let (accessory, driver) = try pairingDriver(name, home: home, account: account)
        try await run("adding a pairing to '\(accessory.name)'") {
            try await driver.addPairing(pairing, publicKey: publicKey, to: accessory.id)
        }
    }

    /// Removes another controller's pairing from an accessory of `home` (administrator only).
    package func removePairing(controller: String, fromAccessory name: String, home: String, account: String)
        async throws(HomeError)
    {
        let (accessory, driver) = try pairingDriver(name, home: home, account: account)
        try await run("removing a pairing from '\(accessory.name)'") {
            try await driver.removePairing(controller: controller, from: accessory.id)
        }
    }

    private func pairingDriver(_ name: String, home: String, account: String) throws(HomeError) -> (
        Accessory, any PairingDriver
    ) {
        let accessory = try store.administeredAccessory(name, home: home, account: account)
        guard let driver = drivers.browser.driver(for: accessory.bridge ?? accessory.id) as? any PairingDriver else {
            throw HomeError(.notSupported, "'\(accessory.name)' has no pairings.")
        }
        return (accessory, driver)
    }

    /// A driver call named `what` (`listing the pairings of …`).
    private func run<T: Sendable>(
        _ what: String, _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> T
    ) async throws(HomeError) -> T {
        try await drivers.call(whenLate: { "No answer in time \(what)." }, failed: "Failed \(what)", body)
    }
}
