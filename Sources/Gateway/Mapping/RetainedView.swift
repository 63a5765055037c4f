import HomeModel
import JSON

/// The retained topics of the MQTT contract (docs/mqtt.md) and their payloads, computed from the
/// home model: what the broker must hold under the base topic for a client that subscribes to `B/#`
/// to see exactly the home. Pure: the publisher compares two of these to know what to send and what to clear.
package struct RetainedView: Sendable, Equatable {
    /// Topic → payload (never empty: an empty retained payload clears a topic).
    package private(set) var payloads: [String: [UInt8]] = [:]

    package init() {}

    /// Everything: `$homes`, `$discovered`, and per home its `$layout` and every accessory's values,
    /// `$reachable` and `$state`; with Home Assistant discovery also every discovery config (under
    /// its prefix) and every `$ha` state.
    package init(
        homes: [Home], discovered: [Accessory], topics: Topics, homeAssistant: HomeAssistantDiscovery? = nil
    ) {
        var fragments = LayoutFragments()
        self.init(
            merging: Self.parts(
                homes: homes, discovered: discovered, topics: topics, homeAssistant: homeAssistant,
                fragments: &fragments))
    }

    /// The view made of its parts.
    package init(merging parts: [Part: [String: [UInt8]]]) {
        payloads.reserveCapacity(parts.values.reduce(0) { $0 + $1.count })
        for (_, part) in parts { payloads.merge(part) { _, new in new } }
    }

    /// What one part of the view depends on, so that a change renders only the parts it touches:
    /// `$homes` and `$discovered`; a home's `$layout` and scenes; an accessory's topics and configs.
    package enum Part: Hashable, Sendable {
        case global
        case home(HomeID)
        case accessory(AccessoryID)
    }

    /// The whole view, part by part, the layouts' accessory entries from `fragments`. Each part is
    /// handed to `rendered` as soon as it is rendered, so a caller can send it while the rest is
    /// rendered: the global one first, then each home's accessories, then the home's (its `$layout`
    /// takes the longest to render: at 10,000 accessories the broker starts on the accessories' topics
    /// some 40 ms earlier than after it).
    static func parts(
        homes: [Home], discovered: [Accessory], topics: Topics, homeAssistant: HomeAssistantDiscovery?,
        fragments: inout LayoutFragments, rendered: (Part, [String: [UInt8]]) -> Void = { _, _ in }
    ) -> [Part: [String: [UInt8]]] {
        var parts: [Part: [String: [UInt8]]] = [:]
        func add(_ part: Part, _ payloads: [String: [UInt8]]) {
            parts[part] = payloads
            rendered(part, payloads)
        }
        add(.global, globalPayloads(homes: homes, discovered: discovered, topics: topics))
        for home in homes {
            for accessory in home.accessories {
                add(
                    .accessory(accessory.id),
                    accessoryPayloads(accessory, in: home, topics: topics, homeAssistant: homeAssistant))
            }
            add(.home(home.id), homePayloads(home, topics: topics, homeAssistant: homeAssistant, fragments: &fragments))
        }
        return parts
    }

    /// `$homes` and `$discovered`.
    static func globalPayloads(homes: [Home], discovered: [Accessory], topics: Topics) -> [String: [UInt8]] {
        [topics.homes: Rendering.homes(homes).bytes, topics.discovered: Rendering.discovered(discovered).bytes]
    }

    /// A home's `$layout`, its accessory entries from `fragments` (rendered only where they changed),
    /// and its action sets and automations as Home Assistant scenes and switches.
    static func homePayloads(
        _ home: Home, topics: Topics, homeAssistant: HomeAssistantDiscovery?, fragments: inout LayoutFragments
    ) -> [String: [UInt8]] {
        var payloads = [topics.layout(home: home.name): Rendering.layoutBytes(home, fragments: &fragments)]
        for config in homeAssistant?.homeConfigs(for: home) ?? [] { payloads[config.topic] = config.payload.bytes }
        return payloads
    }

    /// One accessory's part of the view: each readable value, `$reachable` and `$state` (and its `$ha`
    /// states and discovery configs).
    static func accessoryPayloads(
        _ accessory: Accessory, in home: Home, topics: Topics, homeAssistant: HomeAssistantDiscovery? = nil
    ) -> [String: [UInt8]] {
        let room = Rendering.roomName(accessory.room, in: home)
        var payloads: [String: [UInt8]] = [:]
        for service in accessory.services {
            // An event (a press) is never retained, also one an older gateway stored.
            for characteristic in service.characteristics where !characteristic.type.isEvent {
                if let (topic, payload) = valuePayload(
                    characteristic, of: service, accessory, room: room, in: home, topics)
                {
                    payloads[topic] = payload
                }
            }
        }
        payloads[topics.reachable(home: home.name, room: room, accessory: accessory.name)] =
            Array((accessory.isReachable ? "true" : "false").utf8)
        for (topic, payload) in statePayloads(of: accessory, in: home, topics: topics, homeAssistant: homeAssistant) {
            payloads[topic] = payload
        }
        for config in homeAssistant?.accessoryConfigs(for: accessory, in: home) ?? [] {
            payloads[config.topic] = config.payload.bytes
        }
        return payloads
    }

    /// The value topic of one characteristic after a new value, as
    /// ``accessoryPayloads(_:in:topics:homeAssistant:)`` renders it; nil when it has no value or no
    /// topic. With ``statePayloads(of:in:topics:homeAssistant:)`` it is all a new value can change,
    /// rendered without the accessory's other values; the publisher sends it first and writes it
    /// before rendering the states (a client that wrote the value waits for it).
    static func valuePayload(
        _ type: CharacteristicType, service: ServiceID, of accessory: Accessory, in home: Home, topics: Topics
    ) -> (topic: String, payload: [UInt8])? {
        guard let service = accessory.services.first(where: { $0.id == service }),
            let characteristic = service.characteristics.first(where: { $0.type == type })
        else { return nil }
        let room = Rendering.roomName(accessory.room, in: home)
        return valuePayload(characteristic, of: service, accessory, room: room, in: home, topics)
    }

    /// The accessory's `$state` and, when Home Assistant is told of it, its `$ha` states, as
    /// ``accessoryPayloads(_:in:topics:homeAssistant:)`` renders them: what a new value changes
    /// besides its value topic.
    static func statePayloads(
        of accessory: Accessory, in home: Home, topics: Topics, homeAssistant: HomeAssistantDiscovery? = nil
    ) -> [(topic: String, payload: [UInt8])] {
        let state = (
            topic: topics.state(
                home: home.name, room: Rendering.roomName(accessory.room, in: home), accessory: accessory.name),
            payload: Rendering.stateBytes(accessory)
        )
        guard let homeAssistant else { return [state] }
        return [state]
            + homeAssistant.statePayloads(for: accessory, in: home).map { (topic: $0.key, payload: $0.value) }
    }

    /// A published characteristic's value topic and payload; nil when it has no value or no topic.
    private static func valuePayload(
        _ characteristic: Characteristic, of service: Service, _ accessory: Accessory, room: String, in home: Home,
        _ topics: Topics
    ) -> (topic: String, payload: [UInt8])? {
        guard characteristic.isPublished, let value = characteristic.value else { return nil }
        let topic = topics.value(
            home: home.name, room: room, accessory: accessory.name, service: service.name,
            characteristic: characteristic.type.rawValue)
        let text = Array(value.plainText.utf8)
        // An empty string cannot be retained (it would clear the topic); JSON's "" stands in.
        return (topic, text.isEmpty ? Array("\"\"".utf8) : text)
    }

    /// What to publish and what to clear to go from `old` to `self`.
    package func changes(from old: RetainedView) -> (publish: [(topic: String, payload: [UInt8])], clear: [String]) {
        let publish = payloads.filter { old.payloads[$0.key] != $0.value }.sorted { $0.key < $1.key }
            .map { (topic: $0.key, payload: $0.value) }
        let clear = old.payloads.keys.filter { payloads[$0] == nil }.sorted()
        return (publish, clear)
    }

    package subscript(topic: String) -> [UInt8]? {
        get { payloads[topic] }
        set { payloads[topic] = newValue }
    }

    /// Sets `topic`'s payload and returns the one it had: one lookup where reading and then setting
    /// take two.
    mutating func updateValue(_ payload: [UInt8], forTopic topic: String) -> [UInt8]? {
        payloads.updateValue(payload, forKey: topic)
    }

    package var topics: Set<String> { Set(payloads.keys) }
}

extension Characteristic {
    /// Readable and not hidden: such a value gets a topic and a place in `$state`.
    var isPublished: Bool {
        metadata.permissions.contains(.read) && !metadata.permissions.contains(.hidden)
    }
}
