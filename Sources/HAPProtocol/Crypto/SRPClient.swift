import BigInt
import Crypto

/// The client side of SRP-6a (RFC 2945, RFC 5054), generic over the group and the hash so that the same
/// code is checked against RFC 5054's SHA-1 test vectors and used by HAP with the 3072-bit group and
/// SHA-512.
///
/// Which values are padded follows RFC 5054 and the HAP peers (HAP-python, aiohomekit):
/// `k = H(N | PAD(g))` and `u = H(PAD(A) | PAD(B))` pad to the group's length; `x = H(s | H(I | ":" | P))`;
/// `S = (B - k·g^x)^(a + u·x) mod N`; `K = H(S)`; `M1 = H(H(N) xor H(g) | H(I) | s | A | B | K)`;
/// `M2 = H(A | M1 | K)`. In `K`, `M1` and `M2`, A, B, S and K are written as their minimal big-endian
/// bytes (no leading zeros), as HAP-python's accessory server reads them (aiohomekit and Apple write
/// them at the group's full length; ``SRPServer`` takes both).
package struct SRPClient<Hash: HashFunction>: Sendable {
    /// The group all arithmetic is done in.
    package let group: SRPGroup
    /// The username I (HAP: "Pair-Setup").
    package let username: [UInt8]
    private let password: [UInt8]
    private let privateKey: BigUInt
    /// The client's public key A = g^a mod N.
    package let publicKey: BigUInt

    /// Makes a client with the private key a (``randomPrivateKey(using:)``, or a test vector's).
    package init(group: SRPGroup, username: [UInt8], password: [UInt8], privateKey: BigUInt) {
        self.group = group
        self.username = username
        self.password = password
        self.privateKey = privateKey
        self.publicKey = group.generator.modularPower(privateKey, modulus: group.prime)
    }

    /// Makes a client whose private key a comes from the system's random number generator.
    package init(group: SRPGroup, username: [UInt8], password: [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        self.init(
            group: group, username: username, password: password, privateKey: Self.randomPrivateKey(using: &generator))
    }

    /// A 256-bit private key a drawn from `generator`.
    static func randomPrivateKey(using generator: inout some RandomNumberGenerator) -> BigUInt {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices {
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
        }
        return BigUInt(bigEndian: bytes)
    }

    /// The multiplier k = H(N | PAD(g)).
    var multiplier: BigUInt { SRP<Hash>.multiplier(group) }

    /// The private key x = H(s | H(I | ":" | P)).
    func passwordKey(salt: [UInt8]) -> BigUInt {
        let inner = SRP<Hash>.hash(username, Array(":".utf8), password)
        return BigUInt(bigEndian: SRP<Hash>.hash(salt, inner))
    }

    /// The scrambling parameter u = H(PAD(A) | PAD(B)).
    func scrambler(serverPublicKey: BigUInt) -> BigUInt {
        SRP<Hash>.scrambler(group, publicKey, serverPublicKey)
    }

    /// The premaster secret S = (B - k·g^x)^(a + u·x) mod N.
    ///
    /// - Throws: `.invalidSRPParameter` when B % N == 0 or u == 0 (RFC 5054 2.5.4: the client must abort).
    func premasterSecret(salt: [UInt8], serverPublicKey: BigUInt) throws -> BigUInt {
        let prime = group.prime
        guard !(serverPublicKey % prime).isZero else {
            throw HAPError(.invalidSRPParameter, "the accessory's SRP public key B is 0 modulo N")
        }
        let u = scrambler(serverPublicKey: serverPublicKey)
        guard !u.isZero else {
            throw HAPError(.invalidSRPParameter, "the SRP scrambling parameter u is 0")
        }
        let x = passwordKey(salt: salt)
        let kgx = (multiplier * group.generator.modularPower(x, modulus: prime)) % prime
        let base = (serverPublicKey % prime + prime - kgx) % prime
        return base.modularPower(privateKey + u * x, modulus: prime)
    }

    /// Computes the session key K and both proofs from the server's salt and public key.
    ///
    /// - Throws: `.invalidSRPParameter` when B % N == 0, u == 0 or the salt is empty.
    package func respond(salt: [UInt8], serverPublicKey: [UInt8]) throws -> SRPProof {
        guard !salt.isEmpty else {
            throw HAPError(.invalidSRPParameter, "the accessory sent an empty SRP salt")
        }
        guard serverPublicKey.count <= group.byteCount else {
            throw HAPError(.invalidSRPParameter, "the accessory's SRP public key is longer than the group")
        }
        let b = BigUInt(bigEndian: serverPublicKey)
        let secret = try premasterSecret(salt: salt, serverPublicKey: b)
        let sessionKey = BigUInt(bigEndian: SRP<Hash>.hash(secret.minimalBytes)).minimalBytes
        let clientProof = SRP<Hash>.clientProof(
            group, username: username, salt: salt, a: publicKey, b: b, sessionKey: sessionKey)
        let serverProof = SRP<Hash>.hash(publicKey.minimalBytes, clientProof, sessionKey)
        return SRPProof(sessionKey: sessionKey, clientProof: clientProof, expectedServerProof: serverProof)
    }
}

/// What the SRP client computes once it has the server's salt and public key.
package struct SRPProof: Sendable {
    /// K = H(S), as minimal big-endian bytes: the input of HAP's HKDF derivations.
    let sessionKey: [UInt8]
    /// M1, the client's proof, sent to the server.
    let clientProof: [UInt8]
    /// M2, the proof the server must answer with.
    let expectedServerProof: [UInt8]

    /// Whether the server's proof M2 is the expected one (compared in constant time).
    package func verifies(serverProof: [UInt8]) -> Bool {
        constantTimeEquals(serverProof, expectedServerProof)
    }
}

/// Compares two byte strings without an early exit, so the time taken does not tell where they differ.
func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in lhs.indices {
        difference |= lhs[index] ^ rhs[index]
    }
    return difference == 0
}
