import Foundation
import JSON

/// The recorded zigbee2mqtt payloads in Fixtures/zigbee2mqtt (see its README): `bridge/devices` as
/// zigbee2mqtt 2.12.1 published it, and the device states its test suite asserts.
package struct Zigbee2MQTTRecordings: Sendable {
    /// The `bridge/devices` entries, verbatim.
    package let devices: [JSON]
    /// Every recorded state publish: topic suffix (the friendly name) and payload text, in file order.
    let statePublishes: [(device: String, payload: String)]
    /// The `bridge/groups` entries zigbee2mqtt publishes at startup (its test "Should publish groups
    /// on startup"), without the one whose id the recording left unresolved.
    package let groups: [JSON]
    /// Every recorded availability publish's payload text, by device or group.
    let availabilityPublishes: [String: [String]]

    package init(folder: String) throws {
        let devicesText = try String(
            contentsOfFile: "\(folder)/bridge-devices-z2m-test-startup.wire.txt", encoding: .utf8)
        guard case .array(let devices) = try JSON.parse(devicesText) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        self.devices = devices
        var publishes: [(String, String)] = []
        var availabilities: [String: [String]] = [:]
        for line in try String(contentsOfFile: "\(folder)/states.jsonl", encoding: .utf8).split(separator: "\n") {
            guard let record = try? JSON.parse(String(line)), let device = record["device"]?.stringValue,
                let text = record["payload_text"]?.stringValue
            else { continue }
            switch record["kind"]?.stringValue {
            case "state": publishes.append((device, text))
            case "availability": availabilities[device, default: []].append(text)
            default: break
            }
        }
        statePublishes = publishes
        availabilityPublishes = availabilities
        var groups: [JSON] = []
        for line in try String(contentsOfFile: "\(folder)/bridge-other.jsonl", encoding: .utf8).split(separator: "\n") {
            guard let record = try? JSON.parse(String(line)),
                record["topic"]?.stringValue == "zigbee2mqtt/bridge/groups",
                case .array(let entries)? = record["payload"]?["$stringify"]
            else { continue }
            groups = entries.filter { if case .integer = $0["id"] { true } else { false } }
            break
        }
        self.groups = groups
    }

    /// The devices named (all when `names` is nil), in the order of `bridge/devices`; the coordinator
    /// always comes along, as it does in zigbee2mqtt.
    package func devices(named names: Set<String>?) -> [JSON] {
        devices.filter { device in
            guard let names else { return true }
            return device["type"]?.stringValue == "Coordinator"
                || names.contains(device["friendly_name"]?.stringValue ?? "")
        }
    }

    /// Each listed device's first recorded state that is a JSON object with at least one known value.
    package func firstStates(of devices: [JSON]) -> [String: JSON] {
        var states: [String: JSON] = [:]
        let names = Set(devices.compactMap { $0["friendly_name"]?.stringValue })
        for (device, text) in statePublishes where names.contains(device) && states[device] == nil {
            if let json = try? JSON.parse(text), case .object(let members) = json,
                members.contains(where: { $0.value != .null })
            {
                states[device] = json
            }
        }
        return states
    }
}
