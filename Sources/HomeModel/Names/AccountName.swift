/// The rules for an account (an MQTT username) that becomes a member of a home.
///
/// Accounts become the last level of command topics and `user` lines of the broker's generated
/// access rules, so an account with a topic separator, a wildcard, a control character (a newline
/// would add a line of its own to the acl file) or surrounding spaces could not be written safely.
package enum AccountName {
    /// The longest account, in UTF-8 bytes.
    static let maximumLength = 256

    /// Checks an account for a new member.
    package static func validate(_ account: String) throws(HomeError) {
        guard !account.isEmpty else { throw HomeError(.missingParameter, "An account is required.") }
        guard account.utf8.count <= maximumLength else {
            throw HomeError(
                .invalidParameter,
                "The account is \(account.utf8.count) bytes long; at most \(maximumLength) are allowed.")
        }
        if account.unicodeScalars.contains(where: { "/+#".unicodeScalars.contains($0) || isControl($0) }) {
            throw HomeError(
                .invalidParameter,
                "The account '\(account.debugDescription)' contains '/', '+', '#' or a control character; MQTT usernames used as topic levels cannot."
            )
        }
        guard account.first?.isWhitespace == false, account.last?.isWhitespace == false else {
            throw HomeError(.invalidParameter, "The account '\(account)' starts or ends with a space.")
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        [.control, .format, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
    }
}
