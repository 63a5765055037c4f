import BigInt

@testable import HAPProtocol

/// The accessory's side of the protocol, for tests that play the accessory.
extension SRPGroup {
    /// RFC 5054's 1024-bit group (g = 2): only for checking the arithmetic against the RFC's test vectors.
    static let rfc5054Group1024 = SRPGroup(
        primeHex: """
            EEAF0AB9 ADB38DD6 9C33F80A FA8FC5E8 60726187 75FF3C0B 9EA2314C
            9C256576 D674DF74 96EA81D3 383B4813 D692C6E0 E0D5D8E2 50B98BE4
            8E495C1D 6089DAD1 5DC7D7B4 6154D6B6 CE8EF4AD 69B15D49 82559B29
            7BCF1885 C529F566 660E57EC 68EDBC3C 05726CC0 2FD4CBF4 976EAA9A
            FD5138FE 8376435B 9FC61D2F C0EB06E3
            """,
        generator: 2)
}

extension SRPClient {
    /// A client whose 256-bit private key a is drawn from `generator`.
    init(group: SRPGroup, username: [UInt8], password: [UInt8], using generator: inout some RandomNumberGenerator) {
        self.init(
            group: group, username: username, password: password, privateKey: Self.randomPrivateKey(using: &generator))
    }

    /// The verifier v = g^x mod N that a server stores (used by tests to play the server).
    func verifier(salt: [UInt8]) -> BigUInt {
        group.generator.power(passwordKey(salt: salt), modulus: group.prime)
    }
}
