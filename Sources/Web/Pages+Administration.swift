import HomeModel

/// The administrator's part of a home page: new accessories, rooms and zones, users.
extension Pages {
    /// For each button of `accessory`, a form that binds one of its presses to a scene (an
    /// automation); none while the home has no scene.
    static func pressAutomationForms(_ accessory: Accessory, context: HomeContext) -> [Request] {
        let scenes = context.home.actionSets.map { Option(value: $0.name, text: $0.name) }
        guard !scenes.isEmpty else { return [] }
        return accessory.services.compactMap { service in
            guard let press = service.characteristic(.programmableSwitchEvent) else { return nil }
            let presses = (press.metadata.validValues ?? [0, 1, 2]).compactMap { value in
                CharacteristicType.programmableSwitchEvent.name(of: value).map {
                    Option(value: String(value), text: $0)
                }
            }
            let button = accessory.services.count > 1 ? " (\(service.name))" : ""
            return Request(
                operation: "addTrigger",
                fields: [
                    ("home", context.home.name), ("accessory", accessory.name), ("service", service.name),
                    ("characteristic", CharacteristicType.programmableSwitchEvent.rawValue),
                ],
                inputs: [("name", "Automation name")],
                selects: [("value", "Press\(button)", presses), ("actionSets", "Scene to run", scenes)],
                button: "Run the scene on this press")
        }
    }

    /// An automation in words: "When Hall Button (Button) reports Single press, run Lamp On."
    static func automationText(_ trigger: Trigger, in home: Home) -> String {
        let scenes = trigger.actionSets.compactMap { home.actionSet($0)?.name }
        let run = scenes.isEmpty ? "nothing (its scenes were removed)" : scenes.joined(separator: ", then ")
        let options = optionsText(trigger, in: home)
        if let schedule = trigger.event.schedule { return "\(scheduleText(schedule)), run \(run)\(options)." }
        guard let event = trigger.event.characteristic else { return "Run \(run)\(options)." }
        let accessory = home.accessory(event.accessory)
        let source = sourceName(accessory, accessory?.service(event.service))
        let change: String
        if case .threshold(_, let range) = trigger.event {
            let bounds = [
                range.minimum.map { "at least \(number($0))" }, range.maximum.map { "at most \(number($0))" },
            ]
            change =
                "\(words(event.characteristic.rawValue).lowercased()) comes to \(bounds.compactMap { $0 }.joined(separator: " and "))"
        } else if case .characteristic(_, let value?) = trigger.event {
            let text = valueText(value, type: event.characteristic).text
            change =
                event.characteristic.isEvent
                ? "reports \(text)" : "\(words(event.characteristic.rawValue).lowercased()) becomes \(text)"
        } else {
            change = "\(words(event.characteristic.rawValue).lowercased()) changes"
        }
        return "When \(source) \(change), run \(run)\(options)."
    }

    /// The administrator's part of a home page (administration.mustache): new accessories, rooms and
    /// zones, users.
    struct Administration {
        let discovered: [(name: String, maker: String, form: Request)]
        let joinOpenUntil: Int?
        let permitJoin, addRoom, addZone, addUser: Request
        let zones: [(name: String, rooms: String, forms: [Request])]
        let users: [(name: String, role: String, forms: [Request])]
        let homekit: HomeKitPairing?
    }

    static func administration(_ context: HomeContext) -> Administration {
        let home = context.home
        let rooms = home.allRooms.map { Option(value: $0.isDefault ? "" : $0.name, text: roomName($0)) }
        let discovered = context.discovered.map { accessory in
            let maker = [accessory.manufacturer, accessory.model].filter { !$0.isEmpty }.joined(separator: " ")
            // HomeKit: the setup code on the accessory or its box, XXX-XX-XXX.
            let form =
                accessory.needsPairing
                ? Request(
                    operation: "pairAccessory", fields: [("home", home.name), ("id", accessory.id.rawValue)],
                    inputs: [("setupCode", "Setup code XXX-XX-XXX")], selects: [("room", nil, rooms)],
                    button: "Pair and add to \(home.name)")
                : Request(
                    operation: "addAccessory", fields: [("home", home.name), ("accessory", accessory.id.rawValue)],
                    selects: [("room", nil, rooms)], button: "Add to \(home.name)")
            return (name: accessory.name, maker: maker, form: form)
        }
        let zones = home.zones.map { zone in
            let fields: [Field] = [("home", home.name), ("zone", zone.name)]
            let inZone = home.rooms.filter { zone.rooms.contains($0.id) }.map(\.name)
            let outside = home.rooms.filter { !zone.rooms.contains($0.id) }.map {
                Option(value: $0.name, text: $0.name)
            }
            let add = Request(
                operation: "addRoomToZone", fields: fields, selects: [("room", nil, outside)], button: "Add room")
            let remove = Request(
                operation: "removeZone", fields: fields, button: "Remove zone", confirm: "Remove the zone \(zone.name)?"
            )
            let rooms = inZone.isEmpty ? "no rooms" : inZone.joined(separator: ", ")
            return (name: zone.name, rooms: rooms, forms: (outside.isEmpty ? [] : [add]) + [remove])
        }
        let users = home.users.map { user in
            let remove = Request(
                operation: "removeUser", fields: [("home", home.name), ("userId", user.id.rawValue)], button: "Remove",
                confirm: "Remove \(user.name) from \(home.name)? They can no longer see it.")
            return (name: user.name, role: user.role.rawValue, forms: user.role == .administrator ? [] : [remove])
        }
        return Administration(
            discovered: discovered, joinOpenUntil: context.joinOpenUntil,
            permitJoin: Request(
                operation: "permitJoin", fields: [("seconds", "120")], button: "Allow joining for 2 minutes"),
            addRoom: Request(
                operation: "addRoom", fields: [("home", home.name)], inputs: [("name", "Room name")], button: "Add room"
            ),
            addZone: Request(
                operation: "addZone", fields: [("home", home.name)], inputs: [("name", "Zone name")], button: "Add zone"
            ),
            addUser: Request(
                operation: "addUser", fields: [("home", home.name)],
                inputs: [("account", "Account"), ("name", "Name")],
                button: "Add guest"),
            zones: zones, users: users, homekit: context.homekit)
    }
}
