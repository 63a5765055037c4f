import BigInt

/// An SRP group: a safe prime N and a generator g (RFC 5054, appendix A).
package struct SRPGroup: Sendable, Equatable {
    /// The safe prime modulus.
    let prime: BigUInt
    /// The generator.
    package let generator: BigUInt
    /// The length of N in bytes: what `PAD()` pads to.
    let byteCount: Int

    /// Makes a group from the hexadecimal text of its modulus (whitespace ignored) and its generator.
    init(primeHex: String, generator: BigUInt) {
        prime = BigUInt(primeHex.filter { !$0.isWhitespace }, radix: 16)!
        self.generator = generator
        byteCount = (prime.bitWidth - prime.leadingZeroBitCount + 7) / 8
    }

    /// RFC 5054's 3072-bit group (g = 5): the group HAP's pair setup uses.
    package static let rfc5054Group3072 = SRPGroup(
        primeHex: """
            FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1 29024E08
            8A67CC74 020BBEA6 3B139B22 514A0879 8E3404DD EF9519B3 CD3A431B
            302B0A6D F25F1437 4FE1356D 6D51C245 E485B576 625E7EC6 F44C42E9
            A637ED6B 0BFF5CB6 F406B7ED EE386BFB 5A899FA5 AE9F2411 7C4B1FE6
            49286651 ECE45B3D C2007CB8 A163BF05 98DA4836 1C55D39A 69163FA8
            FD24CF5F 83655D23 DCA3AD96 1C62F356 208552BB 9ED52907 7096966D
            670C354E 4ABC9804 F1746C08 CA18217C 32905E46 2E36CE3B E39E772C
            180E8603 9B2783A2 EC07A28F B5C55DF0 6F4C52C9 DE2BCBF6 95581718
            3995497C EA956AE5 15D22618 98FA0510 15728E5A 8AAAC42D AD33170D
            04507A33 A85521AB DF1CBA64 ECFB8504 58DBEF0A 8AEA7157 5D060C7D
            B3970F85 A6E1E4C7 ABF5AE8C DB0933D7 1E8C94E0 4A25619D CEE3D226
            1AD2EE6B F12FFA06 D98A0864 D8760273 3EC86A64 521F2B18 177B200C
            BBE11757 7A615D6C 770988C0 BAD946E2 08E24FA0 74E5AB31 43DB5BFC
            E0FD108E 4B82D120 A93AD2CA FFFFFFFF FFFFFFFF
            """,
        generator: 5)
}

extension BigUInt {
    /// The big-endian bytes without leading zeros (zero is one 0 byte), as HAP peers put numbers on the wire.
    var minimalBytes: [UInt8] {
        let bytes = [UInt8](serialize())
        return bytes.isEmpty ? [0] : bytes
    }

    /// The big-endian bytes left-padded with zeros to `count` bytes: RFC 5054's `PAD()`.
    func paddedBytes(to count: Int) -> [UInt8] {
        let bytes = [UInt8](serialize())
        guard bytes.count < count else { return bytes }
        return [UInt8](repeating: 0, count: count - bytes.count) + bytes
    }

    /// A number from big-endian bytes.
    init(bigEndian bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { BigUInt($0) }
    }
}
