import BigInt
import Crypto
import Testing

@testable import HAPProtocol

/// SRP-6a against RFC 5054 Appendix B (1024-bit group, SHA-1), and HAP's parameters against HAP-python.
@Suite struct SRPTests {
    static let salt = hex("BEB25379D1A8581EB5A727673A2441EE")
    static let clientPrivate = big("60975527 035CF2AD 1989806F 0407210B C81EDC04 E2762A56 AFD529DD DA2D4393")
    static let serverPrivate = big("E487CB59 D31AC550 471E81F0 0F6928E0 1DDA08E9 74A004F4 9E61F5D1 05284D20")

    static let rfcClient = SRPClient<Insecure.SHA1>(
        group: .rfc5054Group1024, username: Array("alice".utf8), password: Array("password123".utf8),
        privateKey: clientPrivate)

    /// B = k·v + g^b mod N: the server's public key, as the RFC computes it.
    static func serverPublicKey<H>(_ client: SRPClient<H>, serverPrivate: BigUInt) -> BigUInt {
        let group = client.group
        let v = client.verifier(salt: salt)
        return (client.multiplier * v + group.generator.power(serverPrivate, modulus: group.prime)) % group.prime
    }

    @Test func rfc5054AppendixBValues() throws {
        let client = Self.rfcClient
        // k, x, v
        #expect(client.multiplier == big("7556AA04 5AEF2CDD 07ABAF0F 665C3E81 8913186F"))
        #expect(client.passwordKey(salt: Self.salt) == big("94B7555A ABE9127C C58CCF49 93DB6CF8 4D16C124"))
        #expect(
            client.verifier(salt: Self.salt)
                == big(
                    """
                    7E273DE8 696FFC4F 4E337D05 B4B375BE B0DDE156 9E8FA00A 9886D812
                    9BADA1F1 822223CA 1A605B53 0E379BA4 729FDC59 F105B478 7E5186F5
                    C671085A 1447B52A 48CF1970 B4FB6F84 00BBF4CE BFBB1681 52E08AB5
                    EA53D15C 1AFF87B2 B9DA6E04 E058AD51 CC72BFC9 033B564E 26480D78
                    E955A5E2 9E7AB245 DB2BE315 E2099AFB
                    """))
        // A
        #expect(
            client.publicKey
                == big(
                    """
                    61D5E490 F6F1B795 47B0704C 436F523D D0E560F0 C64115BB 72557EC4
                    4352E890 3211C046 92272D8B 2D1A5358 A2CF1B6E 0BFCF99F 921530EC
                    8E393561 79EAE45E 42BA92AE ACED8251 71E1E8B9 AF6D9C03 E1327F44
                    BE087EF0 6530E69F 66615261 EEF54073 CA11CF58 58F0EDFD FE15EFEA
                    B349EF5D 76988A36 72FAC47B 0769447B
                    """))
        // B
        let serverKey = Self.serverPublicKey(client, serverPrivate: Self.serverPrivate)
        #expect(
            serverKey
                == big(
                    """
                    BD0C6151 2C692C0C B6D041FA 01BB152D 4916A1E7 7AF46AE1 05393011
                    BAF38964 DC46A067 0DD125B9 5A981652 236F99D9 B681CBF8 7837EC99
                    6C6DA044 53728610 D0C6DDB5 8B318885 D7D82C7F 8DEB75CE 7BD4FBAA
                    37089E6F 9C6059F3 88838E7A 00030B33 1EB76840 910440B1 B27AAEAE
                    EB4012B7 D7665238 A8E3FB00 4B117B58
                    """))
        // u
        #expect(client.scrambler(serverPublicKey: serverKey) == big("CE38B959 3487DA98 554ED47D 70A7AE5F 462EF019"))
        // S, the premaster secret, from the client's formula
        let premaster = big(
            """
            B0DC82BA BCF30674 AE450C02 87745E79 90A3381F 63B387AA F271A10D
            233861E3 59B48220 F7C4693C 9AE12B0A 6F67809F 0876E2D0 13800D6C
            41BB59B6 D5979B5C 00A172B4 A2A5903A 0BDCAF8A 709585EB 2AFAFA8F
            3499B200 210DCC1F 10EB3394 3CD67FC8 8A2F39A4 BE5BEC4E C0A3212D
            C346D7E4 74B29EDE 8A469FFE CA686E5A
            """)
        #expect(try client.premasterSecret(salt: Self.salt, serverPublicKey: serverKey) == premaster)
        let proof = try client.respond(salt: Self.salt, serverPublicKey: serverKey.minimalBytes)
        #expect(proof.sessionKey == Array(Insecure.SHA1.hash(data: premaster.minimalBytes)))
    }

    @Test func rejectsServerKeyDivisibleByN() {
        let client = Self.rfcClient
        for multiple in [BigUInt(0), client.group.prime, client.group.prime * 2] {
            #expect {
                _ = try client.respond(salt: Self.salt, serverPublicKey: multiple.minimalBytes)
            } throws: { error in
                (error as? HAPError)?.code == .invalidSRPParameter
            }
        }
    }

    /// The same fixed private keys with HAP's group, hash, username and a setup code: A, M1, M2 and K as
    /// HAP-python 5.2.0's `pyhap.hsrp.Server` computes them (Python, with b and the salt fixed).
    @Test func hapParametersMatchHAPPython() throws {
        let client = SRPClient<SHA512>(
            group: .rfc5054Group3072, username: Array("Pair-Setup".utf8), password: Array("031-45-154".utf8),
            privateKey: Self.clientPrivate)
        #expect(client.group.byteCount == 384)
        #expect(hex(client.publicKey.minimalBytes).hasPrefix("fab6f5d2615d1e323512e7991cc37443"))
        let serverKey = Self.serverPublicKey(client, serverPrivate: Self.serverPrivate)
        #expect(
            hex(serverKey.minimalBytes)
                == """
                6b93e4851e7d48cd9f4c5300e18ad9c50c0cd1a095bbdd144afeec30b11d7e88843470455a6af932972a012e7e4f65b7\
                792680af9a61bc812b2a4bbf26a6ae74d78ce7f59d168375a650667dc245bdf0bbaafef2d4c62591daa41d18af67c501\
                3b9d1bc8a2120f332f75ab4c8acd0739adc33cd4c9e0c9b700bf922e52fed3f3e4dbe585678e703e29000b5025428c91\
                841e46812b94ecdad8ef9b11248396da83667a22d5182e2171438633d82623e34b22e31a4fc2771833756dc4ae537090\
                b3a265cdc724b0e8ce0b822322474bba61ced39bcb68583027c9e2fb74c76b7b4b3fc2a5ab8fb0eb1d7bbd6d6489fe96\
                0249bf2166316208b2324c008572f8cef4765d51f78287bfd65c68fb0315c32ea800bdf7b6154dc5de53d5450314ed5f\
                9114a13c053f26839714856ff904c8410c35dfe4471c43819d574b8925485a69ea64eb574e22d45b7ee48f42255250df\
                82bc9cf40693586be0081d881b9ce42b2a54392485e7387798273570bf6ecb6fea0ff06e7e4033d6d4c47adfdb2bab53
                """)
        let proof = try client.respond(salt: Self.salt, serverPublicKey: serverKey.minimalBytes)
        #expect(
            hex(proof.clientProof)
                == "28039d5c7f72b20edd9dcf2523ec20f1592f824dec05da7f20e4c2ebdb5f3588"
                + "6feaef285dc6ea18d12a3471f0ba760c9ce913de62684197b1c8ca4cbd778fe8")
        #expect(
            hex(proof.sessionKey)
                == "912eb8741a983f84a47e3f8ab636719b84149fbc99db43d456dffaadb95db349"
                + "a7335581918798ac43560f931cb1a178c6607f6d77e06eafb7ea09aa0f6b5502")
        let serverProof = hex(
            "521a70584dbdfafa2f51cf19ba10b773d2036a92e1eb1b0511a05845a432e737"
                + "8efdc6868383b367202a6c2d4f56f25c1b37ae62dbf5b5a6a895de0f0d6844bd")
        #expect(proof.verifies(serverProof: serverProof))
        #expect(!proof.verifies(serverProof: Array(serverProof.dropLast()) + [0]))
    }

    @Test("the server side: RFC 5054's B, and a proof of the same password answered with the client's M2")
    func serverAgreesWithClient() throws {
        let server = SRPServer<Insecure.SHA1>(
            group: .rfc5054Group1024, username: Array("alice".utf8), password: Array("password123".utf8),
            salt: Self.salt, privateKey: Self.serverPrivate)
        #expect(server.publicKey == Self.serverPublicKey(Self.rfcClient, serverPrivate: Self.serverPrivate))
        let proof = try Self.rfcClient.respond(salt: server.salt, serverPublicKey: server.publicKey.minimalBytes)
        let (sessionKey, answer) = try server.respond(
            clientPublicKey: Self.rfcClient.publicKey.minimalBytes, clientProof: proof.clientProof)
        #expect(sessionKey == proof.sessionKey && proof.verifies(serverProof: answer))

        // HAP's group and hash, as HAP-python's server computes B (hapParametersMatchHAPPython)
        let hap = SRPServer<SHA512>(
            group: .rfc5054Group3072, username: Array("Pair-Setup".utf8), password: Array("031-45-154".utf8),
            salt: Self.salt, privateKey: Self.serverPrivate)
        #expect(hex(hap.publicKey.minimalBytes).hasPrefix("6b93e4851e7d48cd9f4c5300e18ad9c5"))
    }

    @Test("the server refuses a wrong password's proof and a client key that is 0 modulo N")
    func serverRefuses() throws {
        var generator = SystemRandomNumberGenerator()
        let server = SRPServer<SHA512>(
            group: .rfc5054Group3072, username: Array("Pair-Setup".utf8), password: Array("031-45-154".utf8),
            using: &generator)
        let wrong = SRPClient<SHA512>(
            group: .rfc5054Group3072, username: Array("Pair-Setup".utf8), password: Array("031-45-155".utf8))
        let proof = try wrong.respond(salt: server.salt, serverPublicKey: server.publicKey.minimalBytes)
        #expect {
            _ = try server.respond(clientPublicKey: wrong.publicKey.minimalBytes, clientProof: proof.clientProof)
        } throws: { ($0 as? HAPError)?.code == .authenticationFailed }
        for multiple in [BigUInt(0), server.group.prime] {
            #expect {
                _ = try server.respond(clientPublicKey: multiple.minimalBytes, clientProof: proof.clientProof)
            } throws: { ($0 as? HAPError)?.code == .invalidSRPParameter }
        }
        #expect(server.salt.count == 16)
    }

    @Test(
        "a controller that writes A, B, S and K at full length (aiohomekit, Apple) is answered in that form, also when A and B start with a zero byte"
    )
    func paddedForm() throws {
        let group = SRPGroup.rfc5054Group3072
        let username = Array("Pair-Setup".utf8)
        let password = Array("031-45-154".utf8)
        var generator = SystemRandomNumberGenerator()
        // Draw keys until both public keys are shorter than the group: the case where the forms differ.
        var server: SRPServer<SHA512>
        repeat {
            server = SRPServer<SHA512>(group: group, username: username, password: password, using: &generator)
        } while server.publicKey.minimalBytes.count == group.byteCount
        var client: SRPClient<SHA512>
        repeat {
            client = SRPClient<SHA512>(group: group, username: username, password: password, using: &generator)
        } while client.publicKey.minimalBytes.count == group.byteCount
        let pad = { (number: BigUInt) in number.paddedBytes(to: group.byteCount) }
        // As aiohomekit's SrpClient computes M1 and K (its HK_KEY_LENGTH padding)
        let secret = try client.premasterSecret(salt: server.salt, serverPublicKey: server.publicKey)
        let sessionKey = Array(SHA512.hash(data: pad(secret)))
        let groupHash = zip(
            SHA512.hash(data: group.prime.minimalBytes), SHA512.hash(data: group.generator.minimalBytes)
        )
        .map { $0 ^ $1 }
        var m1 = SHA512()
        for part in [
            groupHash, Array(SHA512.hash(data: username)), server.salt, pad(client.publicKey),
            pad(server.publicKey), sessionKey,
        ] { m1.update(data: part) }
        let clientProof = Array(m1.finalize())
        let (serverKey, serverProof) = try server.respond(
            clientPublicKey: pad(client.publicKey), clientProof: clientProof)
        #expect(serverKey == sessionKey)
        #expect(serverProof == Array(SHA512.hash(data: pad(client.publicKey) + clientProof + sessionKey)))
        // And the minimal form (HAP-python's, SRPClient's) with the same keys
        let minimal = try client.respond(salt: server.salt, serverPublicKey: pad(server.publicKey))
        let (minimalKey, minimalAnswer) = try server.respond(
            clientPublicKey: client.publicKey.minimalBytes, clientProof: minimal.clientProof)
        #expect(minimalKey == minimal.sessionKey && minimal.verifies(serverProof: minimalAnswer))
    }

    @Test func privateKeyComesFromTheInjectedGenerator() {
        var first = FixedBytesGenerator(bytes: [1, 2, 3])
        var second = FixedBytesGenerator(bytes: [1, 2, 3])
        let a = SRPClient<Insecure.SHA1>(
            group: .rfc5054Group1024, username: [], password: [], using: &first)
        let b = SRPClient<Insecure.SHA1>(
            group: .rfc5054Group1024, username: [], password: [], using: &second)
        #expect(a.publicKey == b.publicKey)
    }
}
