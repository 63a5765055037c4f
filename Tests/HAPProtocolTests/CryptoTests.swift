import Crypto
import Testing

@testable import HAPProtocol

@Suite struct CryptoTests {
    /// RFC 5869, test case 1 (the published vector is HKDF-SHA-256).
    @Test func hkdfRFC5869TestCase1() {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: [UInt8](repeating: 0x0B, count: 22)),
            salt: hex("000102030405060708090a0b0c"), info: hex("f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42)
        #expect(
            hex(key.bytes)
                == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    /// The same inputs through HKDF-SHA-512, against Python's `cryptography` (no published vector).
    @Test func hkdfSHA512MatchesPythonCryptography() {
        let key = HKDF<SHA512>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: [UInt8](repeating: 0x0B, count: 22)),
            salt: hex("000102030405060708090a0b0c"), info: hex("f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42)
        #expect(
            hex(key.bytes)
                == "832390086cda71fb47625bb5ceb168e4c8e26a1a16ed34d9fc7fe92c1481579338da362cb8d9f925d7cb")
        // And one of HAP's derivations, as HAP-python's hap_hkdf computes it
        let read = HAPKeyDerivation.controlRead.derive(from: Array(0..<32))
        #expect(hex(read.bytes) == "c09403ef8aa6c5045cbd8cf9bf3e665b2caed623af2be0e87c8f80f519914d3d")
    }

    @Test func hapDerivationsUseTheirOwnSaltsAndInfos() {
        let all: [HAPKeyDerivation] = [
            .pairSetupEncryption, .pairSetupControllerSign, .pairSetupAccessorySign, .pairVerifyEncryption,
            .controlRead, .controlWrite,
        ]
        let keys = Set(all.map { hex($0.derive(from: [1, 2, 3]).bytes) })
        #expect(keys.count == all.count)
        #expect(HAPKeyDerivation.controlWrite.salt == "Control-Salt")
        #expect(HAPKeyDerivation.controlWrite.info == "Control-Write-Encryption-Key")
    }

    /// RFC 8439 section 2.8.2, through swift-crypto's ChaChaPoly.
    @Test func chaCha20Poly1305RFC8439Vector() throws {
        let key = SymmetricKey(data: Array(0x80...0x9F) as [UInt8])
        let nonce = try ChaChaPoly.Nonce(data: [0x07, 0, 0, 0] + Array(0x40...0x47) as [UInt8])
        let aad = hex("50515253c0c1c2c3c4c5c6c7")
        let plaintext = Array(
            ("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
                + "sunscreen would be it.").utf8)
        let sealed = HAPCipher.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
        let ciphertext = hex(
            """
            d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6
            3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36
            92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
            3ff4def08e4b7a9de576d26586cec64b6116
            """)
        let tag = hex("1ae10b594f09e26a7e902ecbd0600691")
        #expect(sealed == ciphertext + tag)
        #expect(try HAPCipher.open(sealed, key: key, nonce: nonce, authenticating: aad) == plaintext)
        var tampered = sealed
        tampered[3] ^= 1
        #expect {
            _ = try HAPCipher.open(tampered, key: key, nonce: nonce, authenticating: aad)
        } throws: { error in
            (error as? HAPError)?.code == .authenticationFailed
        }
    }

    @Test func noncesHaveHAPsLayout() {
        let counter = HAPNonce.counter(0x0102_0304_0506_0708)
        #expect(Array(counter) == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
        #expect(Array(HAPNonce.pairSetupM5) == [0, 0, 0, 0] + Array("PS-Msg05".utf8))
        #expect(Array(HAPNonce.pairSetupM6) == [0, 0, 0, 0] + Array("PS-Msg06".utf8))
        #expect(Array(HAPNonce.pairVerifyM2) == [0, 0, 0, 0] + Array("PV-Msg02".utf8))
        #expect(Array(HAPNonce.pairVerifyM3) == [0, 0, 0, 0] + Array("PV-Msg03".utf8))
    }
}
