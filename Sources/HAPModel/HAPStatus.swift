import HomeModel
import JSON

/// HAP's status codes as the model's errors.
package enum HAPStatus {
    /// The model's error for a HAP status (negative, −70401…); nil for 0 (success).
    package static func error(_ status: Int, accessory: String) -> HomeError? {
        switch status {
        case 0: return nil
        case -70401: return HomeError(.insufficientPrivileges, "'\(accessory)' refused: insufficient privileges.")
        case -70402: return HomeError(.communicationFailure, "'\(accessory)' could not talk to the device.")
        case -70403: return HomeError(.communicationFailure, "'\(accessory)' is busy; try again.")
        case -70404: return HomeError(.readOnlyCharacteristic, "'\(accessory)': the characteristic is read-only.")
        case -70405: return HomeError(.writeOnlyCharacteristic, "'\(accessory)': the characteristic is write-only.")
        case -70406: return HomeError(.notSupported, "'\(accessory)' does not report changes of it.")
        case -70407: return HomeError(.communicationFailure, "'\(accessory)' is out of resources.")
        case -70408: return HomeError(.operationTimedOut, "'\(accessory)' timed out.")
        case -70409: return HomeError(.notFound, "'\(accessory)' has no such characteristic.")
        case -70410: return HomeError(.invalidValueType, "'\(accessory)' refused the value as invalid.")
        case -70411: return HomeError(.insufficientPrivileges, "'\(accessory)' wants additional authorization.")
        default: return HomeError(.communicationFailure, "'\(accessory)' answered HAP status \(status).")
        }
    }

    /// Throws the first error an answer carries: an HTTP error status, or a 207 multi-status entry
    /// (or the answer itself) with a non-zero `status`.
    package static func check(_ httpStatus: Int, body: [UInt8], accessory: String) throws(HomeError) {
        guard httpStatus != 204 else { return }
        let root = try? JSON.parse(body)
        let entries = root?["characteristics"]?.arrayValue ?? []
        for status in entries.compactMap({ $0["status"]?.integerValue }) + [root?["status"]?.integerValue ?? 0] {
            if let error = error(status, accessory: accessory) { throw error }
        }
        if (200..<300).contains(httpStatus) { return }
        throw HomeError(.communicationFailure, "'\(accessory)' answered HTTP \(httpStatus).")
    }

    /// The HAP status a controller is answered with for a model error (the other way from
    /// ``error(_:accessory:)``): what a HomeKit bridge puts in a 207 answer's entry.
    package static func status(of error: HomeError) -> Int {
        switch error.code {
        case .insufficientPrivileges: -70401
        case .accessoryNotReachable, .communicationFailure: -70402
        case .tooManyRequests: -70403
        case .readOnlyCharacteristic: -70404
        case .writeOnlyCharacteristic: -70405
        case .storageFull: -70407
        case .operationTimedOut: -70408
        case .notFound: -70409
        case .authenticationFailed: -70411
        default: -70410
        }
    }
}
