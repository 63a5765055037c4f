/// The type byte of a TLV8 item in HAP pairing messages (HAP specification, table 5-6).
///
/// An open set of static constants rather than an enum, so that an item of a type this module does not
/// know is carried along instead of failing the whole message.
package struct TLVType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt8

    package init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// kTLVType_Method: the pairing method (pair setup, verify, add/remove/list pairings).
    package static let method = TLVType(rawValue: 0x00)
    /// kTLVType_Identifier: a pairing identifier (the controller's or the accessory's).
    package static let identifier = TLVType(rawValue: 0x01)
    /// kTLVType_Salt: the SRP salt.
    package static let salt = TLVType(rawValue: 0x02)
    /// kTLVType_PublicKey: an SRP, Curve25519 or Ed25519 public key.
    package static let publicKey = TLVType(rawValue: 0x03)
    /// kTLVType_Proof: an SRP proof (M1 or M2).
    package static let proof = TLVType(rawValue: 0x04)
    /// kTLVType_EncryptedData: ChaCha20-Poly1305 ciphertext followed by its 16-byte tag.
    static let encryptedData = TLVType(rawValue: 0x05)
    /// kTLVType_State: the step of the exchange (M1, M2, ...).
    package static let state = TLVType(rawValue: 0x06)
    /// kTLVType_Error: an error code from the accessory (see `PairingError`).
    package static let error = TLVType(rawValue: 0x07)
    /// kTLVType_RetryDelay: seconds to wait before the next pair setup attempt (with error 3, backoff).
    package static let retryDelay = TLVType(rawValue: 0x08)
    /// kTLVType_Signature: an Ed25519 signature.
    static let signature = TLVType(rawValue: 0x0A)
    /// kTLVType_Permissions: 0 for a regular user, 1 for an admin.
    package static let permissions = TLVType(rawValue: 0x0B)
    /// kTLVType_Separator: an empty item between two entries of a list.
    package static let separator = TLVType(rawValue: 0xFF)

    package var description: String { "0x" + String(rawValue, radix: 16) }
}
