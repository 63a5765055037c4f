import Crypto

/// The controller's side of HAP pair verify (M1 to M4), as a state machine over TLV8 bodies with no I/O.
///
/// Run on every new connection: an X25519 exchange of ephemeral keys, each side signing both ephemeral
/// keys with its long-term Ed25519 key. The result is the session's keys (`SessionKeys`), from which
/// `SecureSession.controller(_:)` makes the encrypted framing for the rest of the connection.
package struct PairVerify: Sendable {
    private enum Phase: Sendable {
        case initial
        case awaitingM2
        case awaitingM4(sharedSecret: [UInt8])
        case finished
    }

    private let controller: ControllerIdentity
    private let accessory: AccessoryPairing
    // The ephemeral X25519 key's raw bytes: swift-crypto's key types are not Sendable on Linux.
    private let ephemeralSecret: [UInt8]
    private var phase = Phase.initial

    /// Prepares a pair verify with a paired accessory; the ephemeral key is fresh unless a test gives one.
    package init(
        controller: ControllerIdentity, accessory: AccessoryPairing,
        ephemeralKey: Curve25519.KeyAgreement.PrivateKey = .init()
    ) {
        self.controller = controller
        self.accessory = accessory
        self.ephemeralSecret = Array(ephemeralKey.rawRepresentation)
    }

    private var ephemeralKey: Curve25519.KeyAgreement.PrivateKey {
        // Raw bytes taken from a valid key in init: always a valid key.
        try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: ephemeralSecret)
    }

    /// M1: the controller's ephemeral public key.
    package mutating func start() -> [UInt8] {
        phase = .awaitingM2
        let message: TLV8 = [(.state, [1]), (.publicKey, Array(ephemeralKey.publicKey.rawRepresentation))]
        return message.encoded()
    }

    /// Takes the accessory's answer (M2 or M4) and gives M3 or, after M4, the session keys.
    package mutating func handle(_ body: [UInt8]) throws -> PairingStep<SessionKeys> {
        let current = phase
        phase = .finished
        switch current {
        case .awaitingM2:
            let message = try readPairingAnswer(body, expectedState: 2)
            let accessoryKey = try requiredItem(.publicKey, in: message, "M2")
            let sealed = try requiredItem(.encryptedData, in: message, "M2")
            guard let peerKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: accessoryKey) else {
                throw HAPError(.unexpectedMessage, "the accessory's ephemeral key is not an X25519 key")
            }
            let shared = try ephemeralKey.sharedSecretFromKeyAgreement(with: peerKey)
            let sharedSecret = shared.withUnsafeBytes { Array($0) }
            let key = HAPKeyDerivation.pairVerifyEncryption.derive(from: sharedSecret)
            let inner = try TLV8(decoding: HAPCipher.open(sealed, key: key, nonce: HAPNonce.pairVerifyM2))
            let identifier = try requiredItem(.identifier, in: inner, "M2's encrypted data")
            let signature = try requiredItem(.signature, in: inner, "M2's encrypted data")
            guard identifier == Array(accessory.identifier.utf8) else {
                throw HAPError(.invalidSignature, "M2 comes from another accessory than the one paired")
            }
            let ownKey = Array(ephemeralKey.publicKey.rawRepresentation)
            try verifySignature(
                signature, of: accessoryKey + identifier + ownKey, publicKey: accessory.publicKey,
                "the accessory's M2 signature")
            let info = ownKey + Array(controller.identifier.utf8) + accessoryKey
            let ownSignature = Array(try controller.signingKey.signature(for: info))
            let subTLV: TLV8 = [(.identifier, Array(controller.identifier.utf8)), (.signature, ownSignature)]
            let m3: TLV8 = [
                (.state, [3]),
                (.encryptedData, HAPCipher.seal(subTLV.encoded(), key: key, nonce: HAPNonce.pairVerifyM3)),
            ]
            phase = .awaitingM4(sharedSecret: sharedSecret)
            return .send(m3.encoded())
        case .awaitingM4(let sharedSecret):
            _ = try readPairingAnswer(body, expectedState: 4)
            return .done(SessionKeys(sharedSecret: sharedSecret))
        case .initial, .finished:
            throw HAPError(.unexpectedMessage, "pair verify is not waiting for an answer")
        }
    }
}
