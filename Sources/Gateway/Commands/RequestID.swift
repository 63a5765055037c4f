import JSON

/// Reads only the `"id"` of a request body: for the answers that refuse a request without running it
/// (over the rate limit, the gateway busy, a malformed body or topic), so that even those carry the
/// id the client sent and the client knows which requests to send again.
///
/// `JSON.member` reads the top level of the object up to `"id"` and nothing after it, so a refusal
/// costs no more than the members before the id, and the id is found in a body that is malformed
/// after it.
enum RequestID {
    /// How far into a payload the id is looked for (the size of the largest payload the gateway reads).
    static let scanLimit = 65_536
    /// The longest id echoed, serialized: an answer stays small whatever a client sends.
    static let maximumLength = 256

    /// The value of the top-level `"id"` member of `payload`, or nil when there is none to be read
    /// in its first `scanLimit` bytes, or when it is longer than `maximumLength`.
    static func read(_ payload: [UInt8]) -> JSON? {
        let scanned = payload.count > scanLimit ? Array(payload.prefix(scanLimit)) : payload
        guard let (id, length) = JSON.member("id", of: scanned), length <= maximumLength else { return nil }
        return id
    }
}
