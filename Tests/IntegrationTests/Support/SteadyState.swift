import Gateway
import HomeModel

extension RunningGateway {
    /// Everything a command or request could change: the homes' layout, users, reachability and the
    /// values of writable characteristics, one line each. Readings that move by themselves (sensors,
    /// batteries, current states) are left out, so two snapshots differ only when something acted.
    func steadyState() async -> [String] {
        await manager.allHomes().flatMap(Self.steadyState)
    }

    static func steadyState(of home: Home) -> [String] {
        var lines = ["home \(home.name) primary=\(home.isPrimary)"]
        lines += home.rooms.map { "room \($0.name)" }
        lines += home.zones.map { zone in "zone \(zone.name): \(zone.rooms.map { "\($0)" }.sorted())" }
        lines += home.users.map { "user \($0.name) \($0.role)" }
        lines += home.actionSets.map { "action set \($0.name): \($0.actions.count)" }
        for accessory in home.accessories {
            lines.append(
                "accessory \(accessory.name) in \(String(describing: accessory.room)) reachable=\(accessory.isReachable)"
            )
            for service in accessory.services {
                for characteristic in service.characteristics where characteristic.metadata.permissions.contains(.write)
                {
                    lines.append(
                        "  \(accessory.name)/\(service.name)/\(characteristic.type.rawValue)=\(String(describing: characteristic.value))"
                    )
                }
            }
        }
        return lines
    }
}
