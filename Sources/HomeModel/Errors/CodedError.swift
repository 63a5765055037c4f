/// An error that travels by name: a code callers match (`error.code == .notFound`) and that a wire
/// answer or a log line carries as ``ErrorCode/name``, with a sentence for the person who asked.
/// Each part of the gateway names its own codes (``HomeError``, `HistoryError`, ...), so a caller
/// matches only the codes that part can give.
package struct CodedError<Kind: ErrorCode>: Error, Sendable, Hashable, CustomStringConvertible {
    /// The part's codes (`HomeError.Code.notFound`).
    package typealias Code = Kind

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.name): \(message)" }
}

/// The codes of one kind of ``CodedError``.
package protocol ErrorCode: Sendable, Hashable {
    /// What the wire and the log carry.
    var name: String { get }
}

extension ErrorCode where Self: RawRepresentable<String> {
    package var name: String { rawValue }
}
