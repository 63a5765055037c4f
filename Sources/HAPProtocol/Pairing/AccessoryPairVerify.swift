import Crypto

/// The accessory's side of HAP pair verify (M1 to M4) as a state machine over TLV8 bodies with no I/O:
/// what a HomeKit bridge answers on `/pair-verify` at the start of every connection. The controller
/// must be one of the accessory's pairings (`pairedController` finds it by the identifier it signs
/// with); the result is the session's keys, for `SecureSession.accessory(_:)`.
package struct AccessoryPairVerify: Sendable {
    package typealias Answer = PairingAnswer<Outcome>

    /// How a pair verify ended.
    package enum Outcome: PairingOutcome {
        /// The controller is `controller`; the connection is encrypted with `keys` from now on.
        case verified(PairedController, SessionKeys)
        /// The exchange ended with this error (`authentication`: not a controller of the accessory, or
        /// a signature that does not verify).
        case failed(PairingError.Code, state: UInt8)
    }

    private enum Phase: Sendable {
        case awaitingM1
        case awaitingM3(sharedSecret: [UInt8], controllerKey: [UInt8], ownKey: [UInt8])
        case finished
    }

    private let accessory: AccessoryIdentity
    // The ephemeral X25519 key's raw bytes: swift-crypto's key types are not Sendable on Linux.
    private let ephemeralSecret: [UInt8]
    private var phase = Phase.awaitingM1

    /// Prepares a pair verify of `accessory`; the ephemeral key is fresh unless a test gives one.
    package init(accessory: AccessoryIdentity, ephemeralKey: Curve25519.KeyAgreement.PrivateKey = .init()) {
        self.accessory = accessory
        ephemeralSecret = Array(ephemeralKey.rawRepresentation)
    }

    /// Answers the controller's M1 or M3; `pairedController` finds a stored pairing by identifier.
    package mutating func handle(
        _ body: [UInt8], pairedController: (_ identifier: [UInt8]) -> PairedController?
    ) -> Answer {
        let current = phase
        phase = .finished
        guard let message = try? TLV8(decoding: body) else { return Answer.failure(.unknown, state: 2) }
        let state = message[.state] ?? []
        switch (current, state) {
        case (.awaitingM1, [1]):
            // Raw bytes taken from a valid key in init: always a valid key.
            let ephemeral = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: ephemeralSecret)
            guard let controllerKey = message[.publicKey],
                let peer = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: controllerKey),
                let shared = try? ephemeral.sharedSecretFromKeyAgreement(with: peer)
            else {
                return Answer.failure(.unknown, state: 2)
            }
            let sharedSecret = shared.withUnsafeBytes { Array($0) }
            let ownKey = Array(ephemeral.publicKey.rawRepresentation)
            let identifier = Array(accessory.identifier.utf8)
            guard let signature = try? accessory.signingKey.signature(for: ownKey + identifier + controllerKey) else {
                return Answer.failure(.unknown, state: 2)
            }
            let inner: TLV8 = [(.identifier, identifier), (.signature, Array(signature))]
            let key = HAPKeyDerivation.pairVerifyEncryption.derive(from: sharedSecret)
            phase = .awaitingM3(sharedSecret: sharedSecret, controllerKey: controllerKey, ownKey: ownKey)
            let m2 = TLV8([
                .init(.state, [2]), .init(.publicKey, ownKey),
                .init(.encryptedData, HAPCipher.seal(inner.encoded(), key: key, nonce: HAPNonce.pairVerifyM2)),
            ])
            return Answer(body: m2.encoded(), outcome: nil)
        case (.awaitingM3(let sharedSecret, let controllerKey, let ownKey), [3]):
            let key = HAPKeyDerivation.pairVerifyEncryption.derive(from: sharedSecret)
            guard let sealed = message[.encryptedData],
                let opened = try? HAPCipher.open(sealed, key: key, nonce: HAPNonce.pairVerifyM3),
                let inner = try? TLV8(decoding: opened), let identifier = inner[.identifier],
                let signature = inner[.signature], let controller = pairedController(identifier),
                (try? verifySignature(
                    signature, of: controllerKey + identifier + ownKey, publicKey: controller.publicKey, "M3")) != nil
            else {
                return Answer.failure(.authentication, state: 4)
            }
            return Answer(
                body: TLV8([.init(.state, [4])]).encoded(),
                outcome: .verified(controller, SessionKeys(sharedSecret: sharedSecret)))
        default:
            return Answer.failure(.unknown, state: (state.first ?? 0) &+ 1)
        }
    }
}
