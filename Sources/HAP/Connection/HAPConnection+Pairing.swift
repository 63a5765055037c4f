import HAPProtocol

extension HAPConnection {
    /// Runs pair setup with `setupCode` (plain HTTP, before any session) and returns the accessory's
    /// pairing identifier and long-term public key. A wrong code throws ``PairingError`` with
    /// `.authentication`; an accessory that wants us to wait, `.backoff` with its retry delay.
    package func pairSetup(setupCode: String, controller: ControllerIdentity) async throws -> AccessoryPairing {
        var setup = try PairSetup(setupCode: setupCode, controller: controller)
        return try await exchange("/pair-setup", start: setup.start()) { try setup.handle($0) }
    }

    /// Runs pair verify with a paired accessory and switches this connection to the encrypted
    /// session; every connection starts so.
    package func pairVerify(controller: ControllerIdentity, accessory: AccessoryPairing) async throws {
        var verify = PairVerify(controller: controller, accessory: accessory)
        let keys = try await exchange("/pair-verify", start: verify.start()) { try verify.handle($0) }
        secure(with: keys)
    }

    private func exchange<Result: Sendable>(
        _ path: String, start: [UInt8], _ handle: ([UInt8]) throws -> PairingStep<Result>
    ) async throws -> Result {
        var body = start
        while true {
            // Pair setup's SRP steps cost seconds on a slow accessory.
            let answer = try await send(.pairing(path, body), timeout: .seconds(60))
            guard (200..<300).contains(answer.statusCode) || answer.statusCode == 470 else {
                throw HAPError(.unexpectedMessage, "\(path) answered HTTP \(answer.statusCode)")
            }
            switch try handle(answer.body) {
            case .send(let next): body = next
            case .done(let result): return result
            }
        }
    }
}
