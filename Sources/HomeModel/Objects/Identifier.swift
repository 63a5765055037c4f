import Foundation

/// A stable identifier of a model object, typed by the object it identifies (`Identifier<Room>`) so
/// a room id cannot be passed where a home id is wanted. Names change; identifiers never do.
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

package typealias HomeID = Identifier<Home>
package typealias RoomID = Identifier<Room>
package typealias ZoneID = Identifier<Zone>
package typealias UserID = Identifier<User>
package typealias ActionSetID = Identifier<ActionSet>
package typealias TriggerID = Identifier<Trigger>
/// Assigned by the driver that found the accessory; stable across restarts.
package typealias AccessoryID = Identifier<Accessory>
/// Assigned by the driver; unique within its accessory.
package typealias ServiceID = Identifier<Service>
