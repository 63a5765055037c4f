/// The one error the home model throws. A failed operation never changes anything, in memory or
/// on disk.
package typealias HomeError = CodedError<HomeErrorCode>

/// What went wrong in the home model. Named after HomeKit's `HMError` codes so that a client which
/// knows HomeKit knows what they mean, and so that the Gateway can put ``name`` on the wire
/// unchanged.
package enum HomeErrorCode: String, ErrorCode {
    /// An object that must be unique is already there (a room already in that zone).
    case alreadyExists
    /// No object of that name (or id) exists where it was looked for.
    case notFound
    /// A parameter is present but not acceptable (an off-step value, a value outside the valid values).
    case invalidParameter
    /// A required parameter is absent or empty.
    case missingParameter
    /// The accessory cannot be reached, so nothing was written.
    case accessoryNotReachable
    /// A write to a characteristic that has no write permission.
    case readOnlyCharacteristic
    /// A read of a characteristic that has no read permission.
    case writeOnlyCharacteristic
    /// The accessory did not answer in time.
    case operationTimedOut
    /// The hub's storage is full, so the change could not be saved; nothing was changed. Not one
    /// of HomeKit's codes: HomeKit's store is the phone's.
    case storageFull
    /// The account's role in the home does not allow the operation, or it is not a member.
    case insufficientPrivileges
    /// Another home already has a name that compares equal.
    case homeWithSimilarNameExists
    /// Another room, zone, accessory or action set in the home has a name that compares equal.
    case objectWithSimilarNameExistsInHome
    /// A name with characters other than letters, digits, spaces and apostrophes.
    case nameContainsProhibitedCharacters
    /// A name whose first character is not a letter or a digit.
    case nameDoesNotStartWithValidCharacters
    /// A value of the wrong kind for the characteristic's format.
    case invalidValueType
    /// A value below the characteristic's minimum.
    case valueLowerThanMinimum
    /// A value above the characteristic's maximum.
    case valueHigherThanMaximum
    /// A string or data value longer than the characteristic's maximum length.
    case stringLongerThanMaximum
    /// The home's default room cannot be renamed or removed.
    case roomForHomeCannotBeUpdated
    /// The home's default room cannot be put in a zone.
    case roomForHomeCannotBeInZone
    /// A bridged accessory can only be removed together with its bridge.
    case cannotRemoveNonBridgeAccessory
    /// The accessory or user already belongs to a home.
    case objectAlreadyAssociatedToHome
    /// The driver failed to talk to the accessory.
    case communicationFailure
    /// The account sent more commands and requests than it may (the gateway's per-account rate
    /// limit); nothing was done, the client may send again a little later.
    case tooManyRequests
    /// The accessory or its driver cannot do that at all (identify a device with no way to, let
    /// devices join where no driver has a network).
    case notSupported
    /// The accessory refused the proof of who we are: a wrong setup code when pairing (HAP's
    /// kTLVError_Authentication), or a pairing the accessory no longer knows.
    case authenticationFailed
    /// More of something than HomeKit allows (HMError's maximumObjectLimitReached): more than
    /// 149 accessories on one HomeKit bridge.
    case maximumObjectLimitReached
    /// A latitude outside ±90° or a longitude outside ±180° for a home's location.
    case invalidCoordinates
    /// A time zone name the hub's time zone database does not have.
    case unknownTimeZone
    /// A schedule that cannot fire as asked: a time or date that does not exist, no weekday, a
    /// recurrence shorter than five minutes, a sun offset beyond twelve hours.
    case invalidSchedule
    /// A sunrise or sunset automation in a home with no location: the hub cannot know when the
    /// sun rises there.
    case locationRequired
    /// A duration out of range: an automation's turn-back of less than a second, more than a
    /// day, or not in whole seconds.
    case invalidDuration
    /// An automation's range that cannot be entered: no bound, a minimum above the maximum, or
    /// a characteristic that is no number.
    case invalidRange
    /// An automation's condition that cannot be checked: an unknown comparison, an order
    /// (`<`, `≤`, `>`, `≥`) on a characteristic that is no number, a time window of no length.
    case invalidCondition
    /// A history or timeline span that ends before it starts. Not one of HomeKit's codes, as
    /// the five below: HomeKit keeps no history.
    case reversedSpan
    /// A span that starts before the oldest history kept (or, for raw points, before the
    /// oldest raw point kept).
    case spanBeyondRetention
    /// Nothing was ever recorded for that characteristic: it is not recorded (text, the
    /// accessory's information), has not changed since recording began, or its history went
    /// with its accessory.
    case unknownCharacteristic
    /// Raw points were asked for a span holding more than one answer carries.
    case tooManyPoints
    /// The history is off on this hub, or its database could not be read.
    case historyUnavailable
    /// Something outside the rules failed (the database); nothing was changed.
    case unexpectedError
}
