/// What a characteristic's value may be, as HomeKit's `HMCharacteristicMetadata` describes it, plus its
/// permissions.
package struct CharacteristicMetadata: Sendable, Hashable, Codable {
    package var format: CharacteristicFormat
    package var unit: CharacteristicUnit?
    package var minimumValue: Double?
    package var maximumValue: Double?
    package var stepValue: Double?
    /// The longest string (in UTF-8 bytes) or data a value may be.
    package var maxLength: Int?
    /// The only values an integer characteristic accepts, when it has such a list.
    package var validValues: [Int]?
    /// The only values a string characteristic accepts, when it has such a list: a device's choice
    /// with no HomeKit counterpart (a radiator valve's preset, ``CharacteristicType/preset``). Not
    /// HAP's.
    package var validStrings: [String]?
    package var permissions: CharacteristicPermissions

    package init(
        format: CharacteristicFormat,
        unit: CharacteristicUnit? = nil,
        minimumValue: Double? = nil,
        maximumValue: Double? = nil,
        stepValue: Double? = nil,
        maxLength: Int? = nil,
        validValues: [Int]? = nil,
        validStrings: [String]? = nil,
        permissions: CharacteristicPermissions
    ) {
        self.format = format
        self.unit = unit
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.stepValue = stepValue
        self.maxLength = maxLength
        self.validValues = validValues
        self.validStrings = validStrings
        self.permissions = permissions
    }

    /// Whether values are numbers (an integer or float format), which have an order: what a
    /// threshold range or an ordering condition needs.
    var isNumeric: Bool { format == .float || format.integerRange != nil }

    /// HAP's default maximum length of a string value.
    package static let defaultMaxStringLength = 64

    /// Checks a value against the metadata and returns it in the format's own kind (an integral float
    /// for an integer format becomes `.int`, an integer for a float format becomes `.float`, 0/1 for a
    /// bool becomes `.bool`). The only place values are validated.
    package func validate(_ value: CharacteristicValue) throws(HomeError) -> CharacteristicValue {
        switch format {
        case .bool:
            switch value {
            case .bool: return value
            case .int(0): return .bool(false)
            case .int(1): return .bool(true)
            default: throw typeError(value)
            }
        case .int, .uint8, .uint16, .uint32, .uint64:
            guard case .int = value, let integer = value.intValue else {
                if case .float = value, let integer = value.intValue {
                    return try validate(.int(integer))
                }
                // A whole number too big for any integer: out of range, not of the wrong kind.
                if case .float(let number) = value, number.isFinite, number.rounded() == number {
                    try checkRange(number, natural: format.integerRange)
                }
                throw typeError(value)
            }
            try checkRange(Double(integer), natural: format.integerRange)
            if let validValues, !validValues.contains(integer) {
                throw HomeError(
                    .invalidParameter,
                    "\(integer) is not one of the valid values \(validValues.map(String.init).joined(separator: ", "))."
                )
            }
            return .int(integer)
        case .float:
            guard let number = value.doubleValue, value.boolValue == nil, number.isFinite else {
                throw typeError(value)
            }
            try checkRange(number, natural: nil)
            return .float(number)
        case .string:
            guard case .string(let string) = value else { throw typeError(value) }
            let limit = maxLength ?? Self.defaultMaxStringLength
            if string.utf8.count > limit {
                throw HomeError(
                    .stringLongerThanMaximum,
                    "The string is \(string.utf8.count) bytes long; at most \(limit) are allowed."
                )
            }
            if let validStrings {
                // Any case, stored as the device spells it.
                guard let valid = validStrings.first(where: { $0.lowercased() == string.lowercased() }) else {
                    throw HomeError(
                        .invalidParameter,
                        "'\(string)' is not one of the valid values \(validStrings.joined(separator: ", "))."
                    )
                }
                return .string(valid)
            }
            return value
        case .data, .tlv8:
            guard case .data(let data) = value else { throw typeError(value) }
            if let maxLength, data.count > maxLength {
                throw HomeError(
                    .stringLongerThanMaximum,
                    "The data is \(data.count) bytes long; at most \(maxLength) are allowed."
                )
            }
            return value
        default:
            return value
        }
    }

    private func checkRange(_ number: Double, natural: ClosedRange<Int>?) throws(HomeError) {
        let minimum = minimumValue ?? natural.map { Double($0.lowerBound) }
        let maximum = maximumValue ?? natural.map { Double($0.upperBound) }
        if let minimum, number < minimum {
            throw HomeError(
                .valueLowerThanMinimum,
                "\(CharacteristicValue.float(number).plainText) is below the minimum \(CharacteristicValue.float(minimum).plainText)."
            )
        }
        if let maximum, number > maximum {
            throw HomeError(
                .valueHigherThanMaximum,
                "\(CharacteristicValue.float(number).plainText) is above the maximum \(CharacteristicValue.float(maximum).plainText)."
            )
        }
        if let stepValue, stepValue > 0 {
            let steps = (number - (minimum ?? 0)) / stepValue
            if abs(steps - steps.rounded()) > 1e-6 {
                throw HomeError(
                    .invalidParameter,
                    "\(CharacteristicValue.float(number).plainText) is not a multiple of the step \(CharacteristicValue.float(stepValue).plainText)."
                )
            }
        }
    }

    private func typeError(_ value: CharacteristicValue) -> HomeError {
        HomeError(.invalidValueType, "Expected a value of format \(format), got \(value.kindName).")
    }
}
