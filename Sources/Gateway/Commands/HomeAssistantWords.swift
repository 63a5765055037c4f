import HomeModel

/// Words a `/set` payload may use instead of a characteristic's number: `heat` for a thermostat's
/// target mode, `LOCK` for a lock's target state, `OPEN` for a door or a covering. They are Home
/// Assistant's payloads, so its discovery configs can point straight at the characteristic topics,
/// and they read better than numbers in a `mosquitto_pub` line. Compared ignoring case.
enum HomeAssistantWords {
    /// TargetHeatingCoolingState's values and Home Assistant's climate modes.
    static let climateModes: [Int: String] = [0: "off", 1: "heat", 2: "cool", 3: "auto"]

    /// The value a word stands for in a characteristic, or nil when the word means nothing there.
    static func value(of word: String, for type: CharacteristicType, metadata: CharacteristicMetadata) -> Int? {
        let word = word.lowercased()
        switch type {
        case .targetHeatingCoolingState:
            return climateModes.first { $0.value == word }?.key
        case .lockTargetState:
            return ["unlock": 0, "unlocked": 0, "unsecured": 0, "lock": 1, "locked": 1, "secured": 1][word]
        case .targetDoorState:
            return ["open": 0, "close": 1, "closed": 1][word]
        case .targetPosition:
            switch word {
            case "open": return Int(metadata.maximumValue ?? 100)
            case "close", "closed": return Int(metadata.minimumValue ?? 0)
            default: return nil
            }
        case .rotationDirection:
            return ["forward": 0, "clockwise": 0, "reverse": 1, "counterclockwise": 1][word]
        case .temperatureDisplayUnits:
            return ["celsius": 0, "c": 0, "fahrenheit": 1, "f": 1][word]
        case .programmableSwitchEvent:
            // zigbee2mqtt's `action` words too, for automations.
            return [
                "single": 0, "single press": 0, "double": 1, "double press": 1, "long": 2, "long press": 2, "hold": 2,
            ][word]
        default:
            return nil
        }
    }

    /// The words each characteristic type takes, for error messages and the docs.
    static func words(for type: CharacteristicType) -> [String] {
        switch type {
        case .targetHeatingCoolingState: ["off", "heat", "cool", "auto"]
        case .lockTargetState: ["LOCK", "UNLOCK"]
        case .targetDoorState, .targetPosition: ["OPEN", "CLOSE"]
        case .rotationDirection: ["forward", "reverse"]
        case .temperatureDisplayUnits: ["celsius", "fahrenheit"]
        case .programmableSwitchEvent: ["single", "double", "long"]
        default: []
        }
    }
}
