import HomeModel

/// Why a history query was refused: a code callers (and the wire, as the home's codes) can match,
/// with a sentence for the person who asked.
package typealias HistoryError = CodedError<HistoryErrorCode>

package enum HistoryErrorCode: String, ErrorCode {
    /// The span ends before it starts.
    case reversedSpan
    /// The span starts before the oldest data kept (raw points and aggregates alike).
    case spanBeyondRetention
    /// Nothing was ever recorded for that characteristic (or its history was removed with its
    /// accessory).
    case unknownCharacteristic
    /// Raw points were asked for a span holding more than one answer carries.
    case tooManyPoints
    /// The history database could not be read.
    case unavailable
}
