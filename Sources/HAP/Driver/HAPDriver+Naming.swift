import HAPProtocol
import HomeModel

/// HAP's identifiers, categories and pairing errors in the model's terms.
extension HAPDriver {
    static func deviceID(of accessory: AccessoryID) -> String {
        let raw = accessory.rawValue
        // Pairing identifiers are XX:XX:XX:XX:XX:XX (17 characters); a bridged accessory adds :<aid>.
        return raw.count > 17 ? String(raw.prefix(17)) : raw
    }

    static func unpairedID(_ endpoint: HAPEndpoint) -> String { "hap@\(endpoint.host):\(endpoint.port)" }

    /// HAP's accessory category (`ci`) as the model's.
    static func category(_ code: Int?) -> AccessoryCategory {
        code.flatMap { categories[$0] } ?? .other
    }

    private static let categories: [Int: AccessoryCategory] = [
        2: .bridge, 4: .garageDoorOpener, 5: .lightbulb, 6: .doorLock, 7: .outlet, 8: .switch, 9: .thermostat,
        15: .programmableSwitch,
    ]

    static func homeError(_ error: PairingError, accessory: String) -> HomeError {
        switch error.code {
        case .authentication:
            return HomeError(.authenticationFailed, "'\(accessory)' refused the setup code.")
        case .backoff:
            let wait = error.retryDelay.map { " Try again in \($0) seconds, as the accessory asks." } ?? ""
            return HomeError(.authenticationFailed, "'\(accessory)' refuses pairing attempts for now.\(wait)")
        case .maxPeers:
            return HomeError(.notSupported, "'\(accessory)' has as many controllers as it can take.")
        case .maxTries:
            return HomeError(.authenticationFailed, "'\(accessory)' took too many wrong setup codes; reset it.")
        case .unavailable:
            return HomeError(.notSupported, "'\(accessory)' is paired with another controller already.")
        case .busy:
            return HomeError(.communicationFailure, "'\(accessory)' is pairing with another controller; try again.")
        default:
            return HomeError(.communicationFailure, "'\(accessory)' refused pairing: \(error).")
        }
    }
}
