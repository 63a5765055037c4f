import Foundation

/// A stable identifier of a model object, typed by what it identifies so a room id cannot be passed
/// where a home id is wanted. Names change; identifiers never do.
package struct Identifier<Tag>: RawRepresentable, Hashable, Sendable, Codable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }
    package var description: String { rawValue }
    @inlinable package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    // Equality and hashing spelled out, and inlinable: the standard library's defaults for
    // RawRepresentable are generic, and behind a package conformance (not visible to the other
    // modules' optimizer) every dictionary lookup by an id from Gateway or Drivers ran them
    // unspecialized for Identifier<Tag>, looking up witness tables at run time.
    @inlinable package static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }
    @inlinable package func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    /// What Set and Dictionary call; the default, generic over `Tag`, looked up this conformance at
    /// run time (`swift_getWitnessTable`) on every lookup.
    @inlinable package func _rawHashValue(seed: Int) -> Int { rawValue._rawHashValue(seed: seed) }

    /// A new random identifier.
    static func random() -> Self { Self(rawValue: UUID().uuidString.lowercased()) }
}

package enum HomeTag {}
package enum RoomTag {}
package enum ZoneTag {}
package enum UserTag {}
package enum ActionSetTag {}
package enum TriggerTag {}
package enum AccessoryTag {}
package enum ServiceTag {}

package typealias HomeID = Identifier<HomeTag>
package typealias RoomID = Identifier<RoomTag>
package typealias ZoneID = Identifier<ZoneTag>
package typealias UserID = Identifier<UserTag>
package typealias ActionSetID = Identifier<ActionSetTag>
package typealias TriggerID = Identifier<TriggerTag>
/// Assigned by the driver that found the accessory; stable across restarts.
package typealias AccessoryID = Identifier<AccessoryTag>
/// Assigned by the driver; unique within its accessory.
package typealias ServiceID = Identifier<ServiceTag>
