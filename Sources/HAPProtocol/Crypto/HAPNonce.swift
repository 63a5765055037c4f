import Crypto

/// The 12-byte ChaCha20-Poly1305 nonces HAP uses.
enum HAPNonce {
    /// A session frame's nonce: 4 zero bytes, then the 64-bit frame counter in little-endian order.
    static func counter(_ value: UInt64) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        return try! ChaChaPoly.Nonce(data: bytes)  // 12 bytes: always a valid nonce
    }

    /// A pairing message's nonce: an 8-character label such as "PS-Msg05" after 4 zero bytes.
    static func label(_ label: StaticString) -> ChaChaPoly.Nonce {
        let text = label.withUTF8Buffer { Array($0) }
        precondition(text.count == 8, "HAP nonce labels are 8 bytes")
        return try! ChaChaPoly.Nonce(data: [0, 0, 0, 0] + text)  // 12 bytes: always a valid nonce
    }

    /// Pair setup M5, controller to accessory.
    static var pairSetupM5: ChaChaPoly.Nonce { label("PS-Msg05") }
    /// Pair setup M6, accessory to controller.
    static var pairSetupM6: ChaChaPoly.Nonce { label("PS-Msg06") }
    /// Pair verify M2, accessory to controller.
    static var pairVerifyM2: ChaChaPoly.Nonce { label("PV-Msg02") }
    /// Pair verify M3, controller to accessory.
    static var pairVerifyM3: ChaChaPoly.Nonce { label("PV-Msg03") }
}

/// ChaCha20-Poly1305 as HAP uses it: the ciphertext followed by the 16-byte tag in one byte string.
enum HAPCipher {
    /// The length of the Poly1305 tag.
    static let tagLength = 16

    /// Encrypts `plaintext`; returns ciphertext + tag.
    static func seal(
        _ plaintext: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce, authenticating aad: [UInt8] = []
    ) -> [UInt8] {
        // Sealing only throws for an invalid key size, and HAP's keys are 32-byte HKDF outputs.
        let box = try! ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// Decrypts ciphertext + tag.
    ///
    /// - Throws: `.authenticationFailed` when the tag does not verify or the input is shorter than a tag.
    static func open(
        _ sealed: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce, authenticating aad: [UInt8] = []
    ) throws -> [UInt8] {
        guard sealed.count >= tagLength else {
            throw HAPError(.authenticationFailed, "sealed data shorter than its tag (\(sealed.count) bytes)")
        }
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: nonce, ciphertext: sealed.dropLast(tagLength), tag: sealed.suffix(tagLength))
            return Array(try ChaChaPoly.open(box, using: key, authenticating: aad))
        } catch {
            throw HAPError(.authenticationFailed, "ChaCha20-Poly1305 tag did not verify")
        }
    }
}
