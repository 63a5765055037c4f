import HomeModel
import JSON
import Schedules

/// An automation's range event and conditions as requests write them and `$layout` shows them
/// (docs/mqtt.md, "Automations"): `"range":{"min":70,"max":90}`, either bound left out for an open
/// one; `"conditions":[{"accessory","service","characteristic","operator":"<","value":10},
/// {"from":"sunset","to":"06:00"}]`. One place for both directions, as ``ScheduleFields`` is for
/// schedules.
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
        guard let value = try body.optionalValue(key) else { return nil }
        guard let number = value.numberValue else { throw HomeError(.invalidParameter, "\"\(key)\" is a number.") }
        return number
    }

    /// The characteristic an event names in the body.
    static func characteristic(_ body: RequestBody) throws(HomeError) -> CharacteristicReference {
        CharacteristicReference(
            accessory: try body.string("accessory"), service: try body.string("service"),
            characteristic: CharacteristicType(rawValue: try body.string("characteristic")))
    }

    /// `addTrigger`'s conditions; none when left out. A condition with `from` or `to` is a time
    /// window, any other compares a characteristic. Its value is taken as written (a number,
    /// `true`/`false`, text) and checked by the model against the characteristic's format.
    static func conditions(_ body: RequestBody) throws(HomeError) -> [ConditionRequest] {
        guard let value = try body.optionalValue("conditions") else { return [] }
        let shape =
            "\"conditions\" is a list of {\"accessory\",\"service\",\"characteristic\",\"operator\",\"value\"} or {\"from\",\"to\"}."
        guard case .array(let entries) = value else { throw HomeError(.invalidParameter, shape) }
        return try entries.map { entry throws(HomeError) in
            guard case .object = entry else { throw HomeError(.invalidParameter, shape) }
            let condition = RequestBody(entry)
            if entry["from"] != nil || entry["to"] != nil {
                return .time(try window(condition))
            }
            let written = try condition.string("operator")
            guard let comparison = Comparison(written: written) else {
                throw HomeError(
                    .invalidCondition,
                    "\"operator\" '\(written)' is none of \(Comparison.allCases.map(\.rawValue).joined(separator: " "))."
                )
            }
            return .characteristic(try characteristic(condition), comparison, try plain(condition.value("value")))
        }
    }

    /// A time window's `from` and `to`: "22:30", "sunrise", "sunset-30".
    private static func window(_ condition: RequestBody) throws(HomeError) -> TimeWindow {
        do {
            return try TimeWindow(
                from: TimePoint(try condition.string("from")), to: TimePoint(try condition.string("to")))
        } catch let error as ScheduleError {
            throw HomeError(.invalidCondition, "A time window: \(error.message).")
        } catch let error as HomeError {
            throw error
        } catch {
            throw HomeError(.invalidCondition, "A time window: \(error).")
        }
    }

    /// A value as written: the model reads it by the characteristic's format.
    private static func plain(_ value: JSON) throws(HomeError) -> CharacteristicValue {
        switch value {
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .int(number)
        case .number(let number): return .float(number)
        case .string(let text): return .string(text)
        default: throw HomeError(.invalidParameter, "A condition's \"value\" is a number, true or false, or text.")
        }
    }

    // MARK: $layout

    /// An automation's conditions in `$layout`, in the request's own form.
    static func layout(_ conditions: [TriggerCondition], in home: Home) -> JSON {
        .array(
            conditions.map { condition in
                switch condition {
                case .characteristic(let key, let comparison, let value):
                    return .object(
                        Rendering.names(key.accessory, key.service, key.characteristic, in: home) + [
                            ("operator", .string(comparison.rawValue)), ("value", Rendering.value(value)),
                        ])
                case .time(let window):
                    return .object([("from", .string(window.from.description)), ("to", .string(window.to.description))])
                }
            })
    }

    /// A range's members in `$layout`, in the request's own form: only the bounds it has.
    static func layout(_ range: ThresholdRange) -> JSON {
        var members: [(key: String, value: JSON)] = []
        if let minimum = range.minimum { members.append(("min", .number(minimum))) }
        if let maximum = range.maximum { members.append(("max", .number(maximum))) }
        return .object(members)
    }
}
