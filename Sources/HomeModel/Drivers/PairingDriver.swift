/// A driver whose accessories must be paired before they can be used (HAP): found accessories sit
/// in the browser unpaired until an administrator pairs one with its setup code.
package protocol PairingDriver: AccessoryDriver {
    /// Pairs with the unpaired accessory `id` using its setup code (`XXX-XX-XXX`) and returns what
    /// it now is, with its services: the accessory, or a bridge first and its bridged accessories.
    /// Throws ``HomeError``: `authenticationFailed` for a wrong code (with the accessory's own retry
    /// delay in the message when it asks to wait), `notFound` for an accessory it does not know.
    func pair(_ id: AccessoryID, setupCode: String) async throws -> [Accessory]

    /// Removes the pairing from the accessory `id` (a bridge: its own id) and forgets its keys.
    func unpair(_ id: AccessoryID) async throws

    /// The controllers paired with the accessory `id`, as the accessory lists them.
    func pairings(of id: AccessoryID) async throws -> [ControllerPairing]

    /// Pairs another controller with the accessory `id` (its pairing identifier and Ed25519
    /// long-term public key), as an administrator or not.
    func addPairing(_ pairing: ControllerPairing, publicKey: [UInt8], to id: AccessoryID) async throws

    /// Removes another controller's pairing from the accessory `id`.
    func removePairing(controller: String, from id: AccessoryID) async throws
}

/// A controller paired with an accessory.
package struct ControllerPairing: Sendable, Hashable {
    /// The controller's pairing identifier.
    package let identifier: String
    package let isAdministrator: Bool
    /// Whether it is this gateway.
    package let isThisGateway: Bool

    package init(identifier: String, isAdministrator: Bool, isThisGateway: Bool) {
        self.identifier = identifier
        self.isAdministrator = isAdministrator
        self.isThisGateway = isThisGateway
    }
}
