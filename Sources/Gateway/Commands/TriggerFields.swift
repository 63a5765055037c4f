import HomeModel
import JSON

/// An automation's range event as requests write it and `$layout` shows it (docs/mqtt.md,
/// "Automations"): `"range":{"min":70,"max":90}`, either bound left out for an open one. One place
/// for both directions, as ``ScheduleFields`` is for schedules.
enum TriggerFields {
    /// `addTrigger`'s range, when the body has one; nil for another event. The characteristic is
    /// named as a characteristic event's is.
    static func range(_ body: RequestBody) throws(HomeError) -> ThresholdRange? {
        guard let value = try body.optionalValue("range") else { return nil }
        guard case .object = value else {
            throw HomeError(
                .invalidParameter, "\"range\" is {\"min\": 70, \"max\": 90}, either bound left out for an open one.")
        }
        let range = RequestBody(value)
        return try ThresholdRange(minimum: try number(range, "min"), maximum: try number(range, "max"))
    }

    /// An optional number under `key`.
    static func number(_ body: RequestBody, _ key: String) throws(HomeError) -> Double? {
        switch try body.optionalValue(key) {
        case nil: return nil
        case .integer(let value)?: return Double(value)
        case .number(let value)?: return value
        default: throw HomeError(.invalidParameter, "\"\(key)\" is a number.")
        }
    }

    /// The characteristic an event names in the body.
    static func characteristic(_ body: RequestBody) throws(HomeError) -> CharacteristicReference {
        CharacteristicReference(
            accessory: try body.string("accessory"), service: try body.string("service"),
            characteristic: CharacteristicType(rawValue: try body.string("characteristic")))
    }

    // MARK: $layout

    /// A range's members in `$layout`, in the request's own form: only the bounds it has.
    static func layout(_ range: ThresholdRange) -> JSON {
        var members: [(key: String, value: JSON)] = []
        if let minimum = range.minimum { members.append(("min", .number(minimum))) }
        if let maximum = range.maximum { members.append(("max", .number(maximum))) }
        return .object(members)
    }
}
