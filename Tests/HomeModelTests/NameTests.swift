import HomeModel
import Testing
import VirtualDevices

@Suite("Naming rules")
struct NameTests {
    @Test(
        "Letters, digits, spaces and apostrophes are allowed",
        arguments: [
            "Kitchen", "Living Room", "Bob's Room", "Room 2", "2nd Floor", "Küche", "Salle à manger", "Bob\u{2019}s",
        ])
    func allowedNames(name: String) throws {
        try HomeName.validate(name)
    }

    @Test(
        "Any other character is refused", arguments: ["Living-Room", "Kitchen!", "Attic/Loft", "Den_1", "Hall.", "a$b"])
    func prohibitedCharacters(name: String) {
        #expect(thrownCode { try HomeName.validate(name) } == .nameContainsProhibitedCharacters)
    }

    @Test("A name must start with a letter or a digit", arguments: [" Kitchen", "'Kitchen", "  2nd"])
    func firstCharacter(name: String) {
        #expect(thrownCode { try HomeName.validate(name) } == .nameDoesNotStartWithValidCharacters)
    }

    @Test(
        "Invisible characters are refused, named by code point",
        arguments: [
            ("Kitchen\u{200B}", "U+200B"), ("Kit\u{200D}chen", "U+200D"), ("Kitchen\u{FEFF}", "U+FEFF"),
            ("Den\u{00AD}", "U+00AD"), ("\u{3164}", "U+3164"), ("Den \u{3164}", "U+3164"), ("Den\u{FE0F}", "U+FE0F"),
            ("Den\u{202E}", "U+202E"), ("Den\u{E000}", "U+E000"),
        ])
    func invisibleCharacters(name: String, codePoint: String) throws {
        let error = try #require(validationError { try HomeName.validate(name) })
        #expect(error.code == .nameContainsProhibitedCharacters)
        #expect(error.message.contains("invisible character (\(codePoint))"))
    }

    @Test("A combining mark with no letter before it is refused; one after a letter is part of it")
    func combiningMarks() throws {
        let error = try #require(validationError { try HomeName.validate("\u{0301}\u{0301}") })
        #expect(error.code == .nameContainsProhibitedCharacters)
        #expect(error.message.contains("combining mark"))
        #expect(thrownCode { try HomeName.validate("Den \u{0301}") } == .nameContainsProhibitedCharacters)
        try HomeName.validate("Cafe\u{0301}")
    }

    @Test("A name may not end with a space")
    func trailingSpace() throws {
        let error = try #require(validationError { try HomeName.validate("Kitchen ") })
        #expect(error.code == .invalidParameter)
        #expect(error.message.contains("ends with a space"))
        try HomeName.validate("Living Room")
    }

    @Test("64 characters bound a name's length, 256 UTF-8 bytes its size")
    func length() throws {
        try HomeName.validate(String(repeating: "a", count: 64))
        try HomeName.validate(String(repeating: "\u{20000}", count: 64))  // 4 bytes each: 256 bytes
        #expect(thrownCode { try HomeName.validate(String(repeating: "a", count: 65)) } == .invalidParameter)
        // One character carrying a thousand combining marks: one character, but 2,001 bytes
        let heavy = "e" + String(repeating: "\u{0301}", count: 1000)
        #expect(heavy.count == 1)
        let error = try #require(validationError { try HomeName.validate(heavy) })
        #expect(error.code == .invalidParameter)
        #expect(error.message.contains("at most 256 bytes"))
    }

    @Test("An empty name is missing")
    func emptyName() {
        #expect(thrownCode { try HomeName.validate("") } == .missingParameter)
    }

    @Test("The default room's reserved name is not a valid user name")
    func defaultRoomNameIsReserved() {
        #expect(thrownCode { try HomeName.validate(HomeName.defaultRoom) } == .nameContainsProhibitedCharacters)
    }

    @Test(
        "Comparison ignores case, spaces and apostrophes",
        arguments: [
            ("Home1", "home 1"), ("Bob's Room", "bobs room"), ("LIVING ROOM", "living room"), ("Bob\u{2019}s", "bobs"),
        ])
    func matching(lhs: String, rhs: String) {
        #expect(HomeName.matches(lhs, rhs))
        #expect(HomeName.key(lhs) == HomeName.key(rhs))
    }

    @Test("Different names do not match")
    func notMatching() {
        #expect(!HomeName.matches("Kitchen", "Kitchen 2"))
        #expect(!HomeName.matches("Den", "Dens"))
    }

    @Test("Where a name was found is a hint only: after a removal and a rename each name finds the right accessory")
    func namePositionsAfterChanges() async throws {
        let f = try await Fixture.make()
        try await f.manager.edit(.addAccessory(home: Fixture.home, id: "lock"), account: Fixture.admin)
        // Found once each, so their places are remembered (copies of a home share what is remembered).
        let before = try await f.home()
        #expect((try? before.accessory(named: "Lamp"))?.id == "lamp")
        #expect((try? before.accessory(named: "Lock"))?.id == "lock")
        #expect((try? before.accessory(named: "Thermostat"))?.id == "thermostat")
        try await f.manager.edit(.removeAccessory(home: Fixture.home, accessory: "Lamp"), account: Fixture.admin)
        try await f.manager.edit(
            .renameAccessory(home: Fixture.home, accessory: "Lock", name: "Lamp"), account: Fixture.admin)
        let after = try await f.home()
        #expect((try? after.accessory(named: "Lamp"))?.id == "lock")
        #expect((try? after.accessory(named: "Lock")) == nil)
        #expect((try? after.accessory(named: "Thermostat"))?.id == "thermostat")
        #expect((try? before.accessory(named: "Lock"))?.id == "lock")
    }

    @Test("Where an accessory was found is a hint only: after one before it is removed each is found by its id")
    func accessoryPositionsAfterChanges() async throws {
        let f = try await Fixture.make()
        try await f.manager.edit(.addAccessory(home: Fixture.home, id: "lock"), account: Fixture.admin)
        // Found once, so every accessory's place is remembered (copies of a home share it).
        let before = try await f.home()
        #expect(before.accessory("lamp")?.name == "Lamp")
        #expect(before.accessory("lock")?.name == "Lock")
        try await f.manager.edit(.removeAccessory(home: Fixture.home, accessory: "Lamp"), account: Fixture.admin)
        try await f.manager.edit(
            .renameAccessory(home: Fixture.home, accessory: "Lock", name: "Front Door"), account: Fixture.admin)
        let after = try await f.home()
        #expect(after.accessory("lamp") == nil)
        #expect(after.accessory("lock")?.name == "Front Door")
        #expect(after.accessory("thermostat")?.name == "Thermostat")
        #expect(before.accessory("lamp")?.name == "Lamp")
        #expect(before.accessory("lock")?.name == "Lock")
    }

    @Test("Where a room was found is a hint only: after rooms before it are removed each room is found by its id")
    func roomPositionsAfterChanges() async throws {
        let f = try await Fixture.make()
        for room in ["Kitchen", "Hall", "Attic"] {
            try await f.manager.edit(.addRoom(home: Fixture.home, name: room), account: Fixture.admin)
        }
        let rooms = try await f.home().rooms
        func id(_ name: String) throws -> RoomID { try #require(rooms.first { $0.name == name }).id }
        let (kitchen, hall, attic) = (try id("Kitchen"), try id("Hall"), try id("Attic"))
        // Found once each, so their places are remembered (copies of a home share what is remembered).
        let before = try await f.home()
        #expect(before.room(kitchen)?.name == "Kitchen")
        #expect(before.room(hall)?.name == "Hall")
        #expect(before.room(attic)?.name == "Attic")
        try await f.manager.edit(.removeRoom(home: Fixture.home, room: "Kitchen"), account: Fixture.admin)
        try await f.manager.edit(.renameRoom(home: Fixture.home, room: "Hall", name: "Landing"), account: Fixture.admin)
        let after = try await f.home()
        #expect(after.room(kitchen) == nil)
        #expect(after.room(hall)?.name == "Landing")
        #expect(after.room(attic)?.name == "Attic")
        #expect(after.room(after.defaultRoom.id)?.isDefault == true)
        #expect(before.room(kitchen)?.name == "Kitchen")
        #expect(before.room(attic)?.name == "Attic")
    }

    @Test("A renamed accessory is found by its new name and no longer by its old one, in place of a look at every name")
    func renamedAccessoryLookup() async throws {
        let f = try await Fixture.make()
        try await f.manager.edit(
            .renameAccessory(home: Fixture.home, accessory: "Lamp", name: "Reading Light"), account: Fixture.admin)
        let home = try await f.home()
        #expect((try? home.accessory(named: "reading light"))?.name == "Reading Light")
        #expect((try? home.accessory(named: "Reading Light"))?.id == "lamp")
        #expect((try? home.accessory(named: "Lamp")) == nil)
        #expect(
            await errorCode {
                try await f.manager.edit(.addRoom(home: Fixture.home, name: "READING LIGHT"), account: Fixture.admin)
            } == .objectWithSimilarNameExistsInHome)
        // The old name is free again.
        try await f.manager.edit(.addRoom(home: Fixture.home, name: "Lamp"), account: Fixture.admin)
    }

    @Test("Home names are unique across the manager, compared the HomeKit way")
    func homeNamespace() async throws {
        // Given a home named Home1
        let manager = try HomeManager(database: .inMemory())
        try await manager.edit(.addHome(name: "Home1"), account: "alice")
        // When its administrator adds "home 1"
        let code = await errorCode { try await manager.edit(.addHome(name: "home 1"), account: "alice") }
        // Then it is refused and there is still one home
        #expect(code == .homeWithSimilarNameExists)
        #expect(await manager.allHomes().count == 1)
    }

    @Test("Rooms, zones, accessories and action sets share the home's namespace")
    func homeContentsShareANamespace() async throws {
        // Given a home with a room, a zone, the lamp and an action set
        let f = try await Fixture.make()
        let m = f.manager
        let (home, admin) = (Fixture.home, Fixture.admin)
        try await m.edit(.addRoom(home: home, name: "Kitchen"), account: admin)
        try await m.edit(.addZone(home: home, name: "Upstairs"), account: admin)
        try await m.edit(.addActionSet(home: home, name: "Night", actions: []), account: admin)

        // When names similar to any of them are used for another kind of object
        // Then each is refused with objectWithSimilarNameExistsInHome
        #expect(
            await errorCode { try await m.edit(.addZone(home: home, name: "kitchen"), account: admin) }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode { try await m.edit(.addRoom(home: home, name: "Up stairs"), account: admin) }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode { try await m.edit(.addActionSet(home: home, name: "LAMP", actions: []), account: admin) }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode {
                try await m.edit(.renameAccessory(home: home, accessory: "Lamp", name: "Night"), account: admin)
            }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode {
                try await m.edit(.renameRoom(home: home, room: "Kitchen", name: "Thermostat"), account: admin)
            }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode {
                try await m.edit(.renameZone(home: home, zone: "Upstairs", name: "Kitchen"), account: admin)
            }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode {
                try await m.edit(.renameActionSet(home: home, actionSet: "Night", name: "Upstairs"), account: admin)
            }
                == .objectWithSimilarNameExistsInHome)
        #expect(
            await errorCode { try await m.edit(.addAccessory(home: home, id: "lock", name: "Kitchen"), account: admin) }
                == .objectWithSimilarNameExistsInHome)
        // And nothing was added or renamed
        let snapshot = try await f.home()
        #expect(snapshot.rooms.map(\.name) == ["Kitchen"])
        #expect(snapshot.zones.map(\.name) == ["Upstairs"])
        #expect(snapshot.actionSets.map(\.name) == ["Night"])
        #expect(snapshot.accessories.map(\.name) == ["Lamp", "Thermostat"])
    }

    @Test("The same name may be used in two homes")
    func namesArePerHome() async throws {
        let f = try await Fixture.make()
        try await f.manager.edit(.addHome(name: "Cabin"), account: Fixture.admin)
        try await f.manager.edit(.addRoom(home: Fixture.home, name: "Kitchen"), account: Fixture.admin)
        try await f.manager.edit(.addRoom(home: "Cabin", name: "Kitchen"), account: Fixture.admin)
        #expect(try await f.manager.home("Cabin", account: Fixture.admin).rooms.map(\.name) == ["Kitchen"])
    }

    @Test("Renaming checks the character rules and may change only the case of its own name")
    func renaming() async throws {
        let f = try await Fixture.make()
        let m = f.manager
        try await m.edit(.addRoom(home: Fixture.home, name: "Kitchen"), account: Fixture.admin)
        #expect(
            await errorCode {
                try await m.edit(
                    .renameRoom(home: Fixture.home, room: "Kitchen", name: "Kitchen!"), account: Fixture.admin)
            } == .nameContainsProhibitedCharacters)
        #expect(
            await errorCode {
                try await m.edit(
                    .renameRoom(home: Fixture.home, room: "Kitchen", name: " Kitchen"), account: Fixture.admin)
            } == .nameDoesNotStartWithValidCharacters)
        try await m.edit(.renameRoom(home: Fixture.home, room: "kitchen", name: "KITCHEN"), account: Fixture.admin)
        #expect(try await f.home().rooms.map(\.name) == ["KITCHEN"])
    }

    @Test("Objects are found by names compared the HomeKit way")
    func lookupByMatchingName() async throws {
        let f = try await Fixture.make()
        try await f.manager.edit(.addRoom(home: Fixture.home, name: "Living Room"), account: Fixture.admin)
        try await f.manager.edit(
            .assignAccessory(home: "home", accessory: "lamp", room: "living room"), account: Fixture.admin)
        let home = try await f.home()
        #expect(home.accessory("lamp")?.room == home.rooms.first?.id)
    }
}

@Suite("Name matching: the ASCII fast path agrees with the full comparison")
struct NameMatchingTests {
    @Test(
        "pairs of names",
        arguments: [
            ("Living Room", "living room", true), ("Living Room", "livingroom", true), ("Home1", "home 1", true),
            ("O'Brien's Lamp", "obriens lamp", true), ("Light 12", "Light 123", false), ("Light 12", "Light 13", false),
            ("Café", "cafe", false), ("Café", "CAFÉ", true), ("O’Brien", "obrien", true), ("obrien", "O’Brien", true),
            ("Lamp", "Lamp’", true), ("Lamp", "Lamp x", false), ("", "", true), ("a", "", false),
            ("\u{212A}elvin", "kelvin", true),
        ])
    func pairs(lhs: String, rhs: String, same: Bool) {
        #expect(HomeName.matches(lhs, rhs) == same)
        #expect(HomeName.matches(lhs, rhs) == (HomeName.key(lhs) == HomeName.key(rhs)))
        // The hash that lookups compare first must never rule out a match.
        if same { #expect(HomeName.keyHash(lhs) == HomeName.keyHash(rhs)) }
    }

    @Test("random names: the in-place byte comparison agrees with comparing keys")
    func random() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "B", "b", "A", " ", "'", "é", "É", "1", "\u{2019}", "\u{212A}", "k"]
        func name() -> String {
            String(
                (0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        for _ in 0..<5_000 {
            let (a, b) = (name(), name())
            #expect(HomeName.matches(a, b) == (HomeName.key(a) == HomeName.key(b)), "'\(a)' vs '\(b)'")
            if HomeName.matches(a, b) { #expect(HomeName.keyHash(a) == HomeName.keyHash(b), "'\(a)' vs '\(b)'") }
        }
    }
}

/// The `HomeError` that `body` threw, or nil.
private func validationError(_ body: () throws -> Void) -> HomeError? {
    do {
        try body()
        return nil
    } catch let error as HomeError {
        return error
    } catch {
        return nil
    }
}
