import Synchronization

extension Home {
    /// The index of the accessory that `name` names under ``HomeName/matches(_:_:)``.
    ///
    /// Commands look accessories up by name on every message, and most carry the name exactly as
    /// stored. Names are unique under `matches`, so an exact hit is the only match: where such a hit
    /// was found before (``AccessoryNamePositions``) is tried first, then a plain comparison over
    /// the accessories, and the full comparison runs only for the rest.
    public func accessoryIndex(named name: String) -> Int? {
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

    /// The accessory that `name` names under ``HomeName/matches(_:_:)``.
    public func accessory(named name: String) -> Accessory? {
        accessoryIndex(named: name).map { accessories[$0] }
    }
}

/// Where accessory names were found in a home's accessories: a command's lookup is then one
/// dictionary access instead of a scan (a third of the lookups' cost of a command in a home of
/// 1,000 accessories).
///
/// Only a hint, never an answer: a hit counts only if the accessory there still has exactly that
/// name, and anything else scans as before. So copies of a home, which share it, and changes made
/// since (renames, removals) can cost a scan but never find the wrong accessory. It holds only
/// names found exactly, and starts again when it holds more than twice the accessories, so names
/// that are no longer there cannot pile up. Not part of the home's value: equal and hashed alike
/// for every home.
final class AccessoryNamePositions: Sendable, Hashable {
    private let positions = Mutex<[String: Int]>([:])

    func position(of name: String) -> Int? { positions.withLock { $0[name] } }

    /// Notes that `name` is at `index`, among `count` accessories.
    func remember(_ name: String, at index: Int, keeping count: Int) {
        positions.withLock { positions in
            if positions.count > 2 * count + 16 { positions.removeAll() }
            positions[name] = index
        }
    }

    static func == (lhs: AccessoryNamePositions, rhs: AccessoryNamePositions) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
