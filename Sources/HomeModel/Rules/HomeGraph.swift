import Synchronization

/// The whole home database as one value, and every rule of the model as a mutation of it.
///
/// Each mutation checks the acting account's role first, then the naming, default-room, bridge and
/// zone rules, and either throws (leaving the value untouched, because the caller mutates a copy) or
/// changes the value and appends the HomeKit delegate messages the change causes. ``HomeManager``
/// persists the result and only then publishes it.
struct HomeGraph: Sendable, Hashable {
    var homes: [Home] = []
    var primaryHome: HomeID?
    /// Counts the changes of which accessory sits where (added, removed, a home removed), so that
    /// ``locate(_:)`` can trust its index until the next one. Not part of the graph's value.
    private var placement = 0
    private let index = LocationIndex()

    static func == (lhs: HomeGraph, rhs: HomeGraph) -> Bool {
        lhs.homes == rhs.homes && lhs.primaryHome == rhs.primaryHome
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(homes)
        hasher.combine(primaryHome)
    }

    /// What an operation needs the account to be.
    enum Privilege {
        /// Administrator or guest: identify, read, write, observe, execute action sets.
        case member
        /// Administrator only: the layout and the users.
        case administrator
    }

    // MARK: Lookup

    /// The index of the home named `name`, after checking that `account` holds `privilege` in it.
    func homeIndex(_ name: String, account: String, _ privilege: Privilege) throws(HomeError) -> Int {
        guard let index = homes.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "There is no home named '\(name)'.")
        }
        try Self.check(account, privilege, in: homes[index])
        return index
    }

    static func check(_ account: String, _ privilege: Privilege, in home: Home) throws(HomeError) {
        guard let user = home.users.first(where: { $0.account == account }) else {
            throw HomeError(.insufficientPrivileges, "'\(account)' is not a member of the home '\(home.name)'.")
        }
        if privilege == .administrator && !user.role.mayChangeLayout {
            throw HomeError(
                .insufficientPrivileges,
                "'\(account)' is a guest of the home '\(home.name)'; only its administrator may change it."
            )
        }
    }

    /// Where `accessory` is, in whichever home holds it: every value a device reports and every
    /// request looks it up, so an index answers, rebuilt after each change of placement (a search per
    /// lookup made a start with 10,000 accessories quadratic).
    func locate(_ accessory: AccessoryID) -> (home: Int, accessory: Int)? {
        index.locate(accessory, placement: placement, in: homes)
    }

    /// Notes that accessories were removed, or homes: the index is rebuilt.
    mutating func placementChanged() { placement &+= 1 }

    /// Notes accessories appended to home `h` from position `start`: the index takes them in place of
    /// a rebuild (building a home adds its accessories one by one).
    mutating func accessoriesAppended(home h: Int, from start: Int) {
        let previous = placement
        placement &+= 1
        index.append(homes[h].accessories[start...].map(\.id), home: h, from: start, after: previous, now: placement)
    }

    // MARK: Homes

    mutating func addHome(
        named name: String, account: String, userName: String?, creators: HomeCreators, events: inout [HomeEvent]
    ) throws(HomeError) -> Home {
        // Checked first, so that an account that may not create homes learns nothing about the
        // homes there are (not even whether a name is taken).
        guard creators.allow(account, homes: homes) else {
            throw HomeError(
                .insufficientPrivileges,
                "'\(account)' may not add homes; the hub's owner names who may (homes.creators).")
        }
        try AccountName.validate(account)
        try HomeName.validate(name)
        if let other = homes.first(where: { HomeName.matches($0.name, name) }) {
            throw HomeError(.homeWithSimilarNameExists, "A home named '\(other.name)' already exists.")
        }
        let home = Home(
            id: .random(),
            name: name,
            isPrimary: homes.isEmpty,
            defaultRoom: Room(id: .random(), name: HomeName.defaultRoom, isDefault: true),
            users: [User(id: .random(), name: userName ?? account, role: .administrator, account: account)]
        )
        homes.append(home)
        events.append(.didAddHome(home: home.id, name: name))
        if home.isPrimary {
            primaryHome = home.id
            events.append(.didUpdatePrimaryHome(home: home.id))
        }
        return home
    }

    /// Removes a home; returns its accessories, which go back to the browser.
    mutating func removeHome(home index: Int, events: inout [HomeEvent]) -> [Accessory] {
        let home = homes.remove(at: index)
        placementChanged()
        events.append(.didRemoveHome(home: home.id, name: home.name))
        if primaryHome == home.id {
            primaryHome = homes.first?.id
            if !homes.isEmpty { homes[0].isPrimary = true }
            events.append(.didUpdatePrimaryHome(home: primaryHome))
        }
        return home.accessories
    }

    mutating func renameHome(home index: Int, to newName: String, events: inout [HomeEvent])
        throws(HomeError)
    {
        try HomeName.validate(newName)
        if let other = homes.first(where: { $0.id != homes[index].id && HomeName.matches($0.name, newName) }) {
            throw HomeError(.homeWithSimilarNameExists, "A home named '\(other.name)' already exists.")
        }
        let oldName = homes[index].name
        guard oldName != newName else { return }
        homes[index].name = newName
        events.append(.didUpdateNameForHome(home: homes[index].id, oldName: oldName, name: newName))
    }

    mutating func setPrimaryHome(home index: Int, events: inout [HomeEvent]) {
        guard primaryHome != homes[index].id else { return }
        for i in homes.indices { homes[i].isPrimary = i == index }
        primaryHome = homes[index].id
        events.append(.didUpdatePrimaryHome(home: primaryHome))
    }

    // MARK: The home's namespace

    /// Refuses `name` if it breaks a character rule or if a room, zone, accessory or action set of the
    /// home other than `except` already has a similar name.
    static func checkName(_ name: String, in home: Home, except: String? = nil) throws(HomeError) {
        try HomeName.validate(name)
        // Every object of the home is compared in place: no list of names is built per check.
        func clash(_ kind: String, _ id: String, _ other: String) throws(HomeError) {
            guard id != except, HomeName.matches(other, name) else { return }
            throw HomeError(
                .objectWithSimilarNameExistsInHome,
                "The home '\(home.name)' already has \(kind.first == "a" ? "an" : "a") \(kind) named '\(other)'.")
        }
        // By index: `for accessory in home.accessories` would copy (retain and release) every
        // accessory's fields, which made building a 10,000-accessory home quadratic in retains.
        for i in home.rooms.indices { try clash("room", home.rooms[i].id.rawValue, home.rooms[i].name) }
        for i in home.zones.indices { try clash("zone", home.zones[i].id.rawValue, home.zones[i].name) }
        // Accessories (there may be thousands) by their key hash first.
        let hash = HomeName.keyHash(name)
        for i in home.accessories.indices where home.accessories[i].nameKeyHash == hash {
            try clash("accessory", home.accessories[i].id.rawValue, home.accessories[i].name)
        }
        for i in home.actionSets.indices {
            try clash("action set", home.actionSets[i].id.rawValue, home.actionSets[i].name)
        }
        for i in home.triggers.indices {
            try clash("automation", home.triggers[i].id.rawValue, home.triggers[i].name)
        }
    }

    /// Renames `list[index]` of the home at `h` to `newName`, checked in the home's namespace;
    /// `event` says it, given the home, the object and its old name. The same name changes nothing.
    mutating func rename<Object: NamedObject>(
        _ list: WritableKeyPath<Home, [Object]>, _ index: Int, to newName: String, home h: Int,
        events: inout [HomeEvent], _ event: (HomeID, Identifier<Object.Tag>, _ oldName: String) -> HomeEvent
    ) throws(HomeError) {
        let object = homes[h][keyPath: list][index]
        try Self.checkName(newName, in: homes[h], except: object.id.rawValue)
        guard object.name != newName else { return }
        homes[h][keyPath: list][index].name = newName
        events.append(event(homes[h].id, object.id, object.name))
    }

    /// The index of what `name` names in `list` (the home's `kind`s), or `notFound`.
    static func index<Object: NamedObject>(of name: String, _ kind: String, in list: [Object], of home: Home)
        throws(HomeError) -> Int
    {
        guard let index = list.firstIndex(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no \(kind) named '\(name)'.")
        }
        return index
    }

    static func roomIndex(_ name: String, in home: Home) throws(HomeError) -> Int? {
        if HomeName.matches(name, HomeName.defaultRoom) { return nil }
        return try index(of: name, "room", in: home.rooms, of: home)
    }

    static func roomID(_ name: String, in home: Home) throws(HomeError) -> RoomID {
        try roomIndex(name, in: home).map { home.rooms[$0].id } ?? home.defaultRoom.id
    }

    static func zoneIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        try index(of: name, "zone", in: home.zones, of: home)
    }

    static func accessoryIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        guard let index = home.accessoryIndex(named: name) else {
            throw HomeError(.notFound, "The home '\(home.name)' has no accessory named '\(name)'.")
        }
        return index
    }

    static func triggerIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        try index(of: name, "automation", in: home.triggers, of: home)
    }

    static func actionSetIndex(_ name: String, in home: Home) throws(HomeError) -> Int {
        try index(of: name, "action set", in: home.actionSets, of: home)
    }

    // MARK: What drivers report

    /// Records a value the device confirmed or reported; no event when it did not change. An event
    /// type's report (a press) is always passed on and never kept.
    mutating func recordValue(
        _ value: CharacteristicValue, accessory: AccessoryID, service: ServiceID,
        characteristic: CharacteristicType, events: inout [HomeEvent]
    ) {
        guard let (h, a) = locate(accessory),
            let current = homes[h].accessories[a].characteristic(service, characteristic)
        else { return }
        let stored = (try? current.metadata.validate(value)) ?? value
        if characteristic.isEvent || homes[h].accessories[a].setValue(stored, service: service, type: characteristic) {
            events.append(
                .didUpdateValueForCharacteristic(
                    home: homes[h].id, accessory: accessory, service: service, characteristic: characteristic,
                    value: stored))
        }
    }

    mutating func recordReachability(_ isReachable: Bool, accessory: AccessoryID, events: inout [HomeEvent]) {
        guard let (h, a) = locate(accessory), homes[h].accessories[a].isReachable != isReachable else { return }
        homes[h].accessories[a].isReachable = isReachable
        events.append(
            .accessoryDidUpdateReachability(home: homes[h].id, accessory: accessory, isReachable: isReachable))
    }
}

/// An object in a home's namespace (``HomeGraph/checkName(_:in:except:)``), renamed alike whatever it is.
protocol NamedObject {
    associatedtype Tag
    var id: Identifier<Tag> { get }
    var name: String { get set }
}

extension Room: NamedObject {}
extension User: NamedObject {}
extension Zone: NamedObject {}
extension Accessory: NamedObject {}
extension ActionSet: NamedObject {}
extension Trigger: NamedObject {}

/// Where each accessory of a graph is, as of one placement count. Shared by copies of a graph (it is a
/// cache, not part of the value); each lookup checks the count, so a copy placed differently rebuilds it.
final class LocationIndex: Sendable {
    private let state = Mutex<(placement: Int, count: Int, places: [AccessoryID: (home: Int, accessory: Int)])>(
        (-1, -1, [:]))

    /// Adds appended accessories when the index was current before they came; otherwise leaves it
    /// to be rebuilt.
    func append(_ ids: [AccessoryID], home h: Int, from start: Int, after previous: Int, now placement: Int) {
        state.withLock { state in
            guard state.placement == previous else { return }
            for (offset, id) in ids.enumerated() where state.places[id] == nil {
                state.places[id] = (h, start + offset)
            }
            state.placement = placement
            state.count += ids.count
        }
    }

    func locate(_ id: AccessoryID, placement: Int, in homes: [Home]) -> (home: Int, accessory: Int)? {
        state.withLock { state in
            let count = homes.reduce(0) { $0 + $1.accessories.count }
            if state.placement != placement || state.count != count {
                var places: [AccessoryID: (home: Int, accessory: Int)] = [:]
                places.reserveCapacity(count)
                for (h, home) in homes.enumerated() {
                    for (a, accessory) in home.accessories.enumerated() where places[accessory.id] == nil {
                        places[accessory.id] = (h, a)
                    }
                }
                state = (placement, count, places)
            }
            guard let place = state.places[id], place.home < homes.count,
                place.accessory < homes[place.home].accessories.count,
                homes[place.home].accessories[place.accessory].id == id
            else { return nil }
            return place
        }
    }
}
