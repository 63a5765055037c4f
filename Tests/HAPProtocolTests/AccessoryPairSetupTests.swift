import Crypto
import Testing

@testable import HAPProtocol

/// The accessory's side of pair setup against the controller's (PairSetup), both from this module.
struct AccessoryPairSetupTests {
    let controller = ControllerIdentity(
        identifier: "3F9C6A10-5B1E-4C2A-9D47-0E8B2F6A1C33", signingKey: Curve25519.Signing.PrivateKey())
    let accessory = AccessoryIdentity(identifier: "1A:2B:3C:4D:5E:6F", signingKey: Curve25519.Signing.PrivateKey())

    /// Runs the controller's side against `server` until either ends; the controller's result and
    /// the accessory's last outcome.
    func exchange(_ client: inout PairSetup, _ server: inout AccessoryPairSetup) -> (
        Result<AccessoryPairing, any Error>, AccessoryPairSetup.Outcome?
    ) {
        var request = client.start()
        while true {
            let answer = server.handle(request)
            do {
                switch try client.handle(answer.body) {
                case .send(let next): request = next
                case .done(let pairing): return (.success(pairing), answer.outcome)
                }
            } catch {
                return (.failure(error), answer.outcome)
            }
        }
    }

    @Test("the right setup code pairs: each side keeps the other's identifier and long-term key")
    func pairs() throws {
        var client = try PairSetup(setupCode: "031-45-154", controller: controller)
        var server = try AccessoryPairSetup(setupCode: "031-45-154", accessory: accessory)
        let (pairing, outcome) = exchange(&client, &server)
        #expect(try pairing.get() == AccessoryPairing(identifier: accessory.identifier, publicKey: accessory.publicKey))
        #expect(
            outcome
                == .paired(
                    PairedController(
                        identifier: Array(controller.identifier.utf8), publicKey: controller.publicKey,
                        isAdministrator: true)))
        // The exchange is over: anything more is refused
        #expect(server.handle(client.start()).outcome == .failed(.unknown, state: 2))
    }

    @Test("a wrong setup code is refused at M4 with kTLVError_Authentication")
    func wrongCode() throws {
        var client = try PairSetup(setupCode: "031-45-155", controller: controller)
        var server = try AccessoryPairSetup(setupCode: "031-45-154", accessory: accessory)
        let (pairing, outcome) = exchange(&client, &server)
        #expect(throws: PairingError(code: .authentication, state: 4, retryDelay: nil)) { try pairing.get() }
        #expect(outcome == .failed(.authentication, state: 4))
    }

    @Test("out of order, malformed or tampered: an error answer, and the exchange ends")
    func refusals() throws {
        var early = try AccessoryPairSetup(setupCode: "031-45-154", accessory: accessory)
        #expect(early.handle(TLV8([.init(.state, [3])]).encoded()).outcome == .failed(.unknown, state: 4))
        var garbage = try AccessoryPairSetup(setupCode: "031-45-154", accessory: accessory)
        #expect(garbage.handle([0x06, 0x05, 0x01]).outcome == .failed(.unknown, state: 2))

        // M5 with one byte of its encrypted data changed
        var client = try PairSetup(setupCode: "031-45-154", controller: controller)
        var server = try AccessoryPairSetup(setupCode: "031-45-154", accessory: accessory)
        guard case .send(let m3) = try client.handle(server.handle(client.start()).body),
            case .send(let m5) = try client.handle(server.handle(m3).body)
        else {
            Issue.record("pair setup ended before M5")
            return
        }
        var tampered = try TLV8(decoding: m5)
        var sealed = try #require(tampered[.encryptedData])
        sealed[0] ^= 1
        tampered = TLV8([.init(.state, [5]), .init(.encryptedData, sealed)])
        #expect(server.handle(tampered.encoded()).outcome == .failed(.authentication, state: 6))
        #expect(throws: HAPError.self) { try AccessoryPairSetup(setupCode: "12345678", accessory: accessory) }
    }

    @Test("pair verify: a paired controller gets the session's keys, any other is refused at M4")
    func verify() throws {
        let pairing = AccessoryPairing(identifier: accessory.identifier, publicKey: accessory.publicKey)
        let stored = PairedController(
            identifier: Array(controller.identifier.utf8), publicKey: controller.publicKey, isAdministrator: false)
        for known in [true, false] {
            var client = PairVerify(controller: controller, accessory: pairing)
            var server = AccessoryPairVerify(accessory: accessory)
            let m2 = server.handle(client.start()) { _ in nil }
            guard case .send(let m3) = try client.handle(m2.body) else {
                Issue.record("pair verify ended before M3")
                return
            }
            let m4 = server.handle(m3) { $0 == stored.identifier && known ? stored : nil }
            if known {
                guard case .verified(let who, let keys) = m4.outcome,
                    case .done(let clientKeys) = try client.handle(m4.body)
                else {
                    Issue.record("pair verify did not end verified")
                    return
                }
                #expect(who == stored)
                var sending = SecureSession.controller(clientKeys)
                var receiving = SecureSession.accessory(keys)
                #expect(try receiving.decrypt(try sending.encrypt([1, 2, 3])) == [1, 2, 3])
            } else {
                #expect(throws: PairingError(code: .authentication, state: 4, retryDelay: nil)) {
                    try client.handle(m4.body)
                }
            }
        }
    }
}
