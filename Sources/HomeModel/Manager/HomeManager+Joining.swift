extension HomeManager {
    /// The longest a network may stay open to new devices, as zigbee2mqtt allows it.
    static let maximumJoinSeconds = 254

    /// Lets new devices join every network that needs permission (administrators of any home only),
    /// for `seconds` (0 closes them again). Devices that join appear in the browser once their
    /// driver has them. Throws `notSupported` when no driver has such a network.
    package func permitJoin(seconds: Int, account: String) async throws(HomeError) -> [JoinPermit] {
        guard store.graph.homes.contains(where: { $0.role(of: account) == .administrator }) else {
            throw HomeError(.insufficientPrivileges, "Only an administrator of a home may let devices join.")
        }
        guard (0...Self.maximumJoinSeconds).contains(seconds) else {
            throw HomeError(
                .invalidParameter, "\"seconds\" must be 0...\(Self.maximumJoinSeconds); 0 closes the network.")
        }
        let networks = drivers.browser.drivers.compactMap { $0 as? any JoinPermitting }
        guard !networks.isEmpty else {
            throw HomeError(.notSupported, "No driver has a network that devices join (zigbee2mqtt is not configured).")
        }
        var permits: [JoinPermit] = []
        for driver in networks {
            let open = try await drivers.call(
                whenLate: { "\(driver.name) did not answer the permit join in time." },
                failed: "The permit join to \(driver.name) failed"
            ) { try await driver.permitJoin(seconds: seconds) }
            permits.append(JoinPermit(network: driver.name, seconds: open))
        }
        return permits
    }
}
