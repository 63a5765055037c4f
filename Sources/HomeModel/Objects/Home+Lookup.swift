import Synchronization

extension Home {
    /// The index of the accessory that `name` names under ``HomeName/matches(_:_:)``.
    ///
    /// Commands look accessories up by name on every message, and most carry the name exactly as
    /// stored. Names are unique under `matches`, so an exact hit is the only match: where such a hit
    /// was found before (``PositionHint``) is tried first, then a plain comparison over
    /// the accessories, and the full comparison runs only for the rest.
    func accessoryIndex(named name: String) -> Int? {
        if let index = accessoryNamePositions.position(of: name), index < accessories.count,
            accessories[index].name == name
        {
            return index
        }
        let hash = HomeName.keyHash(name)
        if let index = accessories.firstIndex(where: { $0.nameKeyHash == hash && $0.name == name }) {
            accessoryNamePositions.remember(name, at: index, keeping: accessories.count)
            return index
        }
        return accessories.firstIndex { $0.nameKeyHash == hash && HomeName.matches($0.name, name) }
    }

    /// The room `id` identifies: the default room, or one of `rooms` (found through ``PositionHint``).
    package func room(_ id: RoomID) -> Room? {
        if id == defaultRoom.id { return defaultRoom }
        if let index = roomPositions.position(of: id), index < rooms.count, rooms[index].id == id {
            return rooms[index]
        }
        guard let index = rooms.firstIndex(where: { $0.id == id }) else { return nil }
        roomPositions.remember(id, at: index, keeping: rooms.count)
        return rooms[index]
    }

    /// The accessory `id` identifies, found through ``PositionHint`` as ``trigger(_:)`` finds an
    /// automation. The history's selection looks up the accessory of every change the manager
    /// commits; that selection, with a scan of 1,000 identifiers in it, cost each write 4.5 µs on
    /// the loop (docs/benchmarks.md).
    package func accessory(_ id: AccessoryID) -> Accessory? {
        if let index = accessoryPositions.position(of: id), index < accessories.count, accessories[index].id == id {
            return accessories[index]
        }
        // By index: `first(where:)` copied each accessory it passed (at 10,000, megabytes per lookup).
        guard let index = accessories.indices.first(where: { accessories[$0].id == id }) else { return nil }
        accessoryPositions.remember(accessories.map(\.id))
        return accessories[index]
    }

    /// The automation `id` identifies, found through ``PositionHint``. A firing looks its automation
    /// up several times (the manager, `$events`, the history), and a scan of 10,000 took most of a
    /// firing's CPU: a scan that finds it notes where every automation is, so the next lookups of any
    /// of them are one dictionary access until the list changes.
    package func trigger(_ id: TriggerID) -> Trigger? {
        if let index = triggerPositions.position(of: id), index < triggers.count, triggers[index].id == id {
            return triggers[index]
        }
        guard let index = triggers.firstIndex(where: { $0.id == id }) else { return nil }
        triggerPositions.remember(triggers.map(\.id))
        return triggers[index]
    }
}

/// Where keys (accessory names, room and automation identifiers) were found in one of a home's arrays: a lookup is
/// then one dictionary access instead of a scan (for names, a third of the lookups' cost of a command
/// in a home of 1,000 accessories; for rooms, a tenth of the start's CPU at 10,000 accessories in 500
/// rooms, where every accessory's topics and layout entry name its room).
///
/// Only a hint, never an answer: a hit counts only if the element there still has exactly that key,
/// and anything else scans as before. So copies of a home, which share it, and changes made since
/// (renames, removals) can cost a scan but never find the wrong element. It holds only keys found
/// exactly, and starts again when it holds more than twice the elements, so keys that are no longer
/// there cannot pile up. Not part of the home's value: equal and hashed alike for every home.
final class PositionHint<Key: Hashable & Sendable>: Sendable, Hashable {
    private let positions = Mutex<[Key: Int]>([:])

    func position(of key: Key) -> Int? { positions.withLock { $0[key] } }

    /// Notes that `key` is at `index`, among `count` elements.
    func remember(_ key: Key, at index: Int, keeping count: Int) {
        positions.withLock { positions in
            if positions.count > 2 * count + 16 { positions.removeAll() }
            positions[key] = index
        }
    }

    /// Notes where each of `keys` is: at its index.
    func remember(_ keys: [Key]) {
        var all: [Key: Int] = [:]
        all.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() { all[key] = index }
        positions.withLock { $0 = all }
    }

    static func == (lhs: PositionHint, rhs: PositionHint) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
