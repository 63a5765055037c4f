import Foundation
import JSON
import Testing

@testable import Gateway
@testable import HomeModel

/// A value change publishes only the topics it can change; each must be what rendering the whole
/// accessory gives, or the broker would hold a topic the next full rendering contradicts.
@Suite("The topics of one value change")
struct ValuePayloadsTests {
    static let topics = Topics()
    static let discovery = HomeAssistantDiscovery(
        discoveryPrefix: "homeassistant", nodeID: "hub", account: "homeassistant", topics: topics, version: "1.0")

    @Test(
        "for every characteristic of the demo home, with and without Home Assistant: a part of the accessory's topics")
    func partOfTheAccessory() async throws {
        let home = try await Self.demoHome()
        var checked = 0
        for homeAssistant in [nil, Self.discovery] {
            for accessory in home.accessories {
                let whole = RetainedView.accessoryPayloads(
                    accessory, in: home, topics: Self.topics, homeAssistant: homeAssistant)
                let place = (home.name, Rendering.roomName(accessory.room, in: home), accessory.name)
                for service in accessory.services {
                    for characteristic in service.characteristics {
                        let ordered = Self.valuePayloads(
                            characteristic.type, service: service.id, of: accessory, in: home, topics: Self.topics,
                            homeAssistant: homeAssistant)
                        let part = Dictionary(uniqueKeysWithValues: ordered.map { ($0.topic, $0.payload) })
                        for (topic, payload) in part {
                            #expect(whole[topic] == payload, "\(topic) differs from the accessory's rendering")
                        }
                        #expect(part[Self.topics.state(home: place.0, room: place.1, accessory: place.2)] != nil)
                        let valueTopic = Self.topics.value(
                            home: place.0, room: place.1, accessory: place.2, service: service.name,
                            characteristic: characteristic.type.rawValue)
                        #expect((part[valueTopic] != nil) == (whole[valueTopic] != nil), "\(valueTopic)")
                        if part[valueTopic] != nil { #expect(ordered.first?.topic == valueTopic, "sent first") }
                        if homeAssistant != nil {
                            let states = Self.discovery.statePayloads(for: accessory, in: home)
                            #expect(states.allSatisfy { part[$0.key] == $0.value })
                        }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 20)
        #expect(home.accessories.contains { !Self.discovery.statePayloads(for: $0, in: home).isEmpty })
    }

    @Test(
        "$state holds the published values of each service, for every accessory of the demo home and for values to escape"
    )
    func state() async throws {
        let home = try await Self.demoHome()
        var odd = try #require(home.accessories.first { $0.name == "Floor Lamp" })
        let text = CharacteristicMetadata(format: .string, permissions: [.read])
        odd.services.append(
            Service(
                id: "odd", type: .lightbulb, name: "Odd \"quoted\"",
                characteristics: [
                    Characteristic(type: .name, metadata: text, value: .string("line\nbreak \"é\" \\ \u{1}")),
                    Characteristic(type: .brightness, metadata: text, value: .float(0.1)),
                    Characteristic(type: .on, metadata: text, value: .data(Data([0, 0xFF]))),
                    Characteristic(
                        type: .hue, metadata: CharacteristicMetadata(format: .float, permissions: [.read, .hidden]),
                        value: .float(2)),
                    Characteristic(
                        type: .saturation, metadata: CharacteristicMetadata(format: .float, permissions: [.write]),
                        value: .float(3)),
                ]))
        odd.services.append(
            Service(
                id: "silent", type: .switch, name: "Silent",
                characteristics: [Characteristic(type: .on, metadata: text, value: nil)]))
        for accessory in home.accessories + [odd] {
            let expected = JSON.object(
                accessory.services.compactMap { service in
                    let values = service.characteristics.filter(\.isPublished).compactMap { characteristic in
                        characteristic.value.map { (key: characteristic.type.rawValue, value: Rendering.value($0)) }
                    }
                    return values.isEmpty ? nil : (key: service.name, value: .object(values))
                })
            #expect(Rendering.stateBytes(accessory) == expected.bytes, "\(accessory.name)")
        }
        let parsed = try JSON.parse(Rendering.stateBytes(odd))
        #expect(parsed["Odd \"quoted\""]?["Name"] == .string("line\nbreak \"é\" \\ \u{1}"))
        #expect(parsed["Odd \"quoted\""]?["On"] == .string("AP8="))
        #expect(parsed["Odd \"quoted\""]?["Hue"] == nil)
        #expect(parsed["Odd \"quoted\""]?["Saturation"] == nil)
        #expect(parsed["Silent"] == nil)
    }

    @Test("a new value shows on its topic and in $state")
    func newValue() async throws {
        let home = try await Self.demoHome()
        let lamp = try #require(home.accessories.first { $0.name == "Floor Lamp" })
        let bulb = try #require(lamp.services.first { $0.name == "Lightbulb" })
        var after = lamp
        let changed = after.setValue(.int(17), service: bulb.id, type: .brightness)
        #expect(changed)
        let part = Dictionary(
            uniqueKeysWithValues: Self.valuePayloads(
                .brightness, service: bulb.id, of: after, in: home, topics: Self.topics, homeAssistant: Self.discovery
            ).map { ($0.topic, $0.payload) })
        let room = Rendering.roomName(after.room, in: home)
        let valueTopic = Self.topics.value(
            home: home.name, room: room, accessory: after.name, service: bulb.name, characteristic: "Brightness")
        #expect(part[valueTopic] == Array("17".utf8))
        let state = try #require(part[Self.topics.state(home: home.name, room: room, accessory: after.name)])
        #expect(String(decoding: state, as: UTF8.self).contains(#""Brightness":17"#))
        #expect(part.count < RetainedView.accessoryPayloads(after, in: home, topics: Self.topics).count)
    }

    /// What the publisher sends after a new value, in its order: the value topic, then the states.
    private static func valuePayloads(
        _ type: CharacteristicType, service: ServiceID, of accessory: Accessory, in home: Home, topics: Topics,
        homeAssistant: HomeAssistantDiscovery?
    ) -> [(topic: String, payload: [UInt8])] {
        let value = RetainedView.valuePayload(type, service: service, of: accessory, in: home, topics: topics)
        return (value.map { [$0] } ?? [])
            + RetainedView.statePayloads(of: accessory, in: home, topics: topics, homeAssistant: homeAssistant)
    }

    private static func demoHome() async throws -> Home {
        try await DemoFixture.mainHouse(in: DemoFixture.seeded().manager)
    }
}
