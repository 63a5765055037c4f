import HomeModel
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
        Operation("renameHome", .layout) { try await $0.renameHome(home, to: "House", account: $1) },
        Operation("removeHome", .layout) { try await $0.removeHome(home, account: $1) },
        Operation("setPrimaryHome", .layout) { try await $0.setPrimaryHome(home, account: $1) },
        Operation("addRoom", .layout) { try await $0.addRoom(named: "Cellar", home: home, account: $1) },
        Operation("removeRoom", .layout) { try await $0.removeRoom("Den", home: home, account: $1) },
        Operation("renameRoom", .layout) { try await $0.renameRoom("Den", to: "Study", home: home, account: $1) },
        Operation("addZone", .layout) { try await $0.addZone(named: "Downstairs", home: home, account: $1) },
        Operation("removeZone", .layout) { try await $0.removeZone("Upstairs", home: home, account: $1) },
        Operation("renameZone", .layout) { try await $0.renameZone("Upstairs", to: "Top", home: home, account: $1) },
        Operation("addRoomToZone", .layout) {
            try await $0.addRoom("Den", toZone: "Upstairs", home: home, account: $1)
        },
        Operation("removeRoomFromZone", .layout) {
            try await $0.removeRoom("Attic", fromZone: "Upstairs", home: home, account: $1)
        },
        Operation("addAccessory", .layout) { try await $0.addAccessory("lock", home: home, account: $1) },
        Operation("removeAccessory", .layout) { try await $0.removeAccessory("Lamp", home: home, account: $1) },
        Operation("renameAccessory", .layout) {
            try await $0.renameAccessory("Lamp", to: "Light", home: home, account: $1)
        },
        Operation("assignAccessory", .layout) {
            try await $0.assignAccessory("Lamp", toRoom: "Den", home: home, account: $1)
        },
        Operation("addActionSet", .layout) {
            try await $0.addActionSet(named: "Away", actions: [], home: home, account: $1)
        },
        Operation("removeActionSet", .layout) { try await $0.removeActionSet("Night", home: home, account: $1) },
        Operation("renameActionSet", .layout) {
            try await $0.renameActionSet("Night", to: "Late", home: home, account: $1)
        },
        Operation("addUser", .layout) { try await $0.addUser(account: "dave", name: "Dave", home: home, account: $1) },
        Operation("removeUser", .layout) { try await $0.removeUser(named: "Carol", home: home, account: $1) },
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
        try await m.addRoom(named: "Den", home: home, account: admin)
        try await m.addRoom(named: "Attic", home: home, account: admin)
        try await m.addZone(named: "Upstairs", home: home, account: admin)
        try await m.addRoom("Attic", toZone: "Upstairs", home: home, account: admin)
        try await m.addActionSet(
            named: "Night", actions: [ActionRequest(Fixture.lampOn, .bool(false))], home: home, account: admin)
        try await m.addUser(account: "carol", name: "Carol", home: home, account: admin)
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
        try await f.manager.addHome(named: "Cabin", account: "carol")
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
            await errorCode { try await m.removeUser(named: "Alice", home: Self.home, account: Fixture.admin) }
                == .invalidParameter)
        #expect(
            await errorCode {
                try await m.addUser(account: "bob", name: "Robert", home: Self.home, account: Fixture.admin)
            } == .alreadyExists)
        #expect(
            await errorCode {
                try await m.addUser(account: "zed", name: "bob", home: Self.home, account: Fixture.admin)
            } == .alreadyExists)
        try await m.removeUser(named: "Bob", home: Self.home, account: Fixture.admin)
        #expect(await m.homes(for: Fixture.guest).isEmpty)
    }

    // MARK: Who may add a home

    @Test("Anyone may add the first home; then only administrators of a home may add more")
    func administratorsCreateHomes() async throws {
        // Given an empty hub
        let m = try HomeManager(database: .inMemory())
        // When a first account adds a home, it may (a new hub must be set up)
        try await m.addHome(named: "Home", account: "alice")
        try await m.addUser(account: "bob", name: "Bob", home: "Home", account: "alice")
        // Then a guest and a stranger may not add one, and learn nothing of the homes there are:
        // a taken name gets the same answer as a free one
        for account in ["bob", "mallory"] {
            for name in ["home", "Cabin"] {
                let error = await thrownError { try await m.addHome(named: name, account: account) }
                #expect(error?.code == .insufficientPrivileges)
                #expect(error?.message.contains("Home") == false)
            }
        }
        // And the administrator may add a second home, and is its administrator
        try await m.addHome(named: "Cabin", account: "alice")
        #expect(await m.homes(for: "alice").map(\.name) == ["Home", "Cabin"])
        #expect(await m.allHomes().count == 2)
    }

    @Test("homes.creators names exactly who may add homes")
    func listedCreators() async throws {
        // Given creators carol only, and an existing home of alice's
        let m = try HomeManager(database: .inMemory(), homeCreators: .accounts(["carol"]))
        #expect(await errorCode { try await m.addHome(named: "Home", account: "alice") } == .insufficientPrivileges)
        try await m.addHome(named: "Home", account: "carol")
        // Then carol may add more, and nobody else may, also not a member of her homes
        try await m.addHome(named: "Cabin", account: "carol")
        try await m.addUser(account: "alice", name: "Alice", home: "Home", account: "carol")
        #expect(await errorCode { try await m.addHome(named: "Flat", account: "alice") } == .insufficientPrivileges)
        #expect(await m.allHomes().map(\.name) == ["Home", "Cabin"])
    }
}
