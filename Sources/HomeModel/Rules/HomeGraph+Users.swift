/// The rules of a home's users: one administrator, guests added and removed by it.
extension HomeGraph {
    // MARK: Users

    mutating func addUser(
        account newAccount: String, name: String, home h: Int,
        events: inout [HomeEvent]
    ) throws(HomeError) -> User {
        guard !newAccount.isEmpty else { throw HomeError(.missingParameter, "The new user's account is required.") }
        try AccountName.validate(newAccount)
        guard !name.trimmingSpaces.isEmpty else {
            throw HomeError(.missingParameter, "The new user's name is required.")
        }
        try HomeName.validate(name)
        if homes[h].users.contains(where: { $0.account == newAccount }) {
            throw HomeError(.alreadyExists, "That account is already a member of the home '\(homes[h].name)'.")
        }
        if let other = homes[h].users.first(where: { HomeName.matches($0.name, name) }) {
            throw HomeError(.alreadyExists, "The home '\(homes[h].name)' already has a user named '\(other.name)'.")
        }
        let user = User(id: .random(), name: name, role: .guest, account: newAccount)
        homes[h].users.append(user)
        events.append(.didAddUser(home: homes[h].id, user: user.id, name: name))
        return user
    }

    mutating func removeUser(named name: String, home h: Int, events: inout [HomeEvent])
        throws(HomeError)
    {
        try removeUser(at: try Self.index(of: name, "user", in: homes[h].users, of: homes[h]), home: h, events: &events)
    }

    mutating func removeUser(id: UserID, home h: Int, events: inout [HomeEvent]) throws(HomeError) {
        guard let u = homes[h].users.firstIndex(where: { $0.id == id }) else {
            throw HomeError(.notFound, "The home '\(homes[h].name)' has no such user.")
        }
        try removeUser(at: u, home: h, events: &events)
    }

    private mutating func removeUser(at u: Int, home h: Int, events: inout [HomeEvent]) throws(HomeError) {
        guard homes[h].users[u].role != .administrator else {
            throw HomeError(.invalidParameter, "The administrator cannot leave the home; remove the home instead.")
        }
        let user = homes[h].users.remove(at: u)
        events.append(.didRemoveUser(home: homes[h].id, user: user.id, name: user.name))
    }
}

extension String {
    fileprivate var trimmingSpaces: String { String(drop { $0.isWhitespace }) }
}
