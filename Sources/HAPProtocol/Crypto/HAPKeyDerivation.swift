import Crypto

/// HAP's HKDF-SHA512 derivations: each key is 32 bytes, from a shared secret with a fixed salt and info.
struct HAPKeyDerivation: Sendable, Equatable {
    /// The HKDF salt.
    let salt: String
    /// The HKDF info.
    let info: String

    /// Pair setup M5/M6: the key that encrypts the exchanged long-term keys (from the SRP session key).
    static let pairSetupEncryption = HAPKeyDerivation(
        salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
    /// Pair setup M5: the controller's signing material (from the SRP session key).
    static let pairSetupControllerSign = HAPKeyDerivation(
        salt: "Pair-Setup-Controller-Sign-Salt", info: "Pair-Setup-Controller-Sign-Info")
    /// Pair setup M6: the accessory's signing material (from the SRP session key).
    static let pairSetupAccessorySign = HAPKeyDerivation(
        salt: "Pair-Setup-Accessory-Sign-Salt", info: "Pair-Setup-Accessory-Sign-Info")
    /// Pair verify M2/M3: the key that encrypts the exchanged proofs (from the X25519 shared secret).
    static let pairVerifyEncryption = HAPKeyDerivation(
        salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
    /// The session key for accessory-to-controller frames (from the pair verify shared secret).
    static let controlRead = HAPKeyDerivation(salt: "Control-Salt", info: "Control-Read-Encryption-Key")
    /// The session key for controller-to-accessory frames (from the pair verify shared secret).
    static let controlWrite = HAPKeyDerivation(salt: "Control-Salt", info: "Control-Write-Encryption-Key")

    /// Derives a 32-byte key from `secret`.
    func derive(from secret: [UInt8]) -> SymmetricKey {
        HKDF<SHA512>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: Array(salt.utf8), info: Array(info.utf8),
            outputByteCount: 32)
    }
}

extension SymmetricKey {
    /// The key's bytes (for signing material, which HAP builds from derived keys).
    var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
