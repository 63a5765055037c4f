import JSON

/// One device of zigbee2mqtt's retained `bridge/devices`: who it is (the IEEE address, which never
/// changes, and the friendly name, which the user may change) and what it exposes.
package struct DeviceDescription: Sendable, Hashable, ListEntry {
    var ieeeAddress: String
    var friendlyName: String
    /// `Coordinator`, `Router` or `EndDevice`.
    package var type: String
    var interviewCompleted: Bool
    var disabled: Bool
    var vendor: String
    package var model: String
    package var description: String
    var exposes: [Expose]
    /// Whether a switch of the device is an outlet: a device that measures power or energy, or whose
    /// kind (zigbee2mqtt's description of the model, never the name its owner gave it) is a plug, a
    /// socket or an outlet. A group is an outlet when each member with a switch is one.
    var isOutlet: Bool
    /// Entries of `exposes` that are not exposes at all (no `type`), for the log.
    var malformedExposes: Int
}

// In an extension, so that the memberwise init stays (a group's description, ``GroupDescription``).
extension DeviceDescription {
    /// Reads one entry; throws a ``Zigbee2MQTTPayloadError`` naming what is missing.
    package init(_ json: JSON) throws(Zigbee2MQTTPayloadError) {
        guard case .object = json else { throw .init("a device entry is not an object") }
        guard let ieee = json["ieee_address"]?.stringValue, Self.isIEEEAddress(ieee) else {
            throw .init("a device entry has no valid ieee_address")
        }
        guard let friendlyName = json["friendly_name"]?.stringValue, !friendlyName.isEmpty else {
            throw .init("the device \(ieee) has no friendly_name")
        }
        ieeeAddress = ieee
        self.friendlyName = friendlyName
        type = json["type"]?.stringValue ?? ""
        interviewCompleted = json["interview_completed"] == .bool(true)
        disabled = json["disabled"] == .bool(true)
        let definition = json["definition"]
        vendor = definition?["vendor"]?.stringValue ?? json["manufacturer"]?.stringValue ?? ""
        model = definition?["model"]?.stringValue ?? json["model_id"]?.stringValue ?? ""
        description = definition?["description"]?.stringValue ?? ""
        let entries = definition?["exposes"]?.arrayValue ?? []
        exposes = entries.compactMap { Expose($0) }
        malformedExposes = entries.count - exposes.count
        let kind = description.lowercased()
        isOutlet =
            exposes.contains { ["power", "energy"].contains($0.name ?? "") }
            || ["plug", "socket", "outlet"].contains { kind.contains($0) }
    }

    /// `0x` and 16 hex digits, as zigbee2mqtt writes every IEEE address.
    static func isIEEEAddress(_ text: String) -> Bool {
        text.utf8.count == 18 && text.hasPrefix("0x") && text.dropFirst(2).allSatisfy { $0.isASCII && $0.isHexDigit }
    }

    /// Whether the device can become an accessory: not the coordinator, interviewed, not disabled.
    var isAccessory: Bool { type != "Coordinator" && interviewCompleted && !disabled }

    package static let listTopic = "bridge/devices"
}

/// An entry of a list zigbee2mqtt retains (`bridge/devices`, `bridge/groups`).
package protocol ListEntry {
    /// The list's topic under the base topic.
    static var listTopic: String { get }
    /// Reads one entry; throws a ``Zigbee2MQTTPayloadError`` naming what is missing.
    init(_ json: JSON) throws(Zigbee2MQTTPayloadError)
}

extension ListEntry {
    /// Reads the whole list's payload. A malformed entry is skipped and named in `problems`; a payload
    /// that is not a JSON array throws.
    package static func list(_ payload: [UInt8]) throws(Zigbee2MQTTPayloadError) -> (
        entries: [Self], problems: [String]
    ) {
        let json: JSON
        do { json = try JSON.parse(payload) } catch { throw .init("\(listTopic) is not JSON: \(error)") }
        guard case .array(let elements) = json else { throw .init("\(listTopic) is not a JSON array") }
        var entries: [Self] = []
        var problems: [String] = []
        for element in elements {
            do throws(Zigbee2MQTTPayloadError) {
                entries.append(try Self(element))
            } catch {
                problems.append(error.message)
            }
        }
        return (entries, problems)
    }
}

/// Something zigbee2mqtt published that the driver cannot use, with what is wrong in words.
package struct Zigbee2MQTTPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
