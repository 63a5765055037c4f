import BigInt
import Crypto

/// An accessory's long-term identity: its pairing identifier ("XX:XX:XX:XX:XX:XX") and Ed25519 key
/// pair, which controllers store after pair setup.
package struct AccessoryIdentity: Sendable {
    /// The accessory's pairing identifier (the `id` of its `_hap._tcp` record).
    package let identifier: String
    // The LTSK's raw 32 bytes: swift-crypto's key types are not Sendable on Linux.
    private let secretKey: [UInt8]

    package init(identifier: String, signingKey: Curve25519.Signing.PrivateKey) {
        self.identifier = identifier
        secretKey = Array(signingKey.rawRepresentation)
    }

    /// The long-term secret key (LTSK).
    package var signingKey: Curve25519.Signing.PrivateKey {
        // Raw bytes taken from a valid key above: always a valid key.
        try! Curve25519.Signing.PrivateKey(rawRepresentation: secretKey)
    }

    /// The long-term public key (LTPK), 32 bytes.
    package var publicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }
}

/// A controller as an accessory keeps it: its pairing identifier exactly as the controller sent it
/// (iOS drops a bridge whose list of pairings comes back altered), its long-term public key, and
/// whether it administers the accessory's pairings.
package struct PairedController: Sendable, Equatable {
    package let identifier: [UInt8]
    package let publicKey: [UInt8]
    package var isAdministrator: Bool

    package init(identifier: [UInt8], publicKey: [UInt8], isAdministrator: Bool) {
        self.identifier = identifier
        self.publicKey = publicKey
        self.isAdministrator = isAdministrator
    }
}

/// The accessory's side of HAP pair setup (M1 to M6) as a state machine over TLV8 bodies with no I/O:
/// what a HomeKit bridge answers on `/pair-setup`. Each request gives an answer to send back; a failed
/// step answers with HAP's error item and ends the exchange. Whether a pair setup may start at all
/// (one at a time, a limit on failed attempts, an accessory already paired) is its owner's to decide.
package struct AccessoryPairSetup: Sendable {
    package typealias Answer = PairingAnswer<Outcome>

    /// How a pair setup ended.
    package enum Outcome: PairingOutcome, Equatable {
        /// The controller proved the setup code and signed its identity: the first pairing, an
        /// administrator's.
        case paired(PairedController)
        /// The exchange ended with this error; `authentication` at M4 is a wrong setup code, which
        /// counts towards the limit on failed attempts.
        case failed(PairingError.Code, state: UInt8)
    }

    private enum Phase: Sendable {
        case awaitingM1
        case awaitingM3(SRPServer<SHA512>)
        case awaitingM5(sessionKey: [UInt8])
        case finished
    }

    private let accessory: AccessoryIdentity
    private let setupCode: String
    private var phase = Phase.awaitingM1
    private var generator: SystemRandomNumberGenerator

    /// Prepares a pair setup of `accessory` with its setup code ("XXX-XX-XXX").
    package init(setupCode: String, accessory: AccessoryIdentity) throws {
        try PairSetup.validate(setupCode: setupCode)
        self.setupCode = setupCode
        self.accessory = accessory
        generator = SystemRandomNumberGenerator()
    }

    /// Answers the controller's M1, M3 or M5.
    package mutating func handle(_ body: [UInt8]) -> Answer {
        let current = phase
        phase = .finished
        let message: TLV8
        do { message = try TLV8(decoding: body) } catch { return Answer.failure(.unknown, state: 2) }
        let state = message[.state] ?? []
        switch (current, state) {
        case (.awaitingM1, [1]):
            let server = SRPServer<SHA512>(
                group: .rfc5054Group3072, username: Array(PairSetup.username.utf8), password: Array(setupCode.utf8),
                using: &generator)
            phase = .awaitingM3(server)
            return Answer(
                body: TLV8([
                    .init(.state, [2]), .init(.salt, server.salt),
                    .init(.publicKey, server.publicKey.paddedBytes(to: server.group.byteCount)),
                ])
                .encoded(),
                outcome: nil)
        case (.awaitingM3(let server), [3]):
            guard let clientKey = message[.publicKey], let clientProof = message[.proof] else {
                return Answer.failure(.unknown, state: 4)
            }
            guard let (sessionKey, proof) = try? server.respond(clientPublicKey: clientKey, clientProof: clientProof)
            else {
                return Answer.failure(.authentication, state: 4)
            }
            phase = .awaitingM5(sessionKey: sessionKey)
            return Answer(body: TLV8([.init(.state, [4]), .init(.proof, proof)]).encoded(), outcome: nil)
        case (.awaitingM5(let sessionKey), [5]):
            let key = HAPKeyDerivation.pairSetupEncryption.derive(from: sessionKey)
            guard let sealed = message[.encryptedData],
                let opened = try? HAPCipher.open(sealed, key: key, nonce: HAPNonce.pairSetupM5),
                let inner = try? TLV8(decoding: opened),
                let identifier = inner[.identifier], let publicKey = inner[.publicKey],
                let signature = inner[.signature]
            else {
                return Answer.failure(.authentication, state: 6)
            }
            let material = HAPKeyDerivation.pairSetupControllerSign.derive(from: sessionKey).bytes
            guard
                (try? verifySignature(signature, of: material + identifier + publicKey, publicKey: publicKey, "M5"))
                    != nil
            else {
                return Answer.failure(.authentication, state: 6)
            }
            let own = HAPKeyDerivation.pairSetupAccessorySign.derive(from: sessionKey).bytes
            let accessoryID = Array(accessory.identifier.utf8)
            let info = own + accessoryID + accessory.publicKey
            guard let accessorySignature = try? accessory.signingKey.signature(for: info) else {
                return Answer.failure(.unknown, state: 6)
            }
            let reply: TLV8 = [
                (.identifier, accessoryID), (.publicKey, accessory.publicKey), (.signature, Array(accessorySignature)),
            ]
            let m6 = TLV8([
                .init(.state, [6]),
                .init(.encryptedData, HAPCipher.seal(reply.encoded(), key: key, nonce: HAPNonce.pairSetupM6)),
            ])
            let controller = PairedController(identifier: identifier, publicKey: publicKey, isAdministrator: true)
            return Answer(body: m6.encoded(), outcome: .paired(controller))
        default:
            // A message out of order, or after the end: the exchange is over.
            return Answer.failure(.unknown, state: (state.first ?? 0) &+ 1)
        }
    }
}

/// An accessory's answer to one pairing request: the body to send back, and how the exchange
/// ended, if it did.
package struct PairingAnswer<Outcome: PairingOutcome>: Sendable {
    package let body: [UInt8]
    package let outcome: Outcome?

    /// The error answer for `state`, ending the exchange.
    package static func failure(_ code: PairingError.Code, state: UInt8) -> Self {
        Self(
            body: TLV8([.init(.state, [state]), .init(.error, [code.rawValue])]).encoded(),
            outcome: .failed(code, state: state))
    }
}

/// How an accessory's pairing exchange ended; every exchange can end with an error.
package protocol PairingOutcome: Sendable {
    static func failed(_ code: PairingError.Code, state: UInt8) -> Self
}
