import Foundation
import HomeModel
import Yams

/// The demo home as `Config/demo-home.yml` declares it: the virtual devices, and the homes to build
/// from them (rooms, zones, where each accessory goes, action sets, users).
///
/// ``seed(_:)`` builds the homes through the manager's ordinary operations, acting as each home's
/// administrator, so every rule applies to the demo too. It only runs on an empty database, so a
/// restarted demo keeps what users changed.
package struct DemoHome: Sendable, Hashable, Decodable {
    package var devices: [VirtualDeviceConfiguration]
    package var homes: [HomeSeed]

    /// A home to build.
    package struct HomeSeed: Sendable, Hashable, Decodable {
        package var name: String
        package var primary: Bool?
        package var administrator: UserSeed
        package var guests: [UserSeed]?
        package var rooms: [String]?
        package var zones: [ZoneSeed]?
        package var accessories: [AccessorySeed]?
        package var actionSets: [ActionSetSeed]?
    }

    package struct UserSeed: Sendable, Hashable, Decodable {
        package var account: String
        package var name: String
    }

    package struct ZoneSeed: Sendable, Hashable, Decodable {
        package var name: String
        package var rooms: [String]
    }

    /// An accessory from the browser (by device id) and where it goes.
    package struct AccessorySeed: Sendable, Hashable, Decodable {
        package var id: String
        package var room: String?
        package var name: String?
    }

    package struct ActionSetSeed: Sendable, Hashable, Decodable {
        package var name: String
        package var actions: [ActionSeed]
    }

    package struct ActionSeed: Sendable, Hashable, Decodable {
        package var accessory: String
        package var service: String
        package var characteristic: String
        package var value: ScalarValue
    }

    /// A YAML scalar read as the characteristic value it spells: `true`, `42`, `21.5` or a string.
    package struct ScalarValue: Sendable, Hashable, Decodable {
        package var value: CharacteristicValue

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) {
                value = .bool(bool)
            } else if let int = try? container.decode(Int.self) {
                value = .int(int)
            } else if let double = try? container.decode(Double.self) {
                value = .float(double)
            } else {
                value = .string(try container.decode(String.self))
            }
        }
    }

    /// Reads a demo home file.
    package static func load(contentsOf url: URL) throws -> DemoHome {
        try parse(String(contentsOf: url, encoding: .utf8))
    }

    /// Reads a demo home from YAML text; errors name the line (Yams).
    package static func parse(_ yaml: String) throws -> DemoHome {
        try YAMLDecoder().decode(DemoHome.self, from: yaml)
    }

    /// Reads a demo home from YAML already composed into a node, so a caller that needs the nodes
    /// (for the lines of its own problems) parses the text once.
    package static func decode(_ node: Node) throws -> DemoHome {
        try YAMLDecoder().decode(DemoHome.self, from: node)
    }

    /// Builds the declared homes in `manager` if it has none yet; returns whether it did. The driver
    /// must be attached first so the accessories are in the browser.
    @discardableResult
    package func seed(_ manager: HomeManager) async throws -> Bool {
        guard await manager.allHomes().isEmpty else { return false }
        for home in homes {
            let admin = home.administrator.account
            try await manager.edit(
                .addHome(name: home.name, userName: home.administrator.name), account: admin)
            for guest in home.guests ?? [] {
                try await manager.edit(
                    .addUser(home: home.name, account: guest.account, name: guest.name), account: admin)
            }
            for room in home.rooms ?? [] {
                try await manager.edit(.addRoom(home: home.name, name: room), account: admin)
            }
            for zone in home.zones ?? [] {
                try await manager.edit(.addZone(home: home.name, name: zone.name), account: admin)
                for room in zone.rooms {
                    try await manager.edit(.addRoomToZone(home: home.name, room: room, zone: zone.name), account: admin)
                }
            }
            for accessory in home.accessories ?? [] {
                try await place(accessory, home: home.name, account: admin, manager)
            }
            for actionSet in home.actionSets ?? [] {
                let actions = actionSet.actions.map {
                    ActionRequest(
                        CharacteristicReference(
                            accessory: $0.accessory, service: $0.service,
                            characteristic: CharacteristicType($0.characteristic)),
                        $0.value.value)
                }
                try await manager.edit(
                    .addActionSet(home: home.name, name: actionSet.name, actions: actions), account: admin)
            }
            if home.primary == true {
                try await manager.edit(.setPrimaryHome(home: home.name), account: admin)
            }
        }
        return true
    }

    /// Adds an accessory, or, for a bridged one its bridge already brought in, moves and renames it.
    private func place(_ seed: AccessorySeed, home: String, account: String, _ manager: HomeManager) async throws {
        let id = AccessoryID(seed.id)
        let existing = try await manager.accessory(id, home: home, account: account)
        guard let existing else {
            try await manager.edit(
                .addAccessory(home: home, id: id, room: seed.room, name: seed.name), account: account)
            return
        }
        if let room = seed.room {
            try await manager.edit(.assignAccessory(home: home, accessory: existing.name, room: room), account: account)
        }
        if let name = seed.name {
            try await manager.edit(.renameAccessory(home: home, accessory: existing.name, name: name), account: account)
        }
    }
}
