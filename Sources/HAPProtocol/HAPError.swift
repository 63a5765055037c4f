/// An error of the HAP protocol layer: malformed input from the peer or a failed cryptographic check.
///
/// A struct with a code rather than an enum, so that callers match a code (`error.code == .malformedTLV`)
/// and a log line can carry its name, while new codes do not break existing `switch`es.
package struct HAPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable name.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case malformedTLV
            case authenticationFailed
            case frameTooLong
            case nonceExhausted
            case malformedHTTP
            case invalidSRPParameter
            case invalidSetupCode
            case unexpectedMessage
            case invalidSignature
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// A TLV8 item was truncated or otherwise could not be read.
        package static let malformedTLV = Code(.malformedTLV)
        /// A ChaCha20-Poly1305 tag did not verify: the frame or message was tampered with, replayed,
        /// or encrypted under another key.
        package static let authenticationFailed = Code(.authenticationFailed)
        /// An encrypted frame announced more than 1,024 bytes of plaintext.
        package static let frameTooLong = Code(.frameTooLong)
        /// A 64-bit nonce counter would wrap around; the session must be set up again.
        package static let nonceExhausted = Code(.nonceExhausted)
        /// The bytes from the peer are not an HTTP/1.1 response or HAP `EVENT/1.0` message.
        package static let malformedHTTP = Code(.malformedHTTP)
        /// The accessory's SRP public key or salt is unusable (B % N == 0, u == 0, empty salt).
        package static let invalidSRPParameter = Code(.invalidSRPParameter)
        /// A setup code that is not of the form `XXX-XX-XXX` (digits).
        package static let invalidSetupCode = Code(.invalidSetupCode)
        /// A pairing message that is missing a required item or does not fit the current step.
        package static let unexpectedMessage = Code(.unexpectedMessage)
        /// The accessory's SRP proof or Ed25519 signature did not verify.
        package static let invalidSignature = Code(.invalidSignature)

        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A short human-readable detail for logs; never contains key material.
    package let detail: String

    /// Makes an error with a code and a detail for the log.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    package var description: String { "\(code): \(detail)" }
}
