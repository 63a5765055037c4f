import Foundation
import HomeModel

/// What of the model's changes is history: which values are recorded as points, which changes
/// become timeline events, and which remove history.
package enum HistorySelection {
    /// Whether a characteristic's values are recorded as points: readable numbers, bools and
    /// enumerated states, not the accessory's information (names, firmware) and not presses, which
    /// are events with no value to draw.
    package static func isRecorded(_ characteristic: Characteristic, in service: Service) -> Bool {
        service.type.rawValue != "AccessoryInformation" && !characteristic.type.isEvent
            && characteristic.metadata.permissions.contains(.read)
            && recordedFormats.contains(characteristic.metadata.format.rawValue)
    }

    private static let recordedFormats: Set<String> = ["bool", "int", "uint8", "uint16", "uint32", "uint64", "float"]

    /// What the recorder keeps of `change`, seen at the time `now` tells (asked only when there is
    /// something to keep). Run by the manager for every change as it commits it (the recorder's
    /// ``HistoryRecorder/changes()``), so a value nobody records costs a look at its one accessory.
    package static func entries(for change: HomeChange, at now: () -> Date) -> [HistoryEntry] {
        switch change.event {
        case .didUpdateValueForCharacteristic(let homeID, let accessoryID, let serviceID, let type, let value):
            guard let home = change.homes.first(where: { $0.id == homeID }),
                let accessory = home.accessory(accessoryID), let service = accessory.service(serviceID)
            else { return [] }
            let recorded = service.characteristic(type).map { isRecorded($0, in: service) } ?? false
            let kind = timelineKind(of: type)
            guard recorded || kind != nil else { return [] }
            let time = now()
            var entries: [HistoryEntry] = []
            if recorded, let number = value.doubleValue {
                let key = ValueKey(accessory: accessoryID, service: serviceID, characteristic: type)
                entries.append(.point(SeriesKey(home: homeID, value: key), HistoryPoint(time: time, value: number)))
            }
            if let kind, let detail = detail(of: kind, value) {
                entries.append(
                    .event(
                        TimelineEvent(
                            home: homeID, time: time, kind: kind, accessory: accessoryID, subject: accessory.name,
                            detail: detail)))
            }
            return entries
        case .didRemoveAccessory(_, let accessory, _, _):
            return [.forgetAccessory(accessory)]
        case .didRemoveHome(let home, _):
            return [.forgetHome(home)]
        case .didExecuteActionSet(let homeID, let actionSet, let failed):
            let name = change.homes.first { $0.id == homeID }?.actionSet(actionSet)?.name ?? actionSet.rawValue
            return [
                .event(
                    TimelineEvent(
                        home: homeID, time: now(), kind: .actionSet, accessory: nil, subject: name,
                        detail: ran(failed)))
            ]
        case .didFireTrigger(let homeID, let trigger, let firing):
            let name = change.homes.first { $0.id == homeID }?.trigger(trigger)?.name ?? trigger.rawValue
            return [
                .event(
                    TimelineEvent(
                        home: homeID, time: now(), kind: .automation, accessory: nil, subject: name,
                        detail: ran(firing.failedActions), automation: trigger))
            ]
        default:
            return []
        }
    }

    /// The characteristics whose changes are told on the timeline.
    static func timelineKind(of type: CharacteristicType) -> TimelineKind? {
        switch type {
        case .programmableSwitchEvent: .press
        case .motionDetected: .motion
        case .occupancyDetected: .occupancy
        case .contactSensorState: .contact
        case .currentDoorState: .door
        case .lockCurrentState: .lock
        case .leakDetected: .leak
        case .smokeDetected: .smoke
        default: nil
        }
    }

    /// The change in words, as HAP defines the values.
    static func detail(of kind: TimelineKind, _ value: CharacteristicValue) -> String? {
        let states: [String]
        switch kind {
        case .press: states = ["single press", "double press", "long press"]
        case .motion, .occupancy, .leak, .smoke: states = ["cleared", "detected"]
        case .contact: states = ["closed", "opened"]
        case .door: states = ["opened", "closed", "opening", "closing", "stopped"]
        case .lock: states = ["unlocked", "locked", "jammed", "unknown"]
        default: return nil
        }
        guard let index = value.intValue ?? value.boolValue.map({ $0 ? 1 : 0 }), states.indices.contains(index)
        else { return nil }
        return states[index]
    }

    private static func ran(_ failedActions: Int) -> String {
        failedActions == 0 ? "ran" : "ran; \(failedActions) action(s) failed"
    }
}
