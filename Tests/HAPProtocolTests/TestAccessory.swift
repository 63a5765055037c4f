import BigInt
import Crypto

@testable import HAPProtocol

/// The accessory's side of pair setup and pair verify, written from the HAP specification for the tests
/// of the controller's state machines (the real peer is HAP-python, in `HAPPythonTests`).
struct TestAccessory {
    var identifier = "AA:BB:CC:DD:EE:FF"
    let signingKey = Curve25519.Signing.PrivateKey()
    var setupCode = "031-45-154"
    /// An error item put in the next answer instead of the normal one.
    var injectedError: (code: UInt8, retryDelay: [UInt8]?)?
    private(set) var controllerIdentifier: [UInt8] = []
    private(set) var controllerPublicKey: [UInt8] = []

    /// The pair setup under way (the module's own accessory side).
    private var setup: AccessoryPairSetup?
    private var verifyKeys: (own: Curve25519.KeyAgreement.PrivateKey, shared: [UInt8], peer: [UInt8])?

    var publicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }

    private func errorAnswer(state: UInt8) -> [UInt8]? {
        guard let injectedError else { return nil }
        var message = TLV8()
        message.append(.state, byte: state)
        message.append(.error, byte: injectedError.code)
        if let delay = injectedError.retryDelay { message.append(.retryDelay, delay) }
        return message.encoded()
    }

    mutating func pairSetup(_ body: [UInt8]) throws -> [UInt8] {
        let state = try TLV8(decoding: body)[.state]?.first ?? 0
        if let answer = errorAnswer(state: state + 1) { return answer }
        if state == 1 {
            setup = try AccessoryPairSetup(
                setupCode: setupCode, accessory: AccessoryIdentity(identifier: identifier, signingKey: signingKey))
        }
        guard var exchange = setup else { return AccessoryPairSetup.failure(.unknown, state: state + 1).body }
        let answer = exchange.handle(body)
        setup = exchange
        if case .paired(let controller) = answer.outcome {
            (controllerIdentifier, controllerPublicKey) = (controller.identifier, controller.publicKey)
        }
        return answer.body
    }

    mutating func pairVerify(_ body: [UInt8]) throws -> [UInt8] {
        let request = try TLV8(decoding: body)
        let state = request[.state]?.first ?? 0
        if let answer = errorAnswer(state: state + 1) { return answer }
        switch state {
        case 1:
            let own = Curve25519.KeyAgreement.PrivateKey()
            let peer = request[.publicKey]!
            let shared = try own.sharedSecretFromKeyAgreement(
                with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer)
            ).withUnsafeBytes { Array($0) }
            verifyKeys = (own, shared, peer)
            let ownPublic = Array(own.publicKey.rawRepresentation)
            let signature = Array(try signingKey.signature(for: ownPublic + Array(identifier.utf8) + peer))
            let inner: TLV8 = [(.identifier, Array(identifier.utf8)), (.signature, signature)]
            let key = HAPKeyDerivation.pairVerifyEncryption.derive(from: shared)
            let sealed = HAPCipher.seal(inner.encoded(), key: key, nonce: HAPNonce.pairVerifyM2)
            return TLV8([.init(.state, [2]), .init(.publicKey, ownPublic), .init(.encryptedData, sealed)]).encoded()
        case 3:
            let keys = verifyKeys!
            let key = HAPKeyDerivation.pairVerifyEncryption.derive(from: keys.shared)
            let inner = try TLV8(
                decoding: HAPCipher.open(request[.encryptedData]!, key: key, nonce: HAPNonce.pairVerifyM3))
            let info = keys.peer + inner[.identifier]! + Array(keys.own.publicKey.rawRepresentation)
            guard inner[.identifier] == controllerIdentifier,
                (try? verifySignature(inner[.signature]!, of: info, publicKey: controllerPublicKey, "")) != nil
            else {
                return TLV8([.init(.state, [4]), .init(.error, [2])]).encoded()
            }
            return TLV8([.init(.state, [4])]).encoded()
        default:
            return TLV8([.init(.state, [state + 1]), .init(.error, [1])]).encoded()
        }
    }

    /// The shared secret of the last pair verify.
    var verifySharedSecret: [UInt8] { verifyKeys?.shared ?? [] }
}
