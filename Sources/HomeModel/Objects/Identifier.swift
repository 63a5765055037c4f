import Foundation

/// A stable identifier of a model object, typed by what it identifies so a room id cannot be passed
/// where a home id is wanted. Names change; identifiers never do.
public struct Identifier<Tag>: RawRepresentable, Hashable, Sendable, Codable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// A new random identifier.
    static func random() -> Self { Self(rawValue: UUID().uuidString.lowercased()) }
}

public enum HomeTag {}
public enum RoomTag {}
public enum ZoneTag {}
public enum UserTag {}
public enum ActionSetTag {}
public enum AccessoryTag {}
public enum ServiceTag {}

public typealias HomeID = Identifier<HomeTag>
public typealias RoomID = Identifier<RoomTag>
public typealias ZoneID = Identifier<ZoneTag>
public typealias UserID = Identifier<UserTag>
public typealias ActionSetID = Identifier<ActionSetTag>
/// Assigned by the driver that found the accessory; stable across restarts.
public typealias AccessoryID = Identifier<AccessoryTag>
/// Assigned by the driver; unique within its accessory.
public typealias ServiceID = Identifier<ServiceTag>
