/// The one error the home model throws.
///
/// Codes are named after HomeKit's `HMError` codes so that a client which knows HomeKit knows what
/// they mean, and so that the Gateway can put `code.name` on the wire unchanged. A failed operation
/// never changes anything, in memory or on disk.
package struct HomeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a value callers can match (`error.code == .notFound`).
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable, CaseIterable {
            case alreadyExists
            case notFound
            case invalidParameter
            case missingParameter
            case accessoryNotReachable
            case readOnlyCharacteristic
            case writeOnlyCharacteristic
            case operationTimedOut
            case storageFull
            case insufficientPrivileges
            case homeWithSimilarNameExists
            case objectWithSimilarNameExistsInHome
            case nameContainsProhibitedCharacters
            case nameDoesNotStartWithValidCharacters
            case invalidValueType
            case valueLowerThanMinimum
            case valueHigherThanMaximum
            case stringLongerThanMaximum
            case roomForHomeCannotBeUpdated
            case roomForHomeCannotBeInZone
            case cannotRemoveNonBridgeAccessory
            case objectAlreadyAssociatedToHome
            case communicationFailure
            case tooManyRequests
            case notSupported
            case authenticationFailed
            case unexpectedError
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The HMError-style name the wire carries, e.g. `insufficientPrivileges`.
        package var name: String { base.rawValue }
        package var description: String { name }

        /// Finds a code by its wire name; `nil` for a name the model does not use.
        package init?(name: String) {
            guard let base = Base(rawValue: name) else { return nil }
            self.base = base
        }

        /// An object that must be unique is already there (a room already in that zone).
        package static let alreadyExists = Code(.alreadyExists)
        /// No object of that name (or id) exists where it was looked for.
        package static let notFound = Code(.notFound)
        /// A parameter is present but not acceptable (an off-step value, a value outside the valid values).
        package static let invalidParameter = Code(.invalidParameter)
        /// A required parameter is absent or empty.
        package static let missingParameter = Code(.missingParameter)
        /// The accessory cannot be reached, so nothing was written.
        package static let accessoryNotReachable = Code(.accessoryNotReachable)
        /// A write to a characteristic that has no write permission.
        package static let readOnlyCharacteristic = Code(.readOnlyCharacteristic)
        /// A read of a characteristic that has no read permission.
        package static let writeOnlyCharacteristic = Code(.writeOnlyCharacteristic)
        /// The accessory did not answer in time.
        package static let operationTimedOut = Code(.operationTimedOut)
        /// The hub's storage is full, so the change could not be saved; nothing was changed. Not one
        /// of HomeKit's codes: HomeKit's store is the phone's.
        package static let storageFull = Code(.storageFull)
        /// The account's role in the home does not allow the operation, or it is not a member.
        package static let insufficientPrivileges = Code(.insufficientPrivileges)
        /// Another home already has a name that compares equal.
        package static let homeWithSimilarNameExists = Code(.homeWithSimilarNameExists)
        /// Another room, zone, accessory or action set in the home has a name that compares equal.
        package static let objectWithSimilarNameExistsInHome = Code(.objectWithSimilarNameExistsInHome)
        /// A name with characters other than letters, digits, spaces and apostrophes.
        package static let nameContainsProhibitedCharacters = Code(.nameContainsProhibitedCharacters)
        /// A name whose first character is not a letter or a digit.
        package static let nameDoesNotStartWithValidCharacters = Code(.nameDoesNotStartWithValidCharacters)
        /// A value of the wrong kind for the characteristic's format.
        package static let invalidValueType = Code(.invalidValueType)
        /// A value below the characteristic's minimum.
        package static let valueLowerThanMinimum = Code(.valueLowerThanMinimum)
        /// A value above the characteristic's maximum.
        package static let valueHigherThanMaximum = Code(.valueHigherThanMaximum)
        /// A string or data value longer than the characteristic's maximum length.
        package static let stringLongerThanMaximum = Code(.stringLongerThanMaximum)
        /// The home's default room cannot be renamed or removed.
        package static let roomForHomeCannotBeUpdated = Code(.roomForHomeCannotBeUpdated)
        /// The home's default room cannot be put in a zone.
        package static let roomForHomeCannotBeInZone = Code(.roomForHomeCannotBeInZone)
        /// A bridged accessory can only be removed together with its bridge.
        package static let cannotRemoveNonBridgeAccessory = Code(.cannotRemoveNonBridgeAccessory)
        /// The accessory or user already belongs to a home.
        package static let objectAlreadyAssociatedToHome = Code(.objectAlreadyAssociatedToHome)
        /// The driver failed to talk to the accessory.
        package static let communicationFailure = Code(.communicationFailure)
        /// The account sent more commands and requests than it may (the gateway's per-account rate
        /// limit); nothing was done, the client may send again a little later.
        package static let tooManyRequests = Code(.tooManyRequests)
        /// The accessory or its driver cannot do that at all (identify a device with no way to, let
        /// devices join where no driver has a network).
        package static let notSupported = Code(.notSupported)
        /// The accessory refused the proof of who we are: a wrong setup code when pairing (HAP's
        /// kTLVError_Authentication), or a pairing the accessory no longer knows.
        package static let authenticationFailed = Code(.authenticationFailed)
        /// Something outside the rules failed (the database); nothing was changed.
        package static let unexpectedError = Code(.unexpectedError)

        /// Lets `catch HomeError.Code.notFound` style patterns match any error carrying the code.
        package static func ~= (code: Code, error: any Error) -> Bool {
            (error as? HomeError)?.code == code
        }
    }

    /// The HMError-style code.
    package let code: Code
    /// A sentence for a human, naming the object involved.
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.name): \(message)" }
}
