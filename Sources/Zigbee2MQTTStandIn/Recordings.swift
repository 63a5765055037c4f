import Foundation
import JSON

/// The recorded zigbee2mqtt payloads in Sources/Zigbee2MQTTStandIn/Recordings (see its README): `bridge/devices` as
/// zigbee2mqtt 2.12.1 published it, and the device states its test suite asserts.
package struct Zigbee2MQTTRecordings: Sendable {
    /// The `bridge/devices` entries, verbatim.
    package let devices: [JSON]
    /// Every recorded publish of a device (or group): its kind (`state`, `availability`), the topic
    /// suffix (the friendly name) and the payload text, in file order.
    let publishes: [(kind: String, device: String, payload: String)]

    package init(folder: String) throws {
        let devicesText = try String(
            contentsOfFile: "\(folder)/bridge-devices-z2m-test-startup.wire.txt", encoding: .utf8)
        guard case .array(let devices) = try JSON.parse(devicesText) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        self.devices = devices
        let lines = try String(contentsOfFile: "\(folder)/states.jsonl", encoding: .utf8).split(separator: "\n")
        publishes = lines.compactMap { line in
            guard let record = try? JSON.parse(String(line)), let kind = record["kind"]?.stringValue,
                let device = record["device"]?.stringValue, let text = record["payload_text"]?.stringValue
            else { return nil }
            return (kind, device, text)
        }
    }

    /// The devices named, in the order of `bridge/devices`; the coordinator always comes along, as it
    /// does in zigbee2mqtt.
    package func devices(named names: Set<String>) -> [JSON] {
        devices.filter { device in
            device["type"]?.stringValue == "Coordinator"
                || names.contains(device["friendly_name"]?.stringValue ?? "")
        }
    }

    /// Each listed device's first recorded state that is a JSON object with at least one known value.
    package func firstStates(of devices: [JSON]) -> [String: JSON] {
        var states: [String: JSON] = [:]
        let names = Set(devices.compactMap { $0["friendly_name"]?.stringValue })
        for (kind, device, text) in publishes where kind == "state" && names.contains(device) && states[device] == nil {
            if let json = try? JSON.parse(text), case .object(let members) = json,
                members.contains(where: { $0.value != .null })
            {
                states[device] = json
            }
        }
        return states
    }
}
