import BigInt
import Crypto

/// The controller's side of HAP pair setup (M1 to M6), as a state machine over TLV8 bodies with no I/O.
///
/// `start()` gives M1; each answer of the accessory goes to `handle(_:)`, which gives the next body to
/// POST to /pair-setup, and after M6 the accessory's pairing identifier and long-term public key. An
/// error item in an answer is thrown as a `PairingError` (a wrong setup code is `.authentication` at M4);
/// a malformed answer or a proof that does not verify is a `HAPError`. After a throw the exchange is over.
package struct PairSetup: Sendable {
    /// The SRP username HAP uses.
    package static let username = "Pair-Setup"

    private enum Phase: Sendable {
        case initial
        case awaitingM2
        case awaitingM4(SRPProof)
        case awaitingM6(SRPProof)
        case finished
    }

    private let controller: ControllerIdentity
    private let setupCode: String
    /// The SRP private key a; A = g^a is computed when M2 arrives, so that an accessory's early error
    /// (busy, unavailable, backoff) costs no 3072-bit exponentiation.
    private let srpPrivateKey: BigUInt
    private var phase = Phase.initial

    /// Prepares a pair setup with the accessory's setup code ("XXX-XX-XXX") and an SRP private key
    /// from the system's random number generator.
    ///
    /// - Throws: `.invalidSetupCode` when the code is not three digits, two digits and three digits
    ///   separated by dashes.
    package init(setupCode: String, controller: ControllerIdentity) throws {
        try Self.validate(setupCode: setupCode)
        self.controller = controller
        self.setupCode = setupCode
        var generator = SystemRandomNumberGenerator()
        srpPrivateKey = SRPClient<SHA512>.randomPrivateKey(using: &generator)
    }

    /// Checks the "XXX-XX-XXX" format of a setup code.
    package static func validate(setupCode: String) throws {
        let groups = setupCode.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [3, 2, 3], groups.allSatisfy({ $0.allSatisfy { "0"..."9" ~= $0 } }) else {
            throw HAPError(.invalidSetupCode, "a setup code is XXX-XX-XXX with digits")
        }
    }

    /// M1: the request that starts pair setup.
    package mutating func start() -> [UInt8] {
        phase = .awaitingM2
        let message: TLV8 = [(.state, [1]), (.method, [PairingMethod.pairSetup.rawValue])]
        return message.encoded()
    }

    /// Takes the accessory's answer (M2, M4 or M6) and gives the next body to send or, after M6, the
    /// accessory's pairing.
    package mutating func handle(_ body: [UInt8]) throws -> PairingStep<AccessoryPairing> {
        let current = phase
        phase = .finished
        switch current {
        case .awaitingM2:
            let message = try readPairingAnswer(body, expectedState: 2)
            let salt = try requiredItem(.salt, in: message, "M2")
            let serverKey = try requiredItem(.publicKey, in: message, "M2")
            let srp = SRPClient<SHA512>(
                group: .rfc5054Group3072, username: Array(Self.username.utf8), password: Array(setupCode.utf8),
                privateKey: srpPrivateKey)
            let proof = try srp.respond(salt: salt, serverPublicKey: serverKey)
            let m3: TLV8 = [(.state, [3]), (.publicKey, srp.publicKey.minimalBytes), (.proof, proof.clientProof)]
            phase = .awaitingM4(proof)
            return .send(m3.encoded())
        case .awaitingM4(let proof):
            let message = try readPairingAnswer(body, expectedState: 4)
            let serverProof = try requiredItem(.proof, in: message, "M4")
            guard proof.verifies(serverProof: serverProof) else {
                throw HAPError(.invalidSignature, "the accessory's SRP proof M2 did not verify")
            }
            let signingMaterial = HAPKeyDerivation.pairSetupControllerSign.derive(from: proof.sessionKey).bytes
            let info = signingMaterial + Array(controller.identifier.utf8) + controller.publicKey
            let signature = Array(try controller.signingKey.signature(for: info))
            let subTLV: TLV8 = [
                (.identifier, Array(controller.identifier.utf8)), (.publicKey, controller.publicKey),
                (.signature, signature),
            ]
            let key = HAPKeyDerivation.pairSetupEncryption.derive(from: proof.sessionKey)
            let m5: TLV8 = [
                (.state, [5]),
                (.encryptedData, HAPCipher.seal(subTLV.encoded(), key: key, nonce: HAPNonce.pairSetupM5)),
            ]
            phase = .awaitingM6(proof)
            return .send(m5.encoded())
        case .awaitingM6(let proof):
            let message = try readPairingAnswer(body, expectedState: 6)
            let sealed = try requiredItem(.encryptedData, in: message, "M6")
            let key = HAPKeyDerivation.pairSetupEncryption.derive(from: proof.sessionKey)
            let inner = try TLV8(decoding: HAPCipher.open(sealed, key: key, nonce: HAPNonce.pairSetupM6))
            let identifier = try requiredItem(.identifier, in: inner, "M6's encrypted data")
            let publicKey = try requiredItem(.publicKey, in: inner, "M6's encrypted data")
            let signature = try requiredItem(.signature, in: inner, "M6's encrypted data")
            let signingMaterial = HAPKeyDerivation.pairSetupAccessorySign.derive(from: proof.sessionKey).bytes
            try verifySignature(
                signature, of: signingMaterial + identifier + publicKey, publicKey: publicKey,
                "the accessory's M6 signature")
            guard let name = String(validating: identifier, as: UTF8.self) else {
                throw HAPError(.unexpectedMessage, "the accessory's pairing identifier is not UTF-8")
            }
            return .done(AccessoryPairing(identifier: name, publicKey: publicKey))
        case .initial, .finished:
            throw HAPError(.unexpectedMessage, "pair setup is not waiting for an answer")
        }
    }
}
