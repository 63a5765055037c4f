import HomeModel
import JSON

/// Home Assistant's MQTT discovery for the homes: which entity each service becomes, its retained
/// config under `<prefix>/<component>/<node id>/<object id>/config`, and the state topics those
/// configs read. Pure: computed from model snapshots, published by ``RetainedPublisher``.
///
/// Object ids and `unique_id`s are built from the accessory's and service's ids, never from names,
/// so a rename or a move republishes the same config topic with the new topics, device name and area,
/// and Home Assistant keeps the entity (with its history and customisations).
package struct HomeAssistantDiscovery: Sendable, Hashable {
    package let discoveryPrefix: String
    package let nodeID: String
    /// The account every command topic in the configs carries, so Home Assistant is checked like anyone.
    package let account: String
    package let topics: Topics
    /// homegate's version, announced as the configs' `origin`.
    package let version: String

    package init(discoveryPrefix: String, nodeID: String, account: String, topics: Topics, version: String) {
        self.discoveryPrefix = discoveryPrefix
        self.nodeID = nodeID
        self.account = account
        self.topics = topics
        self.version = version
    }

    /// `<prefix>/status`: Home Assistant's birth (`online`) and will (`offline`).
    var statusTopic: String { "\(discoveryPrefix)/status" }

    /// Every config topic this gateway may own, whatever the component: for reading back what the
    /// broker holds, so configs of things that are gone can be cleared at start.
    package var configFilter: String { "\(discoveryPrefix)/+/\(nodeID)/+/config" }

    /// Whether `home` is announced at all: only homes Home Assistant's account is a user of. Home
    /// Assistant reads every config under the prefix, so announcing another home would show it
    /// names and devices it may not see, as entities it may not use.
    func announces(_ home: Home) -> Bool { home.role(of: account) != nil }

    /// The services of `home` that no Home Assistant component fits (they are not announced).
    func unmappedServices(in home: Home) -> [(accessory: Accessory, service: Service)] {
        home.accessories.flatMap { accessory in
            accessory.services.filter {
                HomeAssistantEntities.mapping(of: $0) == nil && $0.characteristic(.programmableSwitchEvent) == nil
            }.map { (accessory, $0) }
        }
    }

    /// The `$ha` state topics of one accessory: each mapped service's state in Home Assistant's words.
    func statePayloads(for accessory: Accessory, in home: Home) -> [String: [UInt8]] {
        guard announces(home) else { return [:] }
        let place = Place(accessory, in: home, topics: topics)
        var payloads: [String: [UInt8]] = [:]
        for service in accessory.services {
            if let state = HomeAssistantState.state(of: service) {
                payloads[place.stateTopic(service)] = state.bytes
            }
        }
        return payloads
    }

    // MARK: Configs

    /// The home's own entities: its action sets as scenes, and its automations as switches when Home
    /// Assistant's account is the home's administrator (only an administrator may turn one on or off;
    /// a guest would see switches that only fail). None for a home Home Assistant does not see.
    func homeConfigs(for home: Home) -> [DiscoveryConfig] {
        guard announces(home) else { return [] }
        let scenes = home.actionSets.map { scene($0, in: home) }
        guard home.role(of: account) == .administrator else { return scenes }
        return scenes + home.triggers.map { automationSwitch($0, in: home) }
    }

    /// The configs of one accessory's entities (its identify button too); none for a home Home
    /// Assistant does not see.
    func accessoryConfigs(for accessory: Accessory, in home: Home) -> [DiscoveryConfig] {
        guard announces(home) else { return [] }
        let place = Place(accessory, in: home, topics: topics)
        let mapped = accessory.services.filter { HomeAssistantEntities.mapping(of: $0) != nil }
        let primaries = mapped.filter { $0.type != .battery }
        var configs: [DiscoveryConfig] = []
        for service in mapped {
            // The one main service of an accessory takes the device's name; others say which they are.
            let name: JSON = primaries.count == 1 && service.type != .battery ? .null : .string(service.name)
            let context = HomeAssistantEntities.Context(
                service: service, name: name, stateTopic: place.stateTopic(service),
                commandTopic: { place.valueTopic($0, service: service) + "/set/\(account)" },
                lightCommandTopic: place.stateTopic(service) + "/set/\(account)")
            for entity in HomeAssistantEntities.entities(for: context) {
                configs.append(
                    config(
                        entity, objectID: objectID(accessory.id.rawValue, service.id.rawValue, entity.suffix),
                        device: device(place), reachableTopic: place.reachableTopic))
            }
        }
        configs += accessory.services.flatMap { pressTriggers(of: $0, place: place) }
        let identify = HomeAssistantEntities.Entity(
            component: "button", suffix: "identify",
            fields: [
                ("name", .string("Identify")), ("device_class", .string("identify")),
                ("entity_category", .string("config")),
                ("command_topic", .string(place.accessoryTopic + "/$identify/\(account)")),
                ("payload_press", .string("PRESS")),
            ])
        configs.append(
            config(
                identify, objectID: objectID(accessory.id.rawValue, identify.suffix), device: device(place),
                reachableTopic: place.reachableTopic))
        return configs
    }

    /// `entity`'s config: its fields with its unique id after its name, when it is available (the
    /// gateway online and, for an accessory's entity, the accessory reachable), its device, origin
    /// and QoS.
    private func config(
        _ entity: HomeAssistantEntities.Entity, objectID: String, device: JSON, reachableTopic: String? = nil
    ) -> DiscoveryConfig {
        var members: [(key: String, value: JSON)] = entity.fields
        members.insert(("unique_id", .string("\(nodeID)_\(objectID)")), at: 1)
        let online = availability(topics.status, available: "online", notAvailable: "offline")
        if let reachableTopic {
            let reachable = availability(reachableTopic, available: "true", notAvailable: "false")
            members += [("availability", .array([online, reachable])), ("availability_mode", .string("all"))]
        } else {
            members.append(("availability", .array([online])))
        }
        let origin = JSON.object([("name", .string("homegate")), ("sw_version", .string(version))])
        members += [("device", device), ("origin", origin), ("qos", .integer(1))]
        return DiscoveryConfig(
            topic: "\(discoveryPrefix)/\(entity.component)/\(nodeID)/\(objectID)/config", payload: .object(members))
    }

    /// A button's presses as device triggers (`device_automation`): one a press its button knows,
    /// matched by the value its (not retained) ProgrammableSwitchEvent topic carries.
    private func pressTriggers(of service: Service, place: Place) -> [DiscoveryConfig] {
        guard let press = service.characteristic(.programmableSwitchEvent) else { return [] }
        let types = [0: "button_short_press", 1: "button_double_press", 2: "button_long_press"]
        return (press.metadata.validValues ?? [0, 1, 2]).compactMap { event in
            guard let type = types[event] else { return nil }
            let objectID = objectID(place.accessory.id.rawValue, service.id.rawValue, "press", String(event))
            let payload = JSON.object([
                ("automation_type", .string("trigger")),
                ("topic", .string(place.valueTopic(.programmableSwitchEvent, service: service))),
                ("payload", .string(String(event))),
                ("type", .string(type)),
                ("subtype", .string(service.name)),
                ("device", device(place)),
                ("qos", .integer(1)),
            ])
            return DiscoveryConfig(
                topic: "\(discoveryPrefix)/device_automation/\(nodeID)/\(objectID)/config", payload: payload)
        }
    }

    /// An action set as a scene of the home's own device; it needs only the gateway to be online.
    private func scene(_ actionSet: ActionSet, in home: Home) -> DiscoveryConfig {
        let fields: [(key: String, value: JSON)] = [
            ("name", .string(actionSet.name)),
            ("command_topic", .string(topics.runActionSet(home: home.name, actionSet: actionSet.name) + "/\(account)")),
            ("payload_on", .string("ON")),
        ]
        return config(
            .init(component: "scene", suffix: nil, fields: fields),
            objectID: objectID(home.id.rawValue, "actionset", actionSet.id.rawValue), device: homeDevice(home))
    }

    /// An automation's on/off as a switch of the home's device: its state read from `$layout`'s
    /// `enabled`, its command an `enableTrigger` request as Home Assistant's account. Keyed by the
    /// automation's id, so a rename keeps the entity.
    private func automationSwitch(_ trigger: Trigger, in home: Home) -> DiscoveryConfig {
        // A JSON string is a Jinja string too: the names go into both templates quoted as JSON.
        let (homeText, nameText) = (JSON.string(home.name).serialized, JSON.string(trigger.name).serialized)
        let fields: [(key: String, value: JSON)] = [
            ("name", .string(trigger.name)),
            ("icon", .string("mdi:robot")),
            ("state_topic", .string(topics.layout(home: home.name))),
            (
                "value_template",
                .string(
                    "{{ 'ON' if value_json.triggers | selectattr('name', 'eq', \(nameText)) | selectattr('enabled') | list else 'OFF' }}"
                )
            ),
            ("command_topic", .string(topics.request("enableTrigger", account: account))),
            (
                "command_template",
                .string(
                    #"{"home":\#(homeText),"trigger":\#(nameText),"enabled":{{ 'true' if value == 'ON' else 'false' }} }"#
                )
            ),
        ]
        return config(
            .init(component: "switch", suffix: nil, fields: fields),
            objectID: objectID(home.id.rawValue, "trigger", trigger.id.rawValue), device: homeDevice(home))
    }

    private func availability(_ topic: String, available: String, notAvailable: String) -> JSON {
        .object([
            ("topic", .string(topic)), ("payload_available", .string(available)),
            ("payload_not_available", .string(notAvailable)),
        ])
    }

    /// One device per accessory: its maker and model, the accessory id as serial number, its room as
    /// the suggested area (none for the default room), and its bridge as `via_device`.
    private func device(_ place: Place) -> JSON {
        let accessory = place.accessory
        var members: [(key: String, value: JSON)] = [
            ("identifiers", .array([.string(deviceIdentifier(accessory.id))])),
            ("name", .string(accessory.name)),
        ]
        if !accessory.manufacturer.isEmpty { members.append(("manufacturer", .string(accessory.manufacturer))) }
        if !accessory.model.isEmpty { members.append(("model", .string(accessory.model))) }
        members.append(("serial_number", .string(accessory.id.rawValue)))
        if !place.isDefaultRoom { members.append(("suggested_area", .string(place.room))) }
        if let bridge = accessory.bridge { members.append(("via_device", .string(deviceIdentifier(bridge)))) }
        return .object(members)
    }

    /// The home as a device of its own: its scenes and automations belong to it.
    private func homeDevice(_ home: Home) -> JSON {
        .object([
            ("identifiers", .array([.string("\(nodeID)_home_\(home.id.rawValue)")])),
            ("name", .string(home.name)),
            ("manufacturer", .string("homegate")),
            ("model", .string("Home")),
        ])
    }

    private func deviceIdentifier(_ accessory: AccessoryID) -> String { "\(nodeID)_\(accessory.rawValue)" }

    /// An object id from ids: Home Assistant allows letters, digits, `_` and `-`. An id with other
    /// characters is cleaned and gets a hash of the original, so two ids never clean to the same one.
    func objectID(_ parts: String?...) -> String {
        let raw = parts.compactMap { $0 }.joined(separator: "_")
        if raw.unicodeScalars.allSatisfy(Self.isAllowedInObjectID) { return raw }
        let cleaned = String(raw.unicodeScalars.map { Self.isAllowedInObjectID($0) ? Character($0) : "_" })
        return "\(cleaned)_\(String(fnv1a(raw), radix: 16))"
    }

    private static func isAllowedInObjectID(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "_" || scalar == "-"
    }

    private func fnv1a(_ text: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }
}

/// One retained discovery config, on `<prefix>/<component>/<node id>/<object id>/config`.
struct DiscoveryConfig: Sendable, Hashable {
    let topic: String
    let payload: JSON
}

/// Where an accessory sits in the topic tree, and the topics the configs point at.
private struct Place {
    let accessory: Accessory
    let home: Home
    let room: String
    let isDefaultRoom: Bool
    let topics: Topics

    init(_ accessory: Accessory, in home: Home, topics: Topics) {
        self.accessory = accessory
        self.home = home
        self.topics = topics
        room = Rendering.roomName(accessory.room, in: home)
        isDefaultRoom = accessory.room == nil || accessory.room == home.defaultRoom.id
    }

    var reachableTopic: String { topics.reachable(home: home.name, room: room, accessory: accessory.name) }

    func stateTopic(_ service: Service) -> String {
        topics.homeAssistantState(home: home.name, room: room, accessory: accessory.name, service: service.name)
    }

    func valueTopic(_ type: CharacteristicType, service: Service) -> String {
        topics.value(
            home: home.name, room: room, accessory: accessory.name, service: service.name,
            characteristic: type.rawValue)
    }

    var accessoryTopic: String { topics.accessory(home: home.name, room: room, accessory: accessory.name) }
}
