import HomeModel
import TestSupport
import Testing
import VirtualDevices

/// One operation of the role table, run against a fixture prepared by ``RoleTests/prepare()``.
struct Operation: Sendable, CustomStringConvertible {
    enum Kind: Sendable { case layout, use }
    let description: String
    let kind: Kind
    let run: @Sendable (HomeManager, String) async throws -> Void

    init(_ name: String, _ kind: Kind, _ run: @escaping @Sendable (HomeManager, String) async throws -> Void) {
        self.description = name
        self.kind = kind
        self.run = run
    }
}

@Suite("Who may do what")
struct RoleTests {
    static let home = Fixture.home

    static let operations: [Operation] = [
        Operation("renameHome", .layout) { try await $0.edit(.renameHome(home: home, name: "House"), account: $1) },
        Operation("removeHome", .layout) { try await $0.edit(.removeHome(home: home), account: $1) },
        Operation("setPrimaryHome", .layout) { try await $0.edit(.setPrimaryHome(home: home), account: $1) },
        Operation("addRoom", .layout) { try await $0.edit(.addRoom(home: home, name: "Cellar"), account: $1) },
        Operation("removeRoom", .layout) { try await $0.edit(.removeRoom(home: home, room: "Den"), account: $1) },
        Operation("renameRoom", .layout) {
            try await $0.edit(.renameRoom(home: home, room: "Den", name: "Study"), account: $1)
        },
        Operation("addZone", .layout) { try await $0.edit(.addZone(home: home, name: "Downstairs"), account: $1) },
        Operation("removeZone", .layout) { try await $0.edit(.removeZone(home: home, zone: "Upstairs"), account: $1) },
        Operation("renameZone", .layout) {
            try await $0.edit(.renameZone(home: home, zone: "Upstairs", name: "Top"), account: $1)
        },
        Operation("addRoomToZone", .layout) {
            try await $0.edit(.addRoomToZone(home: home, room: "Den", zone: "Upstairs"), account: $1)
        },
        Operation("removeRoomFromZone", .layout) {
            try await $0.edit(.removeRoomFromZone(home: home, room: "Attic", zone: "Upstairs"), account: $1)
        },
        Operation("addAccessory", .layout) { try await $0.edit(.addAccessory(home: home, id: "lock"), account: $1) },
        Operation("removeAccessory", .layout) {
            try await $0.edit(.removeAccessory(home: home, accessory: "Lamp"), account: $1)
        },
        Operation("renameAccessory", .layout) {
            try await $0.edit(.renameAccessory(home: home, accessory: "Lamp", name: "Light"), account: $1)
        },
        Operation("assignAccessory", .layout) {
            try await $0.edit(.assignAccessory(home: home, accessory: "Lamp", room: "Den"), account: $1)
        },
        Operation("addActionSet", .layout) {
            try await $0.edit(.addActionSet(home: home, name: "Away", actions: []), account: $1)
        },
        Operation("removeActionSet", .layout) {
            try await $0.edit(.removeActionSet(home: home, actionSet: "Night"), account: $1)
        },
        Operation("renameActionSet", .layout) {
            try await $0.edit(.renameActionSet(home: home, actionSet: "Night", name: "Late"), account: $1)
        },
        Operation("addUser", .layout) {
            try await $0.edit(.addUser(home: home, account: "dave", name: "Dave"), account: $1)
        },
        Operation("removeUser", .layout) { try await $0.edit(.removeUser(home: home, user: "Carol"), account: $1) },
        Operation("see the home", .use) { _ = try await $0.home(home, account: $1) },
        Operation("writeValue", .use) {
            try await $0.writeValue(.bool(true), to: Fixture.lampOn, home: home, account: $1)
        },
        Operation("writeValues", .use) {
            try await $0.writeValues(
                [ActionRequest(Fixture.lampOn, .bool(true)), ActionRequest(Fixture.lampBrightness, .int(40))],
                home: home, account: $1)
        },
        Operation("readValues", .use) { _ = try await $0.readValues(accessory: "Lamp", home: home, account: $1) },
        Operation("identify", .use) { try await $0.identify(accessory: "Lamp", home: home, account: $1) },
        Operation("executeActionSet", .use) { _ = try await $0.executeActionSet("Night", home: home, account: $1) },
    ]

    /// The fixture plus what the operations act on: rooms Den and Attic, zone Upstairs (with Attic),
    /// action set Night, guest Carol.
    static func prepare() async throws -> Fixture {
        let f = try await Fixture.make(homeCreators: .accounts([Fixture.admin, "carol"]))
        let (m, admin) = (f.manager, Fixture.admin)
        try await m.edit(.addRoom(home: home, name: "Den"), account: admin)
        try await m.edit(.addRoom(home: home, name: "Attic"), account: admin)
        try await m.edit(.addZone(home: home, name: "Upstairs"), account: admin)
        try await m.edit(.addRoomToZone(home: home, room: "Attic", zone: "Upstairs"), account: admin)
        try await m.edit(
            .addActionSet(home: home, name: "Night", actions: [ActionRequest(Fixture.lampOn, .bool(false))]),
            account: admin)
        try await m.edit(.addUser(home: home, account: "carol", name: "Carol"), account: admin)
        return f
    }

    @Test("The administrator may do everything", arguments: operations)
    func administrator(operation: Operation) async throws {
        // Given the prepared home
        let f = try await Self.prepare()
        // When its administrator runs the operation
        // Then it succeeds
        try await operation.run(f.manager, Fixture.admin)
    }

    @Test("A guest may identify, read, write and execute, and change nothing else", arguments: operations)
    func guest(operation: Operation) async throws {
        // Given the prepared home
        let f = try await Self.prepare()
        let before = await f.manager.allHomes()
        // When a guest runs the operation
        let code = await errorCode { try await operation.run(f.manager, Fixture.guest) }
        // Then layout changes are refused and change nothing; the rest succeed
        switch operation.kind {
        case .layout:
            #expect(code == .insufficientPrivileges)
            #expect(await f.manager.allHomes() == before)
        case .use:
            #expect(code == nil)
        }
    }

    @Test("Someone who is not a member may do nothing", arguments: operations)
    func stranger(operation: Operation) async throws {
        // Given the prepared home
        let f = try await Self.prepare()
        let before = await f.manager.allHomes()
        // When an account that is not a member runs the operation
        let code = await errorCode { try await operation.run(f.manager, Fixture.stranger) }
        // Then it is refused and nothing changed
        #expect(code == .insufficientPrivileges)
        #expect(await f.manager.allHomes() == before)
    }

    @Test("The home list shows only the homes an account is a member of, with its role")
    func homeList() async throws {
        let f = try await Self.prepare()
        try await f.manager.edit(.addHome(name: "Cabin"), account: "carol")
        #expect(await f.manager.homes(for: Fixture.admin).map(\.name) == ["Home"])
        #expect(await f.manager.homes(for: Fixture.guest).map(\.role) == [.guest])
        #expect(await f.manager.homes(for: "carol").map(\.name) == ["Home", "Cabin"])
        #expect(await f.manager.homes(for: "carol").map(\.role) == [.guest, .administrator])
        #expect(await f.manager.homes(for: Fixture.stranger).isEmpty)
    }

    @Test("Users are shown by display name and role; accounts only through memberships")
    func userPrivacy() async throws {
        let f = try await Self.prepare()
        let users = try await f.home(Fixture.guest).users
        #expect(users.map(\.name) == ["Alice", "Bob", "Carol"])
        #expect(users.map(\.role) == [.administrator, .guest, .guest])
        #expect(await f.manager.memberships().map(\.account) == ["alice", "bob", "carol"])
    }

    @Test("The administrator cannot be removed, and an account joins a home once")
    func userRules() async throws {
        let f = try await Self.prepare()
        let m = f.manager
        #expect(
            await errorCode { try await m.edit(.removeUser(home: Self.home, user: "Alice"), account: Fixture.admin) }
                == .invalidParameter)
        #expect(
            await errorCode {
                try await m.edit(.addUser(home: Self.home, account: "bob", name: "Robert"), account: Fixture.admin)
            } == .alreadyExists)
        #expect(
            await errorCode {
                try await m.edit(.addUser(home: Self.home, account: "zed", name: "bob"), account: Fixture.admin)
            } == .alreadyExists)
        try await m.edit(.removeUser(home: Self.home, user: "Bob"), account: Fixture.admin)
        #expect(await m.homes(for: Fixture.guest).isEmpty)
        let users = try await f.home(Fixture.admin).users
        let alice = try #require(users.first { $0.name == "Alice" }).id
        let carol = try #require(users.first { $0.name == "Carol" }).id
        #expect(
            await errorCode { try await m.edit(.removeMember(home: Self.home, id: alice), account: Fixture.admin) }
                == .invalidParameter)
        #expect(
            await errorCode {
                try await m.edit(.removeMember(home: Self.home, id: UserID("nobody")), account: Fixture.admin)
            }
                == .notFound)
        try await m.edit(.removeMember(home: Self.home, id: carol), account: Fixture.admin)
        #expect(try await f.home(Fixture.admin).users.map(\.name) == ["Alice"])
    }

    @Test(
        "A user's display name follows the naming rules: markup, quotes, topic characters and control or invisible characters are refused, and nothing is added",
        arguments: [
            "<b>Bob</b>", "Bob \"the\" builder", "$default", "x/y+#", "Bob\nSmith", "Bob\u{1B}[31m", "Bob\u{0}",
            "Bob\u{200B}", "\u{202E}boB", " ", "",
        ])
    func userNames(name: String) async throws {
        let f = try await Self.prepare()
        let code = await errorCode {
            try await f.manager.edit(.addUser(home: Self.home, account: "dave", name: name), account: Fixture.admin)
        }
        let expected: Set<HomeError.Code> =
            name.allSatisfy({ $0 == " " })
            ? [.missingParameter] : [.nameContainsProhibitedCharacters, .nameDoesNotStartWithValidCharacters]
        #expect(code.map { expected.contains($0) } == true, "\(String(describing: code))")
        #expect(try await f.home(Fixture.admin).users.count == 3)
    }

    // MARK: Who may add a home

    @Test("Anyone may add the first home; then only administrators of a home may add more")
    func administratorsCreateHomes() async throws {
        // Given an empty hub
        let m = try HomeManager(database: .inMemory())
        // When a first account adds a home, it may (a new hub must be set up)
        try await m.edit(.addHome(name: "Home"), account: "alice")
        try await m.edit(.addUser(home: "Home", account: "bob", name: "Bob"), account: "alice")
        // Then a guest and a stranger may not add one, and learn nothing of the homes there are:
        // a taken name gets the same answer as a free one
        for account in ["bob", "mallory"] {
            for name in ["home", "Cabin"] {
                let error = await thrownError { try await m.edit(.addHome(name: name), account: account) }
                #expect(error?.code == .insufficientPrivileges)
                #expect(error?.message.contains("Home") == false)
            }
        }
        // And the administrator may add a second home, and is its administrator
        try await m.edit(.addHome(name: "Cabin"), account: "alice")
        #expect(await m.homes(for: "alice").map(\.name) == ["Home", "Cabin"])
        #expect(await m.allHomes().count == 2)
    }

    @Test("homes.creators names exactly who may add homes")
    func listedCreators() async throws {
        // Given creators carol only, and an existing home of alice's
        let m = try HomeManager(database: .inMemory(), homeCreators: .accounts(["carol"]))
        #expect(
            await errorCode { try await m.edit(.addHome(name: "Home"), account: "alice") } == .insufficientPrivileges)
        try await m.edit(.addHome(name: "Home"), account: "carol")
        // Then carol may add more, and nobody else may, also not a member of her homes
        try await m.edit(.addHome(name: "Cabin"), account: "carol")
        try await m.edit(.addUser(home: "Home", account: "alice", name: "Alice"), account: "carol")
        #expect(
            await errorCode { try await m.edit(.addHome(name: "Flat"), account: "alice") } == .insufficientPrivileges)
        #expect(await m.allHomes().map(\.name) == ["Home", "Cabin"])
    }
}
