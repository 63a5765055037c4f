import Crypto

/// The controller's long-term identity: its pairing identifier and Ed25519 key pair (LTSK/LTPK).
///
/// HAP-python reads the identifier as a UUID, so a controller should use an uppercase UUID string.
package struct ControllerIdentity: Sendable {
    /// The controller's pairing identifier, sent as UTF-8.
    package let identifier: String
    // The LTSK's raw 32 bytes: swift-crypto's key types are not Sendable on Linux.
    private let secretKey: [UInt8]

    /// An identity with a given identifier and key.
    package init(identifier: String, signingKey: Curve25519.Signing.PrivateKey) {
        self.identifier = identifier
        self.secretKey = Array(signingKey.rawRepresentation)
    }

    /// The long-term secret key (LTSK); its public key is the LTPK the accessory stores.
    package var signingKey: Curve25519.Signing.PrivateKey {
        // Raw bytes taken from a valid key above: always a valid key.
        try! Curve25519.Signing.PrivateKey(rawRepresentation: secretKey)
    }

    /// The long-term public key (LTPK), 32 bytes.
    package var publicKey: [UInt8] {
        Array(signingKey.publicKey.rawRepresentation)
    }
}

/// What a controller keeps of an accessory after pair setup: its pairing identifier and long-term public key.
package struct AccessoryPairing: Sendable, Equatable {
    /// The accessory's pairing identifier (HAP-python: its MAC-like "AA:BB:CC:DD:EE:FF").
    package let identifier: String
    /// The accessory's Ed25519 long-term public key (LTPK), 32 bytes.
    package let publicKey: [UInt8]

    package init(identifier: String, publicKey: [UInt8]) {
        self.identifier = identifier
        self.publicKey = publicKey
    }
}

/// One step of a pairing exchange: a body to send, or the exchange's result.
package enum PairingStep<Result: Sendable>: Sendable {
    /// POST this TLV8 body to the accessory and hand its answer to the state machine.
    case send([UInt8])
    /// The exchange is complete.
    case done(Result)
}

/// Checks an Ed25519 signature, throwing `.invalidSignature` when it does not verify.
func verifySignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8], _ what: String) throws {
    guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey),
        key.isValidSignature(signature, for: message)
    else {
        throw HAPError(.invalidSignature, "\(what) did not verify")
    }
}
