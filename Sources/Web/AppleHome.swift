import HomeModel

/// What a home's administrators see of the home's HomeKit bridge: its setup code and QR code
/// until a controller paired it, then that it is paired.
package struct HomeKitPairing: Sendable {
    package let setupCode: String
    /// The QR code as SVG markup, drawn by the hub (no outside request).
    package let qrCode: String
    package let isPaired: Bool

    package init(setupCode: String, qrCode: String, isPaired: Bool) {
        self.setupCode = setupCode
        self.qrCode = qrCode
        self.isPaired = isPaired
    }
}

/// The bridge's pairing of a home (by id and name), or nil when the home is no HomeKit bridge.
package typealias HomeKitPairingSource = @Sendable (HomeID, String) async -> HomeKitPairing?
