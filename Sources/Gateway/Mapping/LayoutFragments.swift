import HomeModel
import JSON

/// Each accessory's entry of its home's `$layout`, as last rendered, with what it was rendered from.
/// A change that touches a home (a reachability flap, a renamed room) renders again only the
/// entries whose accessory, room, bridge or bridged accessories changed, and the layout is spliced
/// from the rest (``Rendering/layoutBytes(_:fragments:)``): at 10,000 accessories, rendering the whole
/// `$layout` for every flap took about a fifth of a second of CPU.
struct LayoutFragments {
    private struct Entry {
        var accessory: Accessory
        var room: String
        var neighbours: [String]
        var bytes: [UInt8]
    }

    private var entries: [AccessoryID: Entry] = [:]

    /// The entry of `accessory` (in the room named `room`), rendered again only when what it shows
    /// changed. Comparing the accessory is cheap when it did not change: its arrays are then the ones
    /// the entry holds.
    mutating func bytes(for accessory: Accessory, in home: Home, room: String) -> [UInt8] {
        let neighbours = Self.neighbours(of: accessory, in: home)
        if let entry = entries[accessory.id], entry.room == room, entry.neighbours == neighbours,
            entry.accessory.isSameLayout(as: accessory)
        {
            return entry.bytes
        }
        let bytes = Rendering.accessoryLayout(accessory, in: home).bytes
        entries[accessory.id] = Entry(accessory: accessory, room: room, neighbours: neighbours, bytes: bytes)
        return bytes
    }

    /// Forgets the entries of accessories no home has any more.
    mutating func keep(only ids: Set<AccessoryID>) {
        entries = entries.filter { ids.contains($0.key) }
    }

    /// Forgets the entry of an accessory that left its home.
    mutating func forget(_ id: AccessoryID) {
        entries[id] = nil
    }

    /// The names of the bridge and the bridged accessories, which the entry shows.
    private static func neighbours(of accessory: Accessory, in home: Home) -> [String] {
        guard accessory.bridge != nil || !accessory.bridgedAccessories.isEmpty else { return [] }
        return ([accessory.bridge].compactMap { $0 } + accessory.bridgedAccessories).map {
            home.accessory($0)?.name ?? "\u{0}"
        }
    }
}

extension Accessory {
    /// Equal as far as `$layout` shows (values left aside: a value change does not touch the layout).
    fileprivate func isSameLayout(as other: Accessory) -> Bool {
        guard id == other.id, name == other.name, room == other.room, category == other.category,
            manufacturer == other.manufacturer, model == other.model, isReachable == other.isReachable,
            bridge == other.bridge, bridgedAccessories == other.bridgedAccessories,
            services.count == other.services.count
        else { return false }
        for (mine, theirs) in zip(services, other.services) {
            guard mine.name == theirs.name, mine.type == theirs.type,
                mine.characteristics.count == theirs.characteristics.count
            else { return false }
            for (a, b) in zip(mine.characteristics, theirs.characteristics)
            where a.type != b.type || a.metadata != b.metadata {
                return false
            }
        }
        return true
    }
}
