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
    /// The pair verify under way.
    private var verify: AccessoryPairVerify?

    var publicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }

    private func errorAnswer(state: UInt8) -> [UInt8]? {
        guard let injectedError else { return nil }
        var message = TLV8()
        message.append(.state, [state])
        message.append(.error, [injectedError.code])
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
        guard var exchange = setup else { return AccessoryPairSetup.Answer.failure(.unknown, state: state + 1).body }
        let answer = exchange.handle(body)
        setup = exchange
        if case .paired(let controller) = answer.outcome {
            (controllerIdentifier, controllerPublicKey) = (controller.identifier, controller.publicKey)
        }
        return answer.body
    }

    mutating func pairVerify(_ body: [UInt8]) throws -> [UInt8] {
        let state = try TLV8(decoding: body)[.state]?.first ?? 0
        if let answer = errorAnswer(state: state + 1) { return answer }
        if state == 1 {
            verify = AccessoryPairVerify(accessory: AccessoryIdentity(identifier: identifier, signingKey: signingKey))
        }
        guard var exchange = verify else { return AccessoryPairVerify.Answer.failure(.unknown, state: state + 1).body }
        let (known, knownKey) = (controllerIdentifier, controllerPublicKey)
        let answer = exchange.handle(body) { identifier in
            identifier == known ? PairedController(identifier: known, publicKey: knownKey, isAdministrator: true) : nil
        }
        verify = exchange
        if case .verified(_, let keys) = answer.outcome { sessionKeys = keys }
        return answer.body
    }

    /// The session keys of the last pair verify.
    private(set) var sessionKeys: SessionKeys?
}
