import Crypto
import Testing

@testable import HAPProtocol

@Suite struct PairingTests {
    static let controller = ControllerIdentity(
        identifier: "5C1E6E8A-6B6E-4D3A-9F0B-2C1D0E0F1A2B", signingKey: Curve25519.Signing.PrivateKey())

    /// Runs a pairing state machine against an answering function until it is done.
    static func run<Result>(
        start: () -> [UInt8], handle: ([UInt8]) throws -> PairingStep<Result>, answer: ([UInt8]) throws -> [UInt8]
    ) throws -> Result {
        var body = start()
        for _ in 0..<4 {
            switch try handle(try answer(body)) {
            case .send(let next): body = next
            case .done(let result): return result
            }
        }
        throw HAPError(.unexpectedMessage, "too many steps")
    }

    @Test func setupThenVerifyGivesMatchingSessionKeys() throws {
        var accessory = TestAccessory()
        // Given a pair setup with the right code
        var setup = try PairSetup(setupCode: "031-45-154", controller: Self.controller)
        let pairing = try Self.run(start: { setup.start() }, handle: { try setup.handle($0) }) {
            try accessory.pairSetup($0)
        }
        // Then the controller has the accessory's id and LTPK, and the accessory has the controller's
        #expect(pairing == AccessoryPairing(identifier: "AA:BB:CC:DD:EE:FF", publicKey: accessory.publicKey))
        #expect(accessory.controllerIdentifier == Array(Self.controller.identifier.utf8))
        #expect(accessory.controllerPublicKey == Self.controller.publicKey)

        // When verifying
        var verify = PairVerify(controller: Self.controller, accessory: pairing)
        let keys = try Self.run(start: { verify.start() }, handle: { try verify.handle($0) }) {
            try accessory.pairVerify($0)
        }
        // Then both ends derive the same session keys
        var controllerSession = SecureSession.controller(keys)
        var accessorySession = SecureSession.accessory(try #require(accessory.sessionKeys))
        let request = Array("GET /accessories HTTP/1.1\r\n\r\n".utf8)
        #expect(try accessorySession.decrypt(try controllerSession.encrypt(request)) == request)
    }

    @Test func wrongSetupCodeIsAuthenticationError() throws {
        var accessory = TestAccessory()
        var setup = try PairSetup(setupCode: "111-22-333", controller: Self.controller)
        #expect {
            _ = try Self.run(start: { setup.start() }, handle: { try setup.handle($0) }) {
                try accessory.pairSetup($0)
            }
        } throws: { error in
            let error = error as? PairingError
            return error?.code == .authentication && error?.state == 4
        }
    }

    @Test func backoffCarriesTheRetryDelay() throws {
        var accessory = TestAccessory()
        accessory.injectedError = (3, [0x2C, 0x01])
        var setup = try PairSetup(setupCode: "031-45-154", controller: Self.controller)
        #expect {
            _ = try setup.handle(try accessory.pairSetup(setup.start()))
        } throws: { error in
            error as? PairingError == PairingError(code: .backoff, state: 2, retryDelay: 300)
        }
    }

    @Test(arguments: [
        (UInt8(1), PairingError.Code.unknown), (2, .authentication), (4, .maxPeers), (5, .maxTries),
        (6, .unavailable), (7, .busy),
    ])
    func errorCodesAreMapped(raw: UInt8, code: PairingError.Code) throws {
        var accessory = TestAccessory()
        accessory.injectedError = (raw, nil)
        var setup = try PairSetup(setupCode: "031-45-154", controller: Self.controller)
        #expect {
            _ = try setup.handle(try accessory.pairSetup(setup.start()))
        } throws: { error in
            (error as? PairingError)?.code == code && (error as? PairingError)?.retryDelay == nil
        }
    }

    @Test(arguments: ["03145154", "031-45-15", "03a-45-154", "031-456-15", "", "031-45-154-"])
    func malformedSetupCodesAreRefused(code: String) {
        #expect {
            _ = try PairSetup(setupCode: code, controller: Self.controller)
        } throws: { error in
            (error as? HAPError)?.code == .invalidSetupCode
        }
    }

    @Test func verifyRefusesAnImpostor() throws {
        var accessory = TestAccessory()
        // Given the controller believes the accessory has another long-term key
        let wrong = AccessoryPairing(
            identifier: accessory.identifier,
            publicKey: Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation))
        var verify = PairVerify(controller: Self.controller, accessory: wrong)
        // Then M2's signature does not verify
        #expect {
            _ = try verify.handle(try accessory.pairVerify(verify.start()))
        } throws: { error in
            (error as? HAPError)?.code == .invalidSignature
        }
    }

    @Test func verifyOfAnUnknownControllerIsAuthenticationError() throws {
        var accessory = TestAccessory()
        var verify = PairVerify(
            controller: Self.controller,
            accessory: AccessoryPairing(identifier: accessory.identifier, publicKey: accessory.publicKey))
        let m3 = try verify.handle(try accessory.pairVerify(verify.start()))
        guard case .send(let body) = m3 else {
            Issue.record("expected M3")
            return
        }
        #expect {
            _ = try verify.handle(try accessory.pairVerify(body))
        } throws: { error in
            (error as? PairingError)?.code == .authentication
        }
    }

    @Test func answersOutOfOrderAreRefused() throws {
        var setup = try PairSetup(setupCode: "031-45-154", controller: Self.controller)
        #expect(throws: HAPError.self) { try setup.handle(TLV8([.init(.state, [2])]).encoded()) }
        _ = setup.start()
        #expect {
            _ = try setup.handle(TLV8([.init(.state, [4])]).encoded())
        } throws: { error in
            (error as? HAPError)?.code == .unexpectedMessage
        }
        #expect(throws: HAPError.self) { try setup.handle([0x06]) }
    }

    @Test func pairingsRequestsAndAnswers() throws {
        let other = PairingEntry(identifier: "OTHER", publicKey: Array(repeating: 9, count: 32), isAdmin: false)
        let add = try TLV8(decoding: PairingsRequest.add(other))
        #expect(add[.state] == [1] && add[.method] == [3] && add[.identifier] == Array("OTHER".utf8))
        #expect(add[.publicKey] == other.publicKey && add[.permissions] == [0])
        let remove = try TLV8(decoding: PairingsRequest.remove(identifier: "OTHER"))
        #expect(remove[.method] == [4] && remove[.identifier] == Array("OTHER".utf8))
        #expect(try TLV8(decoding: PairingsRequest.list())[.method] == [5])

        try PairingsRequest.readResult(TLV8([.init(.state, [2])]).encoded())
        #expect(throws: PairingError(code: .authentication, state: 2, retryDelay: nil)) {
            try PairingsRequest.readResult(TLV8([.init(.state, [2]), .init(.error, [2])]).encoded())
        }
        // A list answer as HAP-python writes it: entries apart by separators
        let list: TLV8 = [
            (.state, [2]), (.identifier, Array("ADMIN".utf8)), (.publicKey, Array(repeating: 1, count: 32)),
            (.permissions, [1]), (.separator, []), (.identifier, Array("OTHER".utf8)),
            (.publicKey, other.publicKey), (.permissions, [0]),
        ]
        #expect(
            try PairingsRequest.readList(list.encoded()) == [
                PairingEntry(identifier: "ADMIN", publicKey: Array(repeating: 1, count: 32), isAdmin: true), other,
            ])
    }
}
