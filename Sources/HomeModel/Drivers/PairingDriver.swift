/// A driver whose accessories must be paired before they can be used (HAP): found accessories sit
/// in the browser unpaired until an administrator pairs one with its setup code.
public protocol PairingDriver: AccessoryDriver {
    /// Pairs with the unpaired accessory `id` using its setup code (`XXX-XX-XXX`) and returns what
    /// it now is, with its services: the accessory, or a bridge first and its bridged accessories.
    /// Throws ``HomeError``: `authenticationFailed` for a wrong code (with the accessory's own retry
    /// delay in the message when it asks to wait), `notFound` for an accessory it does not know.
    func pair(_ id: AccessoryID, setupCode: String) async throws -> [Accessory]

    /// Removes the pairing from the accessory `id` (a bridge: its own id) and forgets its keys.
    func unpair(_ id: AccessoryID) async throws
}
