import BigInt
import Crypto

/// The server side of SRP-6a, as the accessory runs it in pair setup (M2 and M4): the same group, hash
/// and byte conventions as ``SRPClient`` (see there), from the server's private key b.
///
/// `v = g^x mod N`; `B = (k·v + g^b) mod N`, sent at the group's full length; on the client's A and
/// M1: `u = H(PAD(A) | PAD(B))`, `S = (A·v^u)^b mod N`, `K = H(S)`, the client's proof checked in
/// constant time (in both forms controllers write, see ``respond(clientPublicKey:clientProof:)``),
/// and the answer `M2 = H(A | M1 | K)`. No SRP library is among the packages this project may use (swift-crypto has
/// none), hence the arithmetic on BigInt here and in ``SRPClient``.
package struct SRPServer<Hash: HashFunction>: Sendable {
    /// The group all arithmetic is done in.
    package let group: SRPGroup
    /// The salt s, sent to the client with B.
    package let salt: [UInt8]
    /// The server's public key B = (k·v + g^b) mod N.
    package let publicKey: BigUInt
    private let username: [UInt8]
    private let verifier: BigUInt
    private let privateKey: BigUInt

    /// Makes a server for `password` (HAP: the setup code) with a given salt and private key b: for
    /// test vectors.
    package init(group: SRPGroup, username: [UInt8], password: [UInt8], salt: [UInt8], privateKey: BigUInt) {
        self.group = group
        self.username = username
        self.salt = salt
        self.privateKey = privateKey
        let x = BigUInt(bigEndian: SRP<Hash>.hash(salt, SRP<Hash>.hash(username, Array(":".utf8), password)))
        verifier = group.generator.modularPower(x, modulus: group.prime)
        publicKey =
            (SRP<Hash>.multiplier(group) * verifier + group.generator.modularPower(privateKey, modulus: group.prime))
            % group.prime
    }

    /// Makes a server whose 16-byte salt and 256-bit private key b are drawn from `generator`.
    package init(
        group: SRPGroup, username: [UInt8], password: [UInt8], using generator: inout some RandomNumberGenerator
    ) {
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let privateKey = SRPClient<Hash>.randomPrivateKey(using: &generator)
        self.init(group: group, username: username, password: password, salt: salt, privateKey: privateKey)
    }

    /// Checks the client's public key A and proof M1; returns the session key K and the answer M2.
    ///
    /// - Throws: `.invalidSRPParameter` when A % N == 0 or A is longer than the group (RFC 5054
    ///   2.5.4: the server must abort), `.authenticationFailed` when M1 is not the proof of the same
    ///   password (HAP: a wrong setup code).
    package func respond(clientPublicKey aBytes: [UInt8], clientProof: [UInt8]) throws -> (
        sessionKey: [UInt8], serverProof: [UInt8]
    ) {
        guard aBytes.count <= group.byteCount else {
            throw HAPError(.invalidSRPParameter, "the controller's SRP public key is longer than the group")
        }
        let a = BigUInt(bigEndian: aBytes)
        guard !(a % group.prime).isZero else {
            throw HAPError(.invalidSRPParameter, "the controller's SRP public key A is 0 modulo N")
        }
        let u = SRP<Hash>.scrambler(group, a, publicKey)
        let secret = (a * verifier.modularPower(u, modulus: group.prime)).modularPower(privateKey, modulus: group.prime)
        // Controllers write A, B and S in M1 and K either at the group's full length (aiohomekit,
        // Apple's) or without leading zero bytes (HAP-python's SRP, and ``SRPClient``); the two
        // differ once in about 256 pairings, so the proof is checked in both forms, and the one that
        // matches gives K and M2.
        for form in [SRPForm.padded, .minimal] {
            let sessionKey =
                form == .padded
                ? SRP<Hash>.hash(secret.paddedBytes(to: group.byteCount))
                : BigUInt(bigEndian: SRP<Hash>.hash(secret.minimalBytes)).minimalBytes
            let expected = SRP<Hash>.clientProof(
                group, username: username, salt: salt, a: a, b: publicKey, sessionKey: sessionKey, form: form)
            if constantTimeEquals(clientProof, expected) {
                return (sessionKey, SRP<Hash>.hash(form.bytes(of: a, group), expected, sessionKey))
            }
        }
        throw HAPError(.authenticationFailed, "the controller's SRP proof M1 did not verify")
    }
}

/// How SRP's numbers are written into its hashes: at the group's full length, or without leading zeros.
enum SRPForm {
    case padded, minimal

    func bytes(of number: BigUInt, _ group: SRPGroup) -> [UInt8] {
        self == .padded ? number.paddedBytes(to: group.byteCount) : number.minimalBytes
    }
}

/// The formulas both sides of SRP-6a share (``SRPClient``, ``SRPServer``).
enum SRP<Hash: HashFunction> {
    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var hasher = Hash()
        for part in parts { hasher.update(data: part) }
        return Array(hasher.finalize())
    }

    /// k = H(N | PAD(g)).
    static func multiplier(_ group: SRPGroup) -> BigUInt {
        BigUInt(bigEndian: hash(group.prime.minimalBytes, group.generator.paddedBytes(to: group.byteCount)))
    }

    /// u = H(PAD(A) | PAD(B)).
    static func scrambler(_ group: SRPGroup, _ a: BigUInt, _ b: BigUInt) -> BigUInt {
        BigUInt(bigEndian: hash(a.paddedBytes(to: group.byteCount), b.paddedBytes(to: group.byteCount)))
    }

    /// M1 = H(H(N) xor H(g) | H(I) | s | A | B | K), A and B in `form`.
    static func clientProof(
        _ group: SRPGroup, username: [UInt8], salt: [UInt8], a: BigUInt, b: BigUInt, sessionKey: [UInt8],
        form: SRPForm = .minimal
    ) -> [UInt8] {
        let groupHash = zip(hash(group.prime.minimalBytes), hash(group.generator.minimalBytes)).map { $0 ^ $1 }
        return hash(groupHash, hash(username), salt, form.bytes(of: a, group), form.bytes(of: b, group), sessionKey)
    }
}
