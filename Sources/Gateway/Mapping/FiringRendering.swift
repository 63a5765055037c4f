import HomeModel
import JSON
import Schedules

/// What `didFireTrigger` on `$events` says about a firing (docs/mqtt.md, "`$events`"): what set the
/// automation off, and what each of its actions did, named as the home names its objects.
enum FiringRendering {
    /// `{"kind":"value"|"range"|"schedule"|"catchUp", …}`: the characteristic and the value it took
    /// (and the range it crossed into), or the slot a schedule fired for and the instant it was due.
    static func cause(_ cause: FiringCause, in home: Home) -> JSON {
        switch cause {
        case .value(let key, let value):
            return .object([("kind", .string("value"))] + characteristic(key, value, in: home))
        case .range(let key, let value, let range):
            return .object(
                [("kind", .string("range"))] + characteristic(key, value, in: home)
                    + [("range", TriggerFields.layout(range))])
        case .schedule(let firing), .catchUp(let firing):
            let kind = if case .schedule = cause { "schedule" } else { "catchUp" }
            return .object([
                ("kind", .string(kind)), ("slot", .string("\(firing.slot.date)T\(firing.slot.time)")),
                ("due", ScheduleFields.layout(firing.instant, in: home)),
            ])
        }
    }

    /// Each action set that ran, in order, with each action's outcome, or the code of why it could not run.
    static func actionSets(_ runs: [ActionSetRun], in home: Home) -> JSON {
        .array(
            runs.map { run in
                switch run.outcome {
                case .success(let results):
                    .object([
                        ("actionSet", .string(run.name)),
                        ("actions", .array(results.map { ActionOutcome($0, in: home).json })),
                    ])
                case .failure(let error):
                    .object([
                        ("actionSet", .string(run.name)), ("code", .string(error.code.name)),
                        ("message", .string(error.message)),
                    ])
                }
            })
    }

    private static func characteristic(_ key: ValueKey, _ value: CharacteristicValue, in home: Home)
        -> [(key: String, value: JSON)]
    {
        Rendering.names(key.accessory, key.service, key.characteristic, in: home) + [("value", Rendering.value(value))]
    }
}
