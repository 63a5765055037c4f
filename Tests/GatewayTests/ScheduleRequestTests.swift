import Gateway
import HomeModel
import JSON
import Schedules
import Testing

/// `addTrigger`'s schedule forms and `setLocation`, read from their bodies: each form as the model
/// gets it, and each malformed body refused with its code before anything runs.
@Suite("Schedule requests")
struct ScheduleRequestTests {
    @Test("updateTrigger takes what addTrigger takes, with the automation it redefines")
    func update() throws {
        let time = try RequestBodies.request(
            "updateTrigger",
            #"{"home":"Home","trigger":"Night","time":"23:00","actionSets":["Off"],"executeOnce":true}"#)
        #expect(
            time
                == .edit(
                    .updateTrigger(
                        home: "Home", trigger: "Night",
                        definition: .addScheduleTrigger(
                            home: "Home", name: "Night",
                            schedule: .timeOfDay(try TimeOfDay(hour: 23, minute: 0), weekdays: Set(Weekday.allCases)),
                            actionSets: ["Off"], options: TriggerOptions(executeOnce: true)))))
        let press = try RequestBodies.request(
            "updateTrigger",
            #"{"home":"Home","trigger":"Button","accessory":"Switch","service":"Button","characteristic":"ProgrammableSwitchEvent","value":1,"actionSets":["Off"]}"#
        )
        guard case .addTrigger(let home, let trigger, let event, let actionSets, _, [], true) = press else {
            Issue.record("updateTrigger with a characteristic read as \(press)")
            return
        }
        #expect(home == "Home" && trigger == "Button" && actionSets == ["Off"])
        #expect(event.accessory == "Switch" && event.service == "Button" && event.value == .integer(1))
        #expect(event.characteristic == "ProgrammableSwitchEvent")
        #expect(
            RequestBodies.code("updateTrigger", #"{"home":"Home","time":"23:00","actionSets":["Off"]}"#)
                == .missingParameter)
        #expect(
            RequestBodies.code(
                "updateTrigger", #"{"home":"Home","trigger":"Night","time":"25:00","actionSets":["Off"]}"#)
                == .invalidSchedule)
    }

    @Test("a time of day, a sun event and a timer are read as the model's schedules")
    func forms() throws {
        let time = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Night","time":"22:30","weekdays":["mon","Fri"],"actionSets":["Off"]}"#)
        #expect(
            time
                == .edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Night",
                        schedule: .timeOfDay(try TimeOfDay(hour: 22, minute: 30), weekdays: [.monday, .friday]),
                        actionSets: ["Off"])))

        let sun = try RequestBodies.request(
            "addTrigger", #"{"home":"Home","name":"Dusk","sun":"sunset","offset":-30,"actionSets":["On"]}"#)
        #expect(
            sun
                == .edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Dusk",
                        schedule: .sun(.sunset, offset: -30, weekdays: Set(Weekday.allCases)),
                        actionSets: ["On"])))

        let start = try LocalDateTime(year: 2026, month: 12, day: 1, hour: 7, minute: 30)
        let timer = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Tea","fireDate":"2026-12-01T07:30","recurrence":{"every":2,"unit":"hours"},"actionSets":["On"]}"#
        )
        #expect(
            timer
                == .edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Tea", schedule: .timer(start: start, recurrence: .everyHours(2)),
                        actionSets: ["On"])))
        let once = try RequestBodies.request(
            "addTrigger", #"{"home":"Home","name":"Once","fireDate":"2026-12-01T07:30","actionSets":["On"]}"#)
        #expect(
            once
                == .edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Once", schedule: .timer(start: start, recurrence: nil), actionSets: ["On"])
                ))
        let weekly = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Bins","fireDate":"2026-12-01T07:30","recurrence":{"weekdays":["tue"]},"actionSets":["On"]}"#
        )
        #expect(
            weekly
                == .edit(
                    .addScheduleTrigger(
                        home: "Home", name: "Bins", schedule: .timer(start: start, recurrence: .onWeekdays([.tuesday])),
                        actionSets: ["On"])))

        // The characteristic form is as it was
        let press = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Press","accessory":"Button","service":"Button","characteristic":"ProgrammableSwitchEvent","value":0,"actionSets":["On"]}"#
        )
        guard case .addTrigger(_, "Press", let event, ["On"], TriggerOptions(), [], false) = press else {
            Issue.record("\(press)")
            return
        }
        #expect(event.accessory == "Button" && event.value == .integer(0))
    }

    @Test("executeOnce and turnBackAfter (seconds) are read with either form; a duration that is no number is refused")
    func options() throws {
        let press = try RequestBodies.request(
            "addTrigger",
            #"{"home":"Home","name":"Hall","accessory":"Door","service":"Contact","characteristic":"ContactSensorState","value":1,"actionSets":["On"],"turnBackAfter":300}"#
        )
        guard case .addTrigger(_, "Hall", _, ["On"], let options, [], false) = press else {
            Issue.record("\(press)")
            return
        }
        #expect(options == TriggerOptions(turnBackAfter: .seconds(300)))
        let once = try RequestBodies.request(
            "addTrigger", #"{"home":"Home","name":"Dusk","sun":"sunset","executeOnce":true,"actionSets":["On"]}"#)
        guard case .edit(.addScheduleTrigger(_, "Dusk", _, ["On"], let onceOptions, [])) = once else {
            Issue.record("\(once)")
            return
        }
        #expect(onceOptions == TriggerOptions(executeOnce: true))
        let patient = try RequestBodies.request(
            "addTrigger", #"{"home":"Home","name":"Tea","time":"16:00","catchUpGrace":0,"actionSets":["On"]}"#)
        guard case .edit(.addScheduleTrigger(_, "Tea", _, ["On"], let graceOptions, [])) = patient else {
            Issue.record("\(patient)")
            return
        }
        #expect(graceOptions == TriggerOptions(catchUpGrace: .zero))
        #expect(
            RequestBodies.code(
                "addTrigger", #"{"home":"H","name":"N","time":"07:30","catchUpGrace":"900","actionSets":["On"]}"#)
                == .invalidParameter)
        #expect(
            RequestBodies.code(
                "addTrigger", #"{"home":"H","name":"N","time":"07:30","turnBackAfter":"5","actionSets":["On"]}"#)
                == .invalidParameter)
        #expect(
            RequestBodies.code(
                "addTrigger", #"{"home":"H","name":"N","time":"07:30","turnBackAfter":1e300,"actionSets":["On"]}"#)
                == .invalidDuration)
        #expect(
            RequestBodies.code(
                "addTrigger", #"{"home":"H","name":"N","time":"07:30","executeOnce":1,"actionSets":["On"]}"#)
                == .invalidParameter)
    }

    @Test("malformed schedules are refused with their code")
    func malformed() {
        let cases: [(String, HomeError.Code)] = [
            (#"{"home":"H","name":"N","time":"25:00","actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","time":"7:30","actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","time":"+7:30","actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","time":"sunset","actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","fireDate":"2026-12-01T+7:30","actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","time":"07:30","weekdays":["someday"],"actionSets":["On"]}"#, .invalidParameter),
            (#"{"home":"H","name":"N","time":"07:30","weekdays":[],"actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","sun":"noon","actionSets":["On"]}"#, .invalidParameter),
            (#"{"home":"H","name":"N","sun":"sunset","offset":"-30","actionSets":["On"]}"#, .invalidParameter),
            (#"{"home":"H","name":"N","fireDate":"2026-02-30T07:30","actionSets":["On"]}"#, .invalidSchedule),
            (#"{"home":"H","name":"N","fireDate":"2026-12-01 07:30","actionSets":["On"]}"#, .invalidSchedule),
            (
                #"{"home":"H","name":"N","fireDate":"2026-12-01T07:30","recurrence":{"every":1,"unit":"fortnights"},"actionSets":["On"]}"#,
                .invalidParameter
            ),
            (
                #"{"home":"H","name":"N","fireDate":"2026-12-01T07:30","recurrence":{"unit":"days"},"actionSets":["On"]}"#,
                .missingParameter
            ),
            (
                #"{"home":"H","name":"N","fireDate":"2026-12-01T07:30","recurrence":5,"actionSets":["On"]}"#,
                .invalidParameter
            ),
            (#"{"home":"H","name":"N","time":"07:30","sun":"sunset","actionSets":["On"]}"#, .invalidParameter),
            (#"{"home":"H","name":"N","time":"07:30"}"#, .missingParameter),
        ]
        for (body, code) in cases {
            #expect(RequestBodies.code("addTrigger", body) == code, "\(body)")
        }
    }

    @Test("setLocation reads coordinates and a time zone, and refuses what is no place or zone")
    func location() throws {
        let set = try RequestBodies.request(
            "setLocation", #"{"home":"Home","latitude":59.91,"longitude":10,"timeZone":"Europe/Oslo"}"#)
        #expect(
            set
                == .edit(
                    .setLocation(
                        home: "Home",
                        location: try HomeLocation(latitude: 59.91, longitude: 10, timeZone: "Europe/Oslo"))))
        #expect(
            RequestBodies.code("setLocation", #"{"home":"H","latitude":95,"longitude":10,"timeZone":"Europe/Oslo"}"#)
                == .invalidCoordinates)
        #expect(
            RequestBodies.code("setLocation", #"{"home":"H","latitude":50,"longitude":10,"timeZone":"Mars/Olympus"}"#)
                == .unknownTimeZone)
        #expect(
            RequestBodies.code("setLocation", #"{"home":"H","latitude":"50","longitude":10,"timeZone":"UTC"}"#)
                == .invalidParameter)
        #expect(RequestBodies.code("setLocation", #"{"home":"H","latitude":50,"longitude":10}"#) == .missingParameter)
    }
}
