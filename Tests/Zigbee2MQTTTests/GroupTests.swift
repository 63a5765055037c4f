import Foundation
import HomeModel
import JSON
import Testing

@testable import Zigbee2MQTT

/// zigbee2mqtt's groups as accessories: its recorded `bridge/groups` (zigbee2mqtt 2.12.1's test
/// "Should publish groups on startup", Sources/Zigbee2MQTTStandIn/Recordings/bridge-other.jsonl) over its recorded
/// `bridge/devices`.
struct GroupTests {
    static let recordedGroups: JSON = {
        let lines = try! String(
            contentsOfFile: "\(ExposeMappingTests.fixtures)/bridge-other.jsonl", encoding: .utf8
        ).split(separator: "\n")
        for line in lines {
            let record = try! JSON.parse(String(line))
            if record["topic"]?.stringValue == "zigbee2mqtt/bridge/groups",
                let payload = record["payload"]?["$stringify"]
            {
                return payload
            }
        }
        fatalError("no recorded bridge/groups")
    }()

    static func group(_ name: String) throws -> GroupDescription {
        guard case .array(let entries) = recordedGroups,
            let entry = entries.first(where: { $0["friendly_name"]?.stringValue == name })
        else { throw Zigbee2MQTTPayloadError("no recorded group \(name)") }
        return try GroupDescription(entry)
    }

    static func members(_ group: GroupDescription) -> [DeviceDescription] {
        group.members.compactMap { ieee in ExposeMappingTests.devices.first { $0.ieeeAddress == ieee } }
    }

    @Test("the recorded bridge/groups is read; the entry whose id the recording left unresolved is named, not guessed")
    func list() throws {
        let (groups, problems) = try GroupDescription.list(Array(Self.recordedGroups.serialized.utf8))
        #expect(groups.map(\.friendlyName).prefix(4) == ["group_1", "group_2", "group_tradfri_remote", "99"])
        #expect(groups.count == 10)
        #expect(problems == ["a group entry has no numeric id"])
        let remote = try Self.group("group_tradfri_remote")
        #expect(remote.accessoryKey == "group:15071")
        #expect(remote.members == ["0x000b57fffec6a5b4", "0x000b57fffec6a5b7"])
        #expect(throws: Zigbee2MQTTPayloadError.self) { try GroupDescription.list(Array("{}".utf8)) }
    }

    @Test("a group of lights is one light with what its members offer, on the group's plain properties")
    func lightGroup() throws {
        // group_tradfri_remote: bulb_color_2 (a Hue colour bulb) and a device the list does not have
        let group = try Self.group("group_tradfri_remote")
        let members = Self.members(group)
        #expect(members.map(\.friendlyName) == ["bulb_color_2"])
        let description = try #require(group.asDevice(members: members))
        let mapped = ExposeMapping.map(description)
        #expect(mapped.accessory.id == "group:15071")
        #expect(mapped.accessory.name == "group tradfri remote")
        #expect(mapped.accessory.category == .lightbulb)
        #expect(mapped.accessory.manufacturer == "zigbee2mqtt" && mapped.accessory.model == "Group")
        let light = try #require(mapped.accessory.services.first { $0.type == .lightbulb })
        #expect(light.characteristic(.on) != nil && light.characteristic(.brightness) != nil)
        #expect(light.characteristic(.colorTemperature) != nil)
        // The group's state publish (recorded for group_tradfri_remote) moves it
        let (values, problems) = mapped.values(in: try JSON.parse(#"{"state":"ON"}"#))
        #expect(problems.isEmpty)
        #expect(values.contains { $0.characteristic == .on && $0.value == .bool(true) })
    }

    @Test(
        "a member's endpoint lights and covers join the group as its plain light and cover; a sensor or an unknown member makes no group"
    )
    func endpointsAndSensors() throws {
        let zigfred = try #require(ExposeMappingTests.devices.first { $0.friendlyName == "zigfred_plus" })
        let sensor = try #require(ExposeMappingTests.devices.first { $0.friendlyName == "weather_sensor" })
        var group = try Self.group("group_1")
        group.members = [zigfred.ieeeAddress, sensor.ieeeAddress]
        let description = try #require(group.asDevice(members: [zigfred, sensor]))
        // zigfred: five lights on l1...l5 and two covers on l6, l7; one of each kind
        #expect(description.exposes.map(\.type) == ["light", "cover"])
        let properties = description.exposes.flatMap { $0.features.compactMap(\.property) }
        #expect(properties.contains("state") && properties.contains("brightness"), "\(properties)")
        #expect(properties.contains("position"), "\(properties)")
        #expect(!properties.contains { $0.contains("_l") }, "\(properties)")
        let services = ExposeMapping.map(description).accessory.services
        #expect(services.filter { $0.type == .lightbulb }.count == 1)
        #expect(services.filter { $0.type == .windowCovering }.count == 1)

        #expect(group.asDevice(members: [sensor]) == nil)
        #expect(group.asDevice(members: []) == nil)
    }

    /// A light controller as a real network lists it (HGZB-01, "Smart Zigbee 3.0 light controller",
    /// zigbee2mqtt-frontend's onConnect capture): a `switch` expose, no power reading.
    static func lightController(_ ieee: String, named name: String) throws -> DeviceDescription {
        try DeviceDescription(
            try JSON.parse(
                #"""
                {"ieee_address": "\#(ieee)", "friendly_name": "\#(name)", "type": "Router", "interview_completed": true,
                 "supported": true, "definition": {"vendor": "Smart Home Pty", "model": "HGZB-01",
                 "description": "Smart Zigbee 3.0 light controller",
                 "exposes": [{"type": "switch", "features": [{"access": 7, "name": "state", "property": "state",
                   "type": "binary", "value_off": "OFF", "value_on": "ON", "value_toggle": "TOGGLE"}]}]}}
                """#))
    }

    @Test("a group's kind comes from its members' exposes and types, never from their names")
    func kindFromMembersNotNames() throws {
        var group = try Self.group("group_1")
        // Light controllers their owner named "Plug 1" and "Socket 2": a switch, not an outlet
        let plug = try Self.lightController("0x0000000000000011", named: "Plug 1")
        let socket = try Self.lightController("0x0000000000000012", named: "Socket 2")
        group.members = [plug.ieeeAddress, socket.ieeeAddress]
        let named = ExposeMapping.map(try #require(group.asDevice(members: [plug, socket])))
        #expect(named.accessory.category == .switch)
        #expect(named.accessory.services.map(\.type) == [.switch])

        // The recorded Mi smart plug, whatever it is called, makes a group of outlets
        var power = try #require(ExposeMappingTests.devices.first { $0.friendlyName == "power_plug" })
        power.friendlyName = "Desk Lamp"
        group.members = [power.ieeeAddress]
        let outlets = ExposeMapping.map(try #require(group.asDevice(members: [power])))
        #expect(outlets.accessory.category == .outlet)
        #expect(outlets.accessory.services.map(\.type) == [.outlet])

        // A plug beside a light controller: not every member is an outlet, so a switch
        let mixed = ExposeMapping.map(try #require(group.asDevice(members: [power, plug])))
        #expect(mixed.accessory.category == .switch)
    }
}
