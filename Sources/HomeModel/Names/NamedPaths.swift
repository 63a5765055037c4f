/// Where an accessory sits, as a client spells it: the names of its home, its room
/// (``HomeName/defaultRoom`` for the room for the entire home) and itself. Matched to the model with
/// ``HomeName/matches(_:_:)`` by the lookups below, whose errors are the answers a client gets.
package struct AccessoryPath: Sendable, Hashable {
    package var home: String
    package var room: String
    package var accessory: String

    package init(home: String, room: String, accessory: String) {
        self.home = home
        self.room = room
        self.accessory = accessory
    }
}

/// One characteristic of an accessory, named as a client spells it: the service by its name, the
/// characteristic by its type's name (`On`, `Brightness`).
package struct CharacteristicPath: Sendable, Hashable {
    package var accessory: AccessoryPath
    package var service: String
    package var characteristic: String

    package init(_ accessory: AccessoryPath, service: String, characteristic: String) {
        self.accessory = accessory
        self.service = service
        self.characteristic = characteristic
    }
}

extension Home {
    /// The accessory that `name` names, or `notFound`.
    package func accessory(named name: String) throws(HomeError) -> Accessory {
        accessories[try HomeGraph.accessoryIndex(name, in: self)]
    }

    /// The accessory `path` names, which must be in the room the path names (the home is this one).
    package func accessory(at path: AccessoryPath) throws(HomeError) -> Accessory {
        let accessory = try accessory(named: path.accessory)
        let room = accessory.room.flatMap { self.room($0)?.name } ?? defaultRoom.name
        guard HomeName.matches(room, path.room) else {
            throw HomeError(.notFound, "'\(accessory.name)' is in room '\(room)', not '\(path.room)'.")
        }
        return accessory
    }
}

extension Accessory {
    /// The service whose name matches `name` (HomeKit's name comparison) or whose identifier it is,
    /// or `notFound`.
    package func service(named name: String) throws(HomeError) -> Service {
        guard
            let service = services.first(where: { HomeName.matches($0.name, name) })
                ?? services.first(where: { $0.id.rawValue == name })
        else {
            throw HomeError(.notFound, "The accessory '\(self.name)' has no service named '\(name)'.")
        }
        return service
    }

    /// The service `serviceName` names and its characteristic whose type `name` names (compared as
    /// names are), or `notFound`.
    package func characteristic(named name: String, service serviceName: String) throws(HomeError)
        -> (Service, Characteristic)
    {
        let service: Service = try service(named: serviceName)
        guard let characteristic = service.characteristics.first(where: { HomeName.matches($0.type.rawValue, name) })
        else {
            throw HomeError(
                .notFound, "The service '\(service.name)' of '\(self.name)' has no characteristic '\(name)'.")
        }
        return (service, characteristic)
    }
}
