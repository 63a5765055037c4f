import Crypto

/// The two keys of an encrypted HAP session, derived from pair verify's shared secret.
package struct SessionKeys: Sendable {
    // Kept as bytes: swift-crypto's SymmetricKey is not Sendable on Linux.
    /// Encrypts accessory-to-controller frames ("Control-Read-Encryption-Key").
    let accessoryToController: [UInt8]
    /// Encrypts controller-to-accessory frames ("Control-Write-Encryption-Key").
    let controllerToAccessory: [UInt8]

    /// Derives both keys from the X25519 shared secret of pair verify.
    package init(sharedSecret: [UInt8]) {
        accessoryToController = HAPKeyDerivation.controlRead.derive(from: sharedSecret).bytes
        controllerToAccessory = HAPKeyDerivation.controlWrite.derive(from: sharedSecret).bytes
    }
}

/// The encrypted framing of a HAP session after pair verify.
///
/// Each frame is a 2-byte little-endian plaintext length (at most 1,024), the ChaCha20-Poly1305 ciphertext
/// and its 16-byte tag; the length bytes are the AAD. Each direction has its own key and its own 64-bit
/// counter, starting at 0, that is the nonce (`HAPNonce.counter`) and goes up by one per frame. Outgoing
/// bytes are cut into frames of at most 1,024 bytes; incoming bytes may arrive in any pieces, and a partial
/// frame is kept until the rest comes. A frame that fails authentication (tampered, replayed, or
/// reordered: its counter is not the expected one) throws, and the session stays failed: the
/// connection must be dropped.
package struct SecureSession: Sendable {
    /// The largest plaintext of one frame.
    static let maximumFrameLength = 1024

    // Kept as bytes: swift-crypto's SymmetricKey is not Sendable on Linux.
    private let encryptionKeyBytes: [UInt8]
    private let decryptionKeyBytes: [UInt8]
    /// The number of frames sent so far (the next outgoing nonce).
    private(set) var outgoingCounter: UInt64 = 0
    /// The number of frames received so far (the next expected incoming nonce).
    private(set) var incomingCounter: UInt64 = 0
    /// Received bytes that wait for the rest of their frame.
    private(set) var buffer: [UInt8] = []
    private var failure: HAPError?

    /// The controller's end: writes with the controller-to-accessory key, reads the other.
    package static func controller(_ keys: SessionKeys) -> SecureSession {
        SecureSession(encryptionKeyBytes: keys.controllerToAccessory, decryptionKeyBytes: keys.accessoryToController)
    }

    /// The accessory's end of a session (a HomeKit bridge's connection after pair verify).
    package static func accessory(_ keys: SessionKeys) -> SecureSession {
        SecureSession(encryptionKeyBytes: keys.accessoryToController, decryptionKeyBytes: keys.controllerToAccessory)
    }

    /// Encrypts `plaintext` into frames of at most 1,024 bytes each, ready to write to the socket.
    ///
    /// - Throws: `.nonceExhausted` if the 64-bit counter would wrap.
    package mutating func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        let encryptionKey = SymmetricKey(data: encryptionKeyBytes)
        var out: [UInt8] = []
        for start in stride(from: 0, to: plaintext.count, by: Self.maximumFrameLength) {
            let frame = Array(plaintext[start..<min(start + Self.maximumFrameLength, plaintext.count)])
            guard outgoingCounter < UInt64.max else {
                throw HAPError(.nonceExhausted, "outgoing frame counter exhausted")
            }
            let lengthBytes: [UInt8] = [UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)]
            out += lengthBytes
            out += HAPCipher.seal(
                frame, key: encryptionKey, nonce: HAPNonce.counter(outgoingCounter), authenticating: lengthBytes)
            outgoingCounter += 1
        }
        return out
    }

    /// Takes bytes read from the socket and returns the plaintext of every frame they complete (empty when
    /// none is complete yet).
    ///
    /// - Throws: `.authenticationFailed` for a frame whose tag does not verify under the expected counter,
    ///   `.frameTooLong` for a length above 1,024; after either, every call throws the same error.
    package mutating func decrypt(_ bytes: some Collection<UInt8>) throws -> [UInt8] {
        if let failure { throw failure }
        buffer.append(contentsOf: bytes)
        let decryptionKey = SymmetricKey(data: decryptionKeyBytes)
        var plaintext: [UInt8] = []
        var consumed = 0
        while buffer.count - consumed >= 2 {
            let length = Int(buffer[consumed]) | Int(buffer[consumed + 1]) << 8
            guard length <= Self.maximumFrameLength else {
                return try fail(HAPError(.frameTooLong, "frame announces \(length) bytes, at most 1024 allowed"))
            }
            let frameEnd = consumed + 2 + length + HAPCipher.tagLength
            guard buffer.count >= frameEnd else { break }
            guard incomingCounter < UInt64.max else {
                return try fail(HAPError(.nonceExhausted, "incoming frame counter exhausted"))
            }
            do {
                plaintext += try HAPCipher.open(
                    Array(buffer[(consumed + 2)..<frameEnd]), key: decryptionKey,
                    nonce: HAPNonce.counter(incomingCounter), authenticating: Array(buffer[consumed..<(consumed + 2)]))
            } catch {
                return try fail(
                    HAPError(.authenticationFailed, "frame \(incomingCounter) failed authentication"))
            }
            incomingCounter += 1
            consumed = frameEnd
        }
        buffer.removeFirst(consumed)
        return plaintext
    }

    private mutating func fail(_ error: HAPError) throws -> [UInt8] {
        failure = error
        buffer = []
        throw error
    }
}
