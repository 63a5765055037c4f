/// An error of HAP: malformed input from the peer, a failed cryptographic check, or a connection that
/// failed. Callers match its code (`error.code == .malformedTLV`); a log line carries the code's name.
package struct HAPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable name (the raw value).
    package enum Code: String, Sendable, Hashable, CustomStringConvertible {
        /// A TLV8 item was truncated or otherwise could not be read.
        case malformedTLV
        /// A ChaCha20-Poly1305 tag did not verify: the frame or message was tampered with, replayed,
        /// or encrypted under another key.
        case authenticationFailed
        /// An encrypted frame announced more than 1,024 bytes of plaintext.
        case frameTooLong
        /// A 64-bit nonce counter would wrap around; the session must be set up again.
        case nonceExhausted
        /// The bytes from the peer are not an HTTP/1.1 response or HAP `EVENT/1.0` message.
        case malformedHTTP
        /// The accessory's SRP public key or salt is unusable (B % N == 0, u == 0, empty salt).
        case invalidSRPParameter
        /// A setup code that is not of the form `XXX-XX-XXX` (digits).
        case invalidSetupCode
        /// A pairing message that is missing a required item or does not fit the current step.
        case unexpectedMessage
        /// The accessory's SRP proof or Ed25519 signature did not verify.
        case invalidSignature
        /// TCP could not connect to the accessory.
        case connectFailed
        /// The connection was closed, by the accessory or here.
        case closed
        /// No answer within the request's time.
        case timedOut

        package var description: String { rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A short human-readable detail for logs; never contains key material.
    let detail: String

    /// Makes an error with a code and a detail for the log.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    package var description: String { "\(code): \(detail)" }
}
