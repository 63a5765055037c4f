import Foundation
import HomeModel
import JSON

/// Each accessory's entry of its home's `$layout`, as last rendered, with what it was rendered from.
/// A change that touches a home (a reachability flap, a renamed room) renders again only the
/// entries whose accessory, room, bridge or bridged accessories changed, and the layout is spliced
/// from the rest (``Rendering/layoutBytes(_:fragments:)``): at 10,000 accessories, rendering the whole
/// `$layout` for every flap took about a fifth of a second of CPU. Each automation's entry likewise:
/// a firing moves one automation's `nextFiring`, and at 10,000 automations rendering them all again
/// took most of the CPU of a schedule pass.
struct LayoutFragments {
    private struct TriggerEntry {
        var trigger: Trigger
        var shown: [String]
        var bytes: [UInt8]
    }

    private var triggerEntries: [TriggerID: TriggerEntry] = [:]

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

    /// The entry of `trigger`, rendered again only when it or what its entry shows of the home
    /// (``shown(by:in:)``) changed.
    mutating func bytes(for trigger: Trigger, in home: Home) -> [UInt8] {
        let shown = Self.shown(by: trigger, in: home)
        if let entry = triggerEntries[trigger.id], entry.shown == shown, entry.trigger == trigger {
            return entry.bytes
        }
        let bytes = Rendering.trigger(trigger, in: home).bytes
        triggerEntries[trigger.id] = TriggerEntry(trigger: trigger, shown: shown, bytes: bytes)
        return bytes
    }

    /// Forgets the entries of accessories and automations no home has any more.
    mutating func keep(only homes: [Home]) {
        let accessories = Set(homes.flatMap { $0.accessories.map(\.id) })
        entries = entries.filter { accessories.contains($0.key) }
        let triggers = Set(homes.flatMap { $0.triggers.map(\.id) })
        triggerEntries = triggerEntries.filter { triggers.contains($0.key) }
    }

    /// Forgets the entry of an accessory that left its home.
    mutating func forget(_ id: AccessoryID) {
        entries[id] = nil
    }

    /// What an automation's entry shows besides the automation: its next firing in the home's time
    /// zone, and the names of the accessories, services and action sets it names.
    private static func shown(by trigger: Trigger, in home: Home) -> [String] {
        var shown: [String] = []
        if trigger.event.schedule != nil {
            shown.append(home.nextFirings[trigger.id].map { "\($0.timeIntervalSince1970)" } ?? "-")
            shown.append(home.location?.timeZoneIdentifier ?? TimeZone.current.identifier)
        }
        var keys: [ValueKey] = trigger.event.characteristic.map { [$0] } ?? []
        for case .characteristic(let key, _, _) in trigger.conditions { keys.append(key) }
        for key in keys {
            let accessory = home.accessory(key.accessory)
            shown += [accessory?.name ?? "\u{0}", accessory?.service(key.service)?.name ?? "\u{0}"]
        }
        shown += trigger.actionSets.map { home.actionSet($0)?.name ?? "\u{0}" }
        return shown
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
