import Foundation
import Yams

/// Reading a composed demo home without `Codable`.
///
/// Yams' decoder looks each key up by a linear search that builds a node per lookup, flattens every
/// mapping and keeps a coding path per value: for 10,000 devices, a fifth of a second of every start.
/// This reads the shapes a valid file has, with Yams' own scalar constructors, so each value is what
/// the decoder would make of it. Anything else (a null, an alias, an explicit tag, a wrong shape, an
/// unknown kind, a missing key) makes it give up, and the decoder reads the file and names the
/// problem. `DemoHomeFastDecodingTests` holds both readings equal.
extension DemoHome {
    /// The demo home in `node` (composed with `Resolver.basic`, or already tagged), or nil when the
    /// decoder must read it. (Public for the fuzzer, which holds it to the decoder.)
    public static func fastDecode(_ node: Node) -> DemoHome? {
        try? FastReader.demoHome(node)
    }

    /// The demo home in `yaml` read without Yams (``DemoHomeScanner``), or nil when Yams must
    /// compose it: text outside the plain shapes the scanner reads, or a shape the fast reading
    /// leaves to the decoder. (Public for the fuzzer, which holds it to Yams' reading.)
    public static func scan(_ yaml: String) -> DemoHome? {
        DemoHomeScanner.compose(yaml).flatMap { try? FastReader.demoHome($0) }
    }
}

/// What the fast reading asks of a composed node: Yams' nodes, and ``DemoHomeScanner``'s values.
protocol FastReadableNode {
    /// Calls `body` with each key of a mapping that is a string and its value; gives up on anything
    /// but a mapping, and at a merge key.
    func fields(_ body: (String, Self) throws(FastReader.GiveUp) -> Void) throws(FastReader.GiveUp)
    /// The items of a sequence; gives up on anything else.
    func items() throws(FastReader.GiveUp) -> [Self]
    /// A scalar that is neither null nor explicitly tagged other than `!!str`, as Yams' constructors
    /// read it.
    func scalar() throws(FastReader.GiveUp) -> Node.Scalar
    /// The text of such a scalar: what the decoder reads into a string field.
    func text() throws(FastReader.GiveUp) -> String
}

extension Node: FastReadableNode {
    func fields(_ body: (String, Node) throws(FastReader.GiveUp) -> Void) throws(FastReader.GiveUp) {
        guard case .mapping(let mapping) = self else { throw FastReader.GiveUp() }
        for (key, value) in mapping {
            // Keys that are not strings match no field for the decoder either.
            guard let key = try? key.scalar(), FastReader.tag(of: key) == .str else { continue }
            // A merge key is the decoder's to read.
            if key.string == "<<" { throw FastReader.GiveUp() }
            try body(key.string, value)
        }
    }

    func items() throws(FastReader.GiveUp) -> [Node] {
        guard case .sequence(let sequence) = self else { throw FastReader.GiveUp() }
        return Array(sequence)
    }

    /// Null also as the decoder sees it: `!!str null` is nil to `decodeIfPresent`.
    func scalar() throws(FastReader.GiveUp) -> Node.Scalar {
        guard case .scalar(let scalar) = self else { throw FastReader.GiveUp() }
        let name = FastReader.tag(of: scalar)
        guard name != .null, name != .nonSpecific, scalar.tag.description == Tag.Name.implicit.rawValue || name == .str,
            NSNull.construct(from: scalar) == nil
        else { throw FastReader.GiveUp() }
        return scalar
    }

    func text() throws(FastReader.GiveUp) -> String { try scalar().string }
}

extension DemoHomeScanner.Value: FastReadableNode {
    /// The scanner's keys are plain words; one that YAML reads as a bool, a number or null (a string
    /// to no field either) goes to `body` and matches none.
    func fields(_ body: (String, Self) throws(FastReader.GiveUp) -> Void) throws(FastReader.GiveUp) {
        guard case .mapping(let pairs) = self else { throw FastReader.GiveUp() }
        for (key, value) in pairs {
            if key == "<<" { throw FastReader.GiveUp() }
            try body(key, value)
        }
    }

    func items() throws(FastReader.GiveUp) -> [Self] {
        guard case .sequence(let items) = self else { throw FastReader.GiveUp() }
        return items
    }

    /// Every scalar of the scanner is plain, so its tag is implicit, as Yams composes it.
    func scalar() throws(FastReader.GiveUp) -> Node.Scalar { Node.Scalar(try text()) }

    func text() throws(FastReader.GiveUp) -> String {
        guard case .scalar(let text) = self, PlainScalarTags.tag(of: text) != .null else { throw FastReader.GiveUp() }
        return text
    }
}

extension DemoHome.ScalarValue {
    init(_ value: CharacteristicValue) { self.value = value }
}

enum FastReader {
    /// Anything the decoder must read instead.
    struct GiveUp: Error {}

    static func demoHome<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome {
        var devices: [VirtualDeviceConfiguration]?
        var homes: [DemoHome.HomeSeed]?
        try fields(node) { key, value throws(GiveUp) in
            switch key {
            case "devices": devices = try list(value, device)
            case "homes": homes = try list(value, home)
            default: break
            }
        }
        guard let devices, let homes else { throw GiveUp() }
        return DemoHome(devices: devices, homes: homes)
    }

    static func device<N: FastReadableNode>(_ node: N) throws(GiveUp) -> VirtualDeviceConfiguration {
        var id: String?
        var name: String?
        var kind: VirtualDeviceKind?
        var manufacturer: String?
        var model: String?
        var writeDelay: Double?
        var failureRate: Double?
        var reachable: Bool?
        var battery: Int?
        var transitionTime: Double?
        var jammed: Bool?
        var obstructed: Bool?
        var bridged: [VirtualDeviceConfiguration]?
        try fields(node) { key, value throws(GiveUp) in
            switch key {
            case "id": id = try string(value)
            case "name": name = try string(value)
            case "kind":
                guard let known = VirtualDeviceKind(rawValue: try string(value)) else { throw GiveUp() }
                kind = known
            case "manufacturer": manufacturer = try string(value)
            case "model": model = try string(value)
            case "writeDelay": writeDelay = try scalar(value, Double.construct)
            case "failureRate": failureRate = try scalar(value, Double.construct)
            case "reachable": reachable = try bool(value)
            case "battery": battery = try scalar(value, Int.construct)
            case "transitionTime": transitionTime = try scalar(value, Double.construct)
            case "jammed": jammed = try bool(value)
            case "obstructed": obstructed = try bool(value)
            case "bridged": bridged = try list(value, device)
            default: break
            }
        }
        guard let id, let name, let kind, VirtualDeviceConfiguration.isValid(failureRate: failureRate ?? 0),
            VirtualDeviceConfiguration.isValid(seconds: writeDelay ?? 0),
            VirtualDeviceConfiguration.isValid(seconds: transitionTime ?? 0)
        else {
            throw GiveUp()
        }
        return VirtualDeviceConfiguration(
            yaml: id, name: name, kind: kind, manufacturer: manufacturer, model: model, writeDelay: writeDelay,
            failureRate: failureRate, reachable: reachable, battery: battery, transitionTime: transitionTime,
            jammed: jammed, obstructed: obstructed, bridged: bridged)
    }

    static func home<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome.HomeSeed {
        var name: String?
        var primary: Bool?
        var administrator: DemoHome.UserSeed?
        var guests: [DemoHome.UserSeed]?
        var rooms: [String]?
        var zones: [DemoHome.ZoneSeed]?
        var accessories: [DemoHome.AccessorySeed]?
        var actionSets: [DemoHome.ActionSetSeed]?
        try fields(node) { key, value throws(GiveUp) in
            switch key {
            case "name": name = try string(value)
            case "primary": primary = try bool(value)
            case "administrator": administrator = try user(value)
            case "guests": guests = try list(value, user)
            case "rooms": rooms = try list(value, string)
            case "zones": zones = try list(value, zone)
            case "accessories": accessories = try list(value, accessory)
            case "actionSets": actionSets = try list(value, actionSet)
            default: break
            }
        }
        guard let name, let administrator else { throw GiveUp() }
        return DemoHome.HomeSeed(
            name: name, primary: primary, administrator: administrator, guests: guests, rooms: rooms, zones: zones,
            accessories: accessories, actionSets: actionSets)
    }

    static func user<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome.UserSeed {
        let (account, name) = try two(node, "account", "name")
        return DemoHome.UserSeed(account: try string(account), name: try string(name))
    }

    static func zone<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome.ZoneSeed {
        let (name, rooms) = try two(node, "name", "rooms")
        return DemoHome.ZoneSeed(name: try string(name), rooms: try list(rooms, string))
    }

    static func accessory<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome.AccessorySeed {
        var id: String?
        var room: String?
        var name: String?
        try fields(node) { key, value throws(GiveUp) in
            switch key {
            case "id": id = try string(value)
            case "room": room = try string(value)
            case "name": name = try string(value)
            default: break
            }
        }
        guard let id else { throw GiveUp() }
        return DemoHome.AccessorySeed(id: id, room: room, name: name)
    }

    static func actionSet<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome.ActionSetSeed {
        let (name, actions) = try two(node, "name", "actions")
        return DemoHome.ActionSetSeed(name: try string(name), actions: try list(actions, action))
    }

    static func action<N: FastReadableNode>(_ node: N) throws(GiveUp) -> DemoHome.ActionSeed {
        var accessory: String?
        var service: String?
        var characteristic: String?
        var value: DemoHome.ScalarValue?
        try fields(node) { key, node throws(GiveUp) in
            switch key {
            case "accessory": accessory = try string(node)
            case "service": service = try string(node)
            case "characteristic": characteristic = try string(node)
            case "value":
                // In the order `ScalarValue` tries them.
                let scalar = try scalar(node)
                if let bool = Bool.construct(from: scalar) {
                    value = .init(.bool(bool))
                } else if let int = Int.construct(from: scalar) {
                    value = .init(.int(int))
                } else if let double = Double.construct(from: scalar) {
                    value = .init(.float(double))
                } else {
                    value = .init(.string(scalar.string))
                }
            default: break
            }
        }
        guard let accessory, let service, let characteristic, let value else { throw GiveUp() }
        return DemoHome.ActionSeed(accessory: accessory, service: service, characteristic: characteristic, value: value)
    }

    // MARK: Nodes

    static func fields<N: FastReadableNode>(_ node: N, _ body: (String, N) throws(GiveUp) -> Void) throws(GiveUp) {
        try node.fields(body)
    }

    /// The values of a mapping with exactly the two fields `first` and `second` (and maybe others).
    static func two<N: FastReadableNode>(_ node: N, _ first: String, _ second: String) throws(GiveUp) -> (N, N) {
        var a: N?
        var b: N?
        try node.fields { key, value throws(GiveUp) in
            if key == first { a = value } else if key == second { b = value }
        }
        guard let a, let b else { throw GiveUp() }
        return (a, b)
    }

    static func list<N: FastReadableNode, T>(_ node: N, _ element: (N) throws(GiveUp) -> T) throws(GiveUp) -> [T] {
        let items = try node.items()
        var result: [T] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try element(item)) }
        return result
    }

    static func scalar<N: FastReadableNode>(_ node: N) throws(GiveUp) -> Node.Scalar { try node.scalar() }

    static func scalar<N: FastReadableNode, T>(_ node: N, _ construct: (Node.Scalar) -> T?) throws(GiveUp) -> T {
        guard let value = construct(try node.scalar()) else { throw GiveUp() }
        return value
    }

    /// A string field: the decoder takes any scalar's text.
    static func string<N: FastReadableNode>(_ node: N) throws(GiveUp) -> String { try node.text() }

    /// A boolean field: only what resolves to `bool` (a quoted "true" is a string to the decoder).
    static func bool<N: FastReadableNode>(_ node: N) throws(GiveUp) -> Bool {
        let scalar = try node.scalar()
        guard tag(of: scalar) == .bool, let value = Bool.construct(from: scalar) else { throw GiveUp() }
        return value
    }

    /// The tag the decoder would see: a plain scalar's resolved by the default rules.
    static func tag(of scalar: Node.Scalar) -> Tag.Name {
        let explicit = scalar.tag.description
        return explicit == Tag.Name.implicit.rawValue
            ? PlainScalarTags.tag(of: scalar.string) : Tag.Name(rawValue: explicit)
    }
}
