import HomeModel
import JSON

/// Which Home Assistant entities a service becomes, with every field that makes them usable: the
/// component, its command topics (the characteristic `/set` topics, which take Home Assistant's
/// payloads: see ``HomeAssistantWords``), and where each state comes from (a field of the service's
/// `$ha` JSON, see ``HomeAssistantState``).
enum HomeAssistantEntities {
    /// One entity's component and config fields, before the shared ones (unique id, availability,
    /// device, origin) are added.
    struct Entity {
        let component: String
        /// Set when a service yields more than its main entity (a battery's low-battery sensor).
        let suffix: String?
        let fields: [(key: String, value: JSON)]
    }

    /// What the mapping of one service needs to know.
    struct Context {
        let service: Service
        /// `null` to take the device's name, else the entity's own.
        let name: JSON
        let stateTopic: String
        let commandTopic: (CharacteristicType) -> String
        /// Where a light takes Home Assistant's JSON commands.
        let lightCommandTopic: String

        func has(_ type: CharacteristicType) -> Bool { service.characteristic(type) != nil }
        func isWritable(_ type: CharacteristicType) -> Bool {
            service.characteristic(type)?.metadata.permissions.contains(.write) ?? false
        }
        func metadata(_ type: CharacteristicType) -> CharacteristicMetadata? { service.characteristic(type)?.metadata }
    }

    /// The services Home Assistant has a component for; nil for the others (they are skipped).
    enum Kind: Equatable {
        case light, `switch`, outlet, climate, lock, garageDoor, covering, fan, battery
        /// A measurement: its device class (also its field of `$ha`), unit and display precision.
        case sensor(String, unit: String, precision: Int)
        /// An on/off reading, and its device class.
        case binarySensor(String)
    }

    /// Each kind's service type, and the characteristic without which the service is skipped.
    private static let kinds: [ServiceType: (required: CharacteristicType, kind: Kind)] = [
        .lightbulb: (.on, .light), .switch: (.on, .switch), .outlet: (.on, .outlet), .fan: (.on, .fan),
        .thermostat: (.targetHeatingCoolingState, .climate), .lockMechanism: (.lockCurrentState, .lock),
        .garageDoorOpener: (.currentDoorState, .garageDoor), .windowCovering: (.currentPosition, .covering),
        .temperatureSensor: (.currentTemperature, .sensor("temperature", unit: "°C", precision: 1)),
        .humiditySensor: (.currentRelativeHumidity, .sensor("humidity", unit: "%", precision: 0)),
        .lightSensor: (.currentAmbientLightLevel, .sensor("illuminance", unit: "lx", precision: 0)),
        .airPressureSensor: (.airPressure, .sensor("pressure", unit: "hPa", precision: 1)),
        .occupancySensor: (.occupancyDetected, .binarySensor("occupancy")),
        .motionSensor: (.motionDetected, .binarySensor("motion")),
        .contactSensor: (.contactSensorState, .binarySensor("opening")),
        .leakSensor: (.leakDetected, .binarySensor("moisture")), .smokeSensor: (.smokeDetected, .binarySensor("smoke")),
        .battery: (.batteryLevel, .battery),
    ]

    /// The service's kind and the characteristic it is read from; nil when no component fits.
    static func mapping(of service: Service) -> (required: CharacteristicType, kind: Kind)? {
        kinds[service.type].flatMap { service.characteristic($0.required) != nil ? $0 : nil }
    }

    /// The entities of one service; empty when no component fits.
    static func entities(for context: Context) -> [Entity] {
        guard let kind = mapping(of: context.service)?.kind else { return [] }
        switch kind {
        case .light: return [light(context)]
        case .switch, .outlet:
            var entities = [
                Entity(
                    component: "switch", suffix: nil,
                    fields: [("name", context.name)] + (kind == .outlet ? [("device_class", .string("outlet"))] : [])
                        + stateField(context, "state") + command(context, .on))
            ]
            if context.has(.outletInUse) {
                entities.append(
                    binarySensor(
                        context, suffix: "in_use", name: .string("In use"), field: "in_use", deviceClass: "power"))
            }
            if context.has(.currentConsumption) {
                entities.append(meter(context, suffix: "power", field: "power", unit: "W", stateClass: "measurement"))
            }
            if context.has(.totalConsumption) {
                entities.append(
                    meter(context, suffix: "energy", field: "energy", unit: "kWh", stateClass: "total_increasing"))
            }
            return entities
        case .fan: return [fan(context)]
        case .climate: return [climate(context)]
        case .lock:
            return [
                Entity(
                    component: "lock", suffix: nil,
                    fields: [("name", context.name)] + stateField(context, "state")
                        + command(context, .lockTargetState)
                        + [("payload_lock", .string("LOCK")), ("payload_unlock", .string("UNLOCK"))])
            ]
        case .garageDoor:
            var entities = [
                Entity(
                    component: "cover", suffix: nil,
                    fields: [("name", context.name), ("device_class", .string("garage"))]
                        + stateField(context, "state") + command(context, .targetDoorState)
                        + [
                            ("payload_open", .string("OPEN")), ("payload_close", .string("CLOSE")),
                            ("payload_stop", .null),
                        ])
            ]
            if context.has(.obstructionDetected) {
                entities.append(
                    binarySensor(
                        context, suffix: "obstruction", name: .string("Obstruction"), field: "obstruction",
                        deviceClass: "problem"))
            }
            return entities
        case .covering: return [covering(context)]
        case .sensor(let deviceClass, let unit, let precision):
            return [
                Entity(
                    component: "sensor", suffix: nil,
                    fields: [
                        ("name", context.name), ("device_class", .string(deviceClass)),
                        ("unit_of_measurement", .string(unit)), ("state_class", .string("measurement")),
                        ("suggested_display_precision", .integer(precision)),
                    ] + stateField(context, deviceClass))
            ]
        case .binarySensor(let deviceClass):
            return [binarySensor(context, suffix: nil, name: context.name, field: "state", deviceClass: deviceClass)]
        case .battery: return battery(context)
        }
    }

    // MARK: Components

    /// A light on Home Assistant's JSON schema: one command carries state, brightness and colour
    /// together, and the gateway converts brightness (0–255 ⇄ 0–100 %) and colour temperature
    /// (kelvin ⇄ mireds).
    private static func light(_ context: Context) -> Entity {
        var fields: [(key: String, value: JSON)] = [
            ("name", context.name), ("schema", .string("json")),
            ("state_topic", .string(context.stateTopic)),
            ("command_topic", .string(context.lightCommandTopic)),
        ]
        let modes = LightScale.supportedColorModes(of: context.service)
        fields.append(("supported_color_modes", .array(modes.map { .string($0) })))
        if context.has(.brightness) { fields.append(("brightness_scale", .integer(255))) }
        if let mireds = context.metadata(.colorTemperature) {
            fields.append(("color_temp_kelvin", .bool(true)))
            if let warmest = mireds.maximumValue {
                fields.append(("min_kelvin", .integer(LightScale.kelvin(fromMireds: warmest))))
            }
            if let coolest = mireds.minimumValue {
                fields.append(("max_kelvin", .integer(LightScale.kelvin(fromMireds: coolest))))
            }
        }
        return Entity(component: "light", suffix: nil, fields: fields)
    }

    private static func fan(_ context: Context) -> Entity {
        var fields: [(key: String, value: JSON)] =
            [("name", context.name)] + stateField(context, "state") + command(context, .on)
        // Speed and direction alike, where the fan has them: read from `$ha`, and set where writable.
        for (type, field) in [(CharacteristicType.rotationSpeed, "percentage"), (.rotationDirection, "direction")]
        where context.has(type) {
            fields.append(("\(field)_state_topic", .string(context.stateTopic)))
            fields.append(("\(field)_value_template", template(field)))
            if context.isWritable(type) {
                fields.append(("\(field)_command_topic", .string(context.commandTopic(type))))
            }
        }
        return Entity(component: "fan", suffix: nil, fields: fields)
    }

    /// A thermostat: modes from the target state's valid values, temperature limits and step from
    /// the target temperature's metadata.
    private static func climate(_ context: Context) -> Entity {
        let modeValues = context.metadata(.targetHeatingCoolingState)?.validValues ?? [0, 1, 2, 3]
        var fields: [(key: String, value: JSON)] = [
            ("name", context.name),
            ("modes", .array(modeValues.compactMap { HomeAssistantWords.climateModes[$0] }.map { .string($0) })),
            ("mode_state_topic", .string(context.stateTopic)),
            ("mode_state_template", template("mode")),
        ]
        if context.isWritable(.targetHeatingCoolingState) {
            fields.append(("mode_command_topic", .string(context.commandTopic(.targetHeatingCoolingState))))
        }
        if context.has(.currentHeatingCoolingState) {
            fields += [("action_topic", .string(context.stateTopic)), ("action_template", template("action"))]
        }
        if let target = context.metadata(.targetTemperature) {
            fields += [
                ("temperature_state_topic", .string(context.stateTopic)),
                ("temperature_state_template", template("temperature")),
            ]
            if target.permissions.contains(.write) {
                fields.append(("temperature_command_topic", .string(context.commandTopic(.targetTemperature))))
            }
            if let minimum = target.minimumValue { fields.append(("min_temp", .number(minimum))) }
            if let maximum = target.maximumValue { fields.append(("max_temp", .number(maximum))) }
            if let step = target.stepValue { fields.append(("temp_step", .number(step))) }
        }
        let readings: [(CharacteristicType, String)] = [
            (.currentTemperature, "current_temperature"), (.currentRelativeHumidity, "current_humidity"),
        ]
        for (type, field) in readings where context.has(type) {
            fields += [("\(field)_topic", .string(context.stateTopic)), ("\(field)_template", template(field))]
        }
        // A device's presets (a valve's manual, schedule, eco), where it takes them: Home Assistant
        // offers "none" of its own, and refuses a list that has it.
        if let preset = context.metadata(.preset), preset.permissions.contains(.write),
            let presets = preset.validStrings?.filter({ $0.lowercased() != "none" }), !presets.isEmpty
        {
            fields += [
                ("preset_modes", .array(presets.map { .string($0) })),
                ("preset_mode_state_topic", .string(context.stateTopic)),
                ("preset_mode_value_template", template("preset")),
                ("preset_mode_command_topic", .string(context.commandTopic(.preset))),
            ]
        }
        fields += [("temperature_unit", .string("C")), ("precision", .number(0.1))]
        return Entity(component: "climate", suffix: nil, fields: fields)
    }

    /// A window covering with its position (0 closed … 100 open, as HomeKit and Home Assistant agree).
    private static func covering(_ context: Context) -> Entity {
        var fields: [(key: String, value: JSON)] =
            [("name", context.name)] + stateField(context, "state")
            + [
                ("position_topic", .string(context.stateTopic)),
                ("position_template", templateOrEmpty("position")),
            ]
        if context.isWritable(.targetPosition) {
            let target = context.commandTopic(.targetPosition)
            fields += [
                ("command_topic", .string(target)), ("payload_open", .string("OPEN")),
                ("payload_close", .string("CLOSE")), ("payload_stop", .null), ("set_position_topic", .string(target)),
            ]
        }
        return Entity(component: "cover", suffix: nil, fields: fields)
    }

    private static func battery(_ context: Context) -> [Entity] {
        var entities = [
            Entity(
                component: "sensor", suffix: nil,
                fields: [
                    ("name", .string("Battery")), ("device_class", .string("battery")),
                    ("unit_of_measurement", .string("%")), ("state_class", .string("measurement")),
                    ("entity_category", .string("diagnostic")),
                ] + stateField(context, "level"))
        ]
        if context.has(.statusLowBattery) {
            entities.append(
                binarySensor(
                    context, suffix: "low", name: .string("Battery low"), field: "low", deviceClass: "battery",
                    category: "diagnostic"))
        }
        // HAP's ChargingState 2 means "not chargeable": nothing to show then.
        if context.has(.chargingState), context.service.characteristic(.chargingState)?.value?.intValue != 2 {
            entities.append(
                binarySensor(
                    context, suffix: "charging", name: .string("Battery charging"), field: "charging",
                    deviceClass: "battery_charging", category: "diagnostic"))
        }
        return entities
    }

    /// A plug's power (W) or energy (kWh) reading.
    private static func meter(_ context: Context, suffix: String, field: String, unit: String, stateClass: String)
        -> Entity
    {
        Entity(
            component: "sensor", suffix: suffix,
            fields: [
                ("name", .string(suffix == "power" ? "Power" : "Energy")), ("device_class", .string(field)),
                ("unit_of_measurement", .string(unit)), ("state_class", .string(stateClass)),
            ] + stateField(context, field))
    }

    private static func binarySensor(
        _ context: Context, suffix: String?, name: JSON, field: String, deviceClass: String, category: String? = nil
    ) -> Entity {
        Entity(
            component: "binary_sensor", suffix: suffix,
            fields: [("name", name), ("device_class", .string(deviceClass))]
                + (category.map { [("entity_category", .string($0))] } ?? []) + stateField(context, field))
    }

    // MARK: Fields

    /// `state_topic` and the `value_template` reading one field of the `$ha` JSON.
    private static func stateField(_ context: Context, _ field: String) -> [(key: String, value: JSON)] {
        [("state_topic", .string(context.stateTopic)), ("value_template", template(field))]
    }

    /// `command_topic` for a characteristic, when it can be written.
    private static func command(_ context: Context, _ type: CharacteristicType) -> [(key: String, value: JSON)] {
        context.isWritable(type) ? [("command_topic", .string(context.commandTopic(type)))] : []
    }

    static func template(_ field: String) -> JSON { .string("{{ value_json.\(field) }}") }

    /// A field that renders empty while it is null: Home Assistant's cover takes an empty position
    /// as "nothing known", and warns about `None`, which it does not take as a number.
    static func templateOrEmpty(_ field: String) -> JSON {
        .string("{{ value_json.\(field) if value_json.\(field) is not none else '' }}")
    }
}
