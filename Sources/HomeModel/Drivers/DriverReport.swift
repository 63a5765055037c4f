/// What a driver says of its own link to its devices, in words for people: zigbee2mqtt online or
/// offline. Counts of accessories are the manager's (``DriverReport``); this is what only the driver
/// knows.
package struct DriverCondition: Sendable, Equatable {
    /// False when the driver cannot reach its devices at all (zigbee2mqtt offline or silent).
    package var isHealthy: Bool
    package var text: String

    package init(isHealthy: Bool, _ text: String) {
        self.isHealthy = isHealthy
        self.text = text
    }
}

/// One driver as the health page shows it: what it found, how much of it answers, and what the
/// driver says of itself.
package struct DriverReport: Sendable, Equatable {
    /// The driver's short name (``AccessoryDriver/name``): `virtual`, `zigbee2mqtt`, `hap`.
    package var driver: String
    /// Accessories found that are ready to use (paired, joined), bridges and bridged alike.
    package var accessories: Int
    /// Of those, how many are in a home.
    package var inHomes: Int
    /// Of those, how many do not answer now.
    package var unreachable: Int
    /// Accessories found that wait for their setup code (HomeKit).
    package var waitingForPairing: Int
    package var condition: DriverCondition?
}
