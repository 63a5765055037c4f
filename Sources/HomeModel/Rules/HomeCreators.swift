/// Who may add a home (config `homes.creators`). A home's creator becomes its administrator, and an
/// administrator may claim the accessories no home has yet, so creating a home is a privilege.
package enum HomeCreators: Sendable, Hashable {
    /// The administrators of the existing homes; anyone while there is no home, so that a new hub
    /// can be set up.
    case administrators
    /// Only these accounts.
    case accounts(Set<String>)

    /// Whether `account` may add a home to `homes`.
    func allow(_ account: String, homes: [Home]) -> Bool {
        switch self {
        case .administrators:
            homes.isEmpty || homes.contains { $0.role(of: account) == .administrator }
        case .accounts(let accounts):
            accounts.contains(account)
        }
    }
}
