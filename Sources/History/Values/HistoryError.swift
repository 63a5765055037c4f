/// Why a history query was refused: a code callers (and later the wire) can match, with a sentence
/// for the person who asked.
package struct HistoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; its `name` is what a wire answer would carry.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: String, Sendable, Hashable {
            case reversedSpan, spanBeyondRetention, unknownCharacteristic, tooManyPoints, unavailable
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The span ends before it starts.
        package static let reversedSpan = Code(.reversedSpan)
        /// The span starts before the oldest data kept (raw points and aggregates alike).
        package static let spanBeyondRetention = Code(.spanBeyondRetention)
        /// Nothing was ever recorded for that characteristic (or its history was removed with its
        /// accessory).
        package static let unknownCharacteristic = Code(.unknownCharacteristic)
        /// Raw points were asked for a span holding more than one answer carries.
        package static let tooManyPoints = Code(.tooManyPoints)
        /// The history database could not be read.
        package static let unavailable = Code(.unavailable)

        package var name: String { backing.rawValue }
        package var description: String { backing.rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code): \(message)" }
}
