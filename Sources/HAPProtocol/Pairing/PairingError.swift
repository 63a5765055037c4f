/// An error code an accessory answered a pairing request with (kTLVType_Error), as a typed error.
///
/// `authentication` after pair setup's M3 means a wrong setup code; `backoff` carries the accessory's
/// retry delay (kTLVType_RetryDelay), which a controller must wait out before trying again.
package struct PairingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The accessory's kTLVError code; a code HAP does not define reads as `unknown`.
    package enum Code: UInt8, Sendable {
        /// kTLVError_Unknown (1).
        case unknown = 1
        /// kTLVError_Authentication (2): a wrong setup code, or a proof or signature that did not verify.
        case authentication
        /// kTLVError_Backoff (3): wait the retry delay before the next attempt.
        case backoff
        /// kTLVError_MaxPeers (4): the accessory cannot hold another pairing.
        case maxPeers
        /// kTLVError_MaxTries (5): too many failed attempts; the accessory refuses pair setup.
        case maxTries
        /// kTLVError_Unavailable (6): the accessory is already paired (or cannot pair now).
        case unavailable
        /// kTLVError_Busy (7): another pair setup is in progress.
        case busy
    }

    /// The accessory's code.
    package let code: Code
    /// The pairing state (M2, M4, M6...) the error came in.
    package let state: UInt8
    /// Seconds to wait before retrying, from kTLVType_RetryDelay (with `backoff`), if the accessory sent it.
    package let retryDelay: UInt64?

    package var description: String {
        let delay = retryDelay.map { ", retry in \($0) s" } ?? ""
        return "accessory answered M\(state) with \(code)\(delay)"
    }

    /// The error a message carries, if it has a kTLVType_Error item.
    static func carried(by message: TLV8) -> PairingError? {
        guard let code = message[.error]?.first else { return nil }
        return PairingError(
            code: Code(rawValue: code) ?? .unknown, state: message[.state]?.first ?? 0,
            retryDelay: message.integer(.retryDelay))
    }
}

/// The pairing methods (kTLVType_Method values).
package struct PairingMethod: RawRepresentable, Hashable, Sendable {
    package let rawValue: UInt8

    package init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Pair setup without MFi authentication.
    package static let pairSetup = PairingMethod(rawValue: 0)
    /// Add pairing (/pairings).
    package static let addPairing = PairingMethod(rawValue: 3)
    /// Remove pairing (/pairings).
    package static let removePairing = PairingMethod(rawValue: 4)
    /// List pairings (/pairings).
    package static let listPairings = PairingMethod(rawValue: 5)
}

/// Reads one pairing answer: checks its state and turns an error item into a thrown `PairingError`.
func readPairingAnswer(_ body: [UInt8], expectedState: UInt8) throws -> TLV8 {
    let message = try TLV8(decoding: body)
    if let error = PairingError.carried(by: message) {
        throw error
    }
    guard let state = message[.state], state == [expectedState] else {
        let got = message[.state].map { "\($0)" } ?? "none"
        throw HAPError(.unexpectedMessage, "expected state M\(expectedState), got \(got)")
    }
    return message
}

/// A required item of a pairing message.
func requiredItem(_ type: TLVType, in message: TLV8, _ step: String) throws -> [UInt8] {
    guard let value = message[type] else {
        throw HAPError(.unexpectedMessage, "\(step) has no item of type \(type)")
    }
    return value
}
