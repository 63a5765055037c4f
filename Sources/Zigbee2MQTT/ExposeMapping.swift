import HomeModel
import JSON

/// A zigbee2mqtt device as an accessory: its services and characteristics with full metadata, how
/// each characteristic reads and writes the device's properties, and what has no mapping.
package struct MappedDevice: Sendable, Hashable {
    /// The accessory, without values (they come with the device's state) but those the mapping
    /// fixes (TemperatureDisplayUnits) or starts from (a derived PositionState: stopped). Its
    /// `unmappedFeatures` are the exposes with no mapping, by property (`linkquality`, `voltage`,
    /// `power_on_behavior`, ...).
    package let accessory: Accessory
    let bindings: [Binding]
    /// The property and value that make the device identify itself, when it has an `identify` expose.
    let identify: Identify?

    struct Identify: Sendable, Hashable {
        let property: String
        let value: JSON
    }

    /// One characteristic's value as a state payload gives it.
    package struct Reported: Sendable, Hashable {
        package let service: ServiceID
        package let characteristic: CharacteristicType
        package let value: CharacteristicValue
        /// A target (a cover's position or tilt): the state says where the device is, not where it goes.
        let isTarget: Bool
    }

    /// What a state payload says: the values it carries (checked against each characteristic's
    /// metadata) and, by property, why the ones it carries unusably were left out.
    package func values(in state: JSON) -> (values: [Reported], problems: [(property: String, reason: String)]) {
        var values: [Reported] = []
        var problems: [(property: String, reason: String)] = []
        for binding in bindings {
            switch binding.read(state) {
            case .absent: continue
            case .invalid(let reason): problems.append((binding.property, reason))
            case .value(let value):
                values.append(
                    Reported(
                        service: binding.service, characteristic: binding.characteristic, value: value,
                        isTarget: binding.isTarget))
            }
        }
        return (values, problems)
    }

    func bindings(of service: ServiceID, _ type: CharacteristicType) -> Binding? {
        bindings.first { $0.service == service && $0.characteristic == type }
    }
}

/// The table of docs/zigbee2mqtt.md: exposes → services and characteristics.
package enum ExposeMapping {
    /// Maps every expose of `device`; what has no mapping is listed, never dropped.
    package static func map(_ device: DeviceDescription) -> MappedDevice {
        var builder = Builder(device: device)
        for expose in device.exposes {
            builder.add(expose)
        }
        builder.addAdditions()
        builder.addButtons()
        builder.nameEndpointServices()
        builder.unmapped += (0..<device.malformedExposes).map { _ in "(an expose without a type)" }
        let category =
            Builder.categoryOrder.first { builder.categories.contains($0) }
            ?? (builder.services.isEmpty ? .other : .sensor)
        var accessory = Accessory(
            id: AccessoryID(device.ieeeAddress), name: accessoryName(device.friendlyName, ieee: device.ieeeAddress),
            category: category,
            manufacturer: device.vendor, model: device.model, services: builder.services, isReachable: false)
        accessory.unmappedFeatures = builder.unmapped
        return MappedDevice(accessory: accessory, bindings: builder.bindings, identify: builder.identify)
    }

    /// The accessory name a friendly name gives: homegate's names are topic levels of letters,
    /// digits, spaces and apostrophes, so `weather_sensor` becomes `weather sensor` and
    /// `kitchen/ceiling` `kitchen ceiling`; a name with nothing usable becomes `Zigbee <address>`.
    static func accessoryName(_ friendlyName: String, ieee: String) -> String {
        HomeName.suggestion(from: friendlyName)
            ?? (ieee.hasPrefix("group:") ? "Zigbee group \(ieee.dropFirst(6))" : "Zigbee \(ieee.dropFirst(2))")
    }
}

private struct Builder {
    let device: DeviceDescription
    var services: [Service] = []
    var bindings: [Binding] = []
    var unmapped: [String] = []
    var categories: Set<AccessoryCategory> = []
    /// The `action` exposes, made into buttons after everything else.
    var actions: [Expose] = []
    /// Exposes that add a characteristic to another expose's service (tamper, child lock, power).
    var additions: [Expose] = []
    /// The kind's name and the endpoint of each service made for an endpoint, for
    /// ``nameEndpointServices()``.
    var endpointOrigins: [ServiceID: (base: String, endpoint: String)] = [:]

    /// Which service gives the accessory its category when it has several (a radiator valve with an
    /// away-mode switch is a thermostat; a vibration sensor that also reports its movements as presses
    /// is a sensor).
    static let categoryOrder: [AccessoryCategory] = [
        .thermostat, .doorLock, .windowCovering, .lightbulb, .fan, .outlet, .switch, .sensor, .programmableSwitch,
    ]
    var identify: MappedDevice.Identify?

    mutating func add(_ expose: Expose) {
        switch expose.type {
        case "light": addLight(expose)
        case "switch": addSwitch(expose)
        case "cover": addCover(expose)
        case "lock": addLock(expose)
        case "climate": addClimate(expose)
        case "fan":
            addOn(ServiceDraft(kind: "fan", name: "Fan", type: .fan, endpoint: expose.endpoint), expose, category: .fan)
        case "binary", "numeric", "enum": addGeneric(expose)
        default: unmapped.append(expose.displayName)
        }
    }

    // MARK: Specific exposes

    private mutating func addLight(_ light: Expose) {
        var service = ServiceDraft(kind: "light", name: "Light", type: .lightbulb, endpoint: light.endpoint)
        var hasColor = false
        for feature in light.features {
            switch feature.name {
            case "state" where feature.valueOn != nil:
                service.add(.on, feature, binary(feature))
            case "brightness":
                service.add(
                    .brightness, feature, .scaled(deviceMax: feature.valueMax ?? 254, modelMax: 100),
                    metadata: .zigbee(.brightness))
            case "color_temp":
                service.add(.colorTemperature, feature, .number, metadata: measurement(.colorTemperature, feature))
            case "color_hs", "color_xy":
                guard !hasColor else { continue }  // both use the one `color` property
                hasColor = true
                let hs = light.features.contains { $0.name == "color_hs" }
                service.add(.hue, feature, .color(.hue, hasHueSaturation: hs), metadata: .zigbee(.hue))
                service.add(
                    .saturation, feature, .color(.saturation, hasHueSaturation: hs), metadata: .zigbee(.saturation))
            default:
                unmapped.append(feature.displayName)
            }
        }
        finish(service, category: .lightbulb)
    }

    private mutating func addSwitch(_ expose: Expose) {
        let isOutlet = device.isOutlet
        // A switch of something else than the device's power (a valve's `away_mode`) is named after it.
        let property = expose.features.first { $0.name == "state" }?.property
        let suffix = expose.endpoint.map { "_\($0)" } ?? ""
        let other = property.flatMap { $0 == "state\(suffix)" ? nil : $0 }
        let service = ServiceDraft(
            kind: other.map { "switch_\($0)" } ?? (isOutlet ? "outlet" : "switch"),
            name: other.map(Self.words) ?? (isOutlet ? "Outlet" : "Switch"),
            type: isOutlet && other == nil ? .outlet : .switch, endpoint: other == nil ? expose.endpoint : nil)
        addOn(service, expose, category: isOutlet && other == nil ? .outlet : .switch)
    }

    /// A service that is switched on and off only (a switch, a fan): On, from the expose's `state`.
    private mutating func addOn(_ service: ServiceDraft, _ expose: Expose, category: AccessoryCategory) {
        var service = service
        for feature in expose.features {
            if feature.name == "state", feature.valueOn != nil {
                service.add(.on, feature, binary(feature))
            } else {
                unmapped.append(feature.displayName)
            }
        }
        finish(service, category: category)
    }

    /// `away_mode` → `Away Mode`.
    static func words(_ property: String) -> String {
        property.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }

    private mutating func addCover(_ cover: Expose) {
        var service = ServiceDraft(kind: "cover", name: "Cover", type: .windowCovering, endpoint: cover.endpoint)
        let position = cover.feature("position")
        if let position {
            service.add(.currentPosition, position, .number, readOnly: true)
            service.add(.targetPosition, position, .number, isTarget: true)
            // HAP's PositionState, from the device's motor state where it has one.
            if let motor = motorState(endpoint: cover.endpoint) {
                let states = enumeration(motor, ["closing": 0, "opening": 1, "stopped": 2])
                service.add(.positionState, motor, states, readOnly: true)
            }
        }
        for feature in cover.features where feature.name != "position" {
            switch feature.name {
            case "state":
                let open: JSON = feature.valueOn ?? (feature.stringValues.contains("OPEN") ? .string("OPEN") : .null)
                let close: JSON =
                    feature.valueOff ?? (feature.stringValues.contains("CLOSE") ? .string("CLOSE") : .null)
                var used = false
                if position == nil, open != .null, close != .null {
                    var target = CharacteristicMetadata.zigbee(.targetPosition)
                    target.stepValue = 100
                    service.add(.currentPosition, feature, .openClose(open: open, close: close), readOnly: true)
                    service.add(
                        .targetPosition, feature, .openClose(open: open, close: close), metadata: target, isTarget: true
                    )
                    used = true
                }
                if feature.stringValues.contains("STOP"), feature.access.contains(.settable) {
                    service.add(
                        .holdPosition, feature, .command(.string("STOP")),
                        metadata: CharacteristicMetadata(format: .bool, permissions: [.write]))
                    used = true
                }
                if !used { unmapped.append(feature.displayName) }
            case "tilt":
                service.add(.currentHorizontalTiltAngle, feature, .tilt, metadata: Self.tiltAngle, readOnly: true)
                service.add(.targetHorizontalTiltAngle, feature, .tilt, metadata: Self.tiltAngle, isTarget: true)
            default:
                unmapped.append(feature.displayName)
            }
        }
        // HomeKit requires PositionState: without a motor state the driver derives it from where the
        // cover is against where it was sent (``Zigbee2MQTTDriver``), stopped until it is sent.
        if service.characteristics.contains(where: { $0.type == .currentPosition }),
            !service.characteristics.contains(where: { $0.type == .positionState })
        {
            service.characteristics.append(.standard(.positionState, .int(2)))
        }
        finish(service, category: .windowCovering)
    }

    private mutating func addLock(_ lock: Expose) {
        // A lock of something else than a door (a valve's `child_lock`, zigbee2mqtt's `e.child_lock()`)
        // locks the device's own buttons: LockPhysicalControls, as the binary child lock is.
        if lock.feature("lock_state") == nil, var state = lock.feature("state"),
            state.property?.hasPrefix("child_lock") == true
        {
            state.name = "child_lock"
            return additions.append(state)
        }
        var service = ServiceDraft(kind: "lock", name: "Lock", type: .lockMechanism, endpoint: lock.endpoint)
        let lockState = lock.feature("lock_state")
        for feature in lock.features {
            switch feature.name {
            case "state" where feature.valueOn != nil:
                service.add(.lockTargetState, feature, binary(feature))
                if lockState == nil { service.add(.lockCurrentState, feature, binary(feature), readOnly: true) }
            case "lock_state":
                let states = enumeration(feature, ["unlocked": 0, "locked": 1, "not_fully_locked": 2])
                service.add(.lockCurrentState, feature, states, readOnly: true)
            default:
                unmapped.append(feature.displayName)
            }
        }
        finish(service, category: .doorLock)
    }

    private mutating func addClimate(_ climate: Expose) {
        var service = ServiceDraft(kind: "climate", name: "Thermostat", type: .thermostat, endpoint: climate.endpoint)
        let setpoint =
            climate.feature("occupied_heating_setpoint") ?? climate.feature("current_heating_setpoint")
            ?? climate.feature("occupied_cooling_setpoint")
        for feature in climate.features {
            switch feature.name {
            case "local_temperature":
                service.add(.currentTemperature, feature, .number, metadata: measurement(.currentTemperature, feature))
            case let name? where name == setpoint?.name:
                var metadata = CharacteristicMetadata.zigbee(.targetTemperature)
                metadata.minimumValue = feature.valueMin ?? metadata.minimumValue
                metadata.maximumValue = feature.valueMax ?? metadata.maximumValue
                metadata.stepValue = feature.valueStep ?? metadata.stepValue
                service.add(.targetTemperature, feature, .number, metadata: metadata)
            case "system_mode":
                let modes = enumeration(feature, ["off": 0, "heat": 1, "cool": 2, "auto": 3])
                var metadata = CharacteristicMetadata.zigbee(.targetHeatingCoolingState)
                if case .enumeration(_, let numbers) = modes { metadata.validValues = numbers }
                service.add(.targetHeatingCoolingState, feature, modes, metadata: metadata)
            case "preset" where !feature.stringValues.isEmpty:
                // HomeKit has no presets: the device's own words, any of them (manual, schedule, boost, eco).
                service.add(
                    .preset, feature, .text,
                    metadata: CharacteristicMetadata(
                        format: .string, validStrings: feature.stringValues, permissions: []))
            case "running_state":
                let states = enumeration(feature, ["idle": 0, "heat": 1, "cool": 2])
                service.add(.currentHeatingCoolingState, feature, states, readOnly: true)
            default:
                unmapped.append(feature.displayName)
            }
        }
        // HomeKit requires both on a thermostat: what it is doing, and the unit it shows.
        if climate.feature("running_state") == nil, let temperature = climate.feature("local_temperature"),
            let setpoint = setpoint?.property
        {
            let mode = climate.feature("system_mode")
            let canCool = mode?.stringValues.contains("cool") ?? false
            var metadata = CharacteristicMetadata.zigbee(.currentHeatingCoolingState)
            metadata.validValues = canCool ? [0, 1, 2] : [0, 1]
            metadata.maximumValue = canCool ? 2 : 1
            service.add(
                .currentHeatingCoolingState, temperature,
                .heatingCooling(
                    mode: mode?.property, setpoint: setpoint,
                    coolingSetpoint: climate.feature("occupied_cooling_setpoint")?.property, canCool: canCool),
                metadata: metadata,
                readOnly: true)
        }
        if !service.characteristics.isEmpty {
            var units = CharacteristicMetadata.zigbee(.temperatureDisplayUnits)
            units.permissions = [.read]
            service.characteristics.append(
                Characteristic(type: .temperatureDisplayUnits, metadata: units, value: .int(0)))
        }
        finish(service, category: .thermostat)
    }

    // MARK: Generic exposes

    /// The generic exposes that are a sensor's reading (a `numeric`, taken as a number) or state (a
    /// `binary`), by type and name: the sensor service's kind, name and type, and its characteristic.
    private static let sensors:
        [String: (kind: String, name: String, type: ServiceType, characteristic: CharacteristicType)] = [
            "numeric temperature": ("temperature", "Temperature", .temperatureSensor, .currentTemperature),
            "numeric humidity": ("humidity", "Humidity", .humiditySensor, .currentRelativeHumidity),
            "numeric pressure": ("pressure", "Air Pressure", .airPressureSensor, .airPressure),
            "numeric illuminance": ("illuminance", "Light Level", .lightSensor, .currentAmbientLightLevel),
            "numeric illuminance_lux": ("illuminance", "Light Level", .lightSensor, .currentAmbientLightLevel),
            "binary occupancy": ("motion", "Motion", .motionSensor, .motionDetected),
            // As homebridge-z2m shows it: a sensor that something moved the device (its presses stay).
            "binary vibration": ("vibration", "Vibration Sensor", .motionSensor, .motionDetected),
            "binary presence": ("occupancy", "Occupancy", .occupancySensor, .occupancyDetected),
            // zigbee2mqtt's contact is true when closed: its value_on (the alarm) is false.
            "binary contact": ("contact", "Contact", .contactSensor, .contactSensorState),
            "binary water_leak": ("leak", "Leak", .leakSensor, .leakDetected),
            "binary smoke": ("smoke", "Smoke", .smokeSensor, .smokeDetected),
            "numeric battery": ("battery", "Battery", .battery, .batteryLevel),
            "binary battery_low": ("battery", "Battery", .battery, .statusLowBattery),
        ]

    private mutating func addGeneric(_ expose: Expose) {
        if let sensor = Self.sensors["\(expose.type) \(expose.name ?? "")"] {
            // A reading the device publishes or answers; zigbee2mqtt 1.x's `illuminance` without a unit is a
            // raw reading, not lux.
            guard expose.property != nil, expose.access.contains(.published) || expose.access.contains(.gettable),
                expose.name != "illuminance" || expose.unit == "lx"
            else { return unmapped.append(expose.displayName) }
            // The sensor service of the kind, made on first use, takes each of its readings.
            var service = ServiceDraft(
                kind: sensor.kind, name: sensor.name, type: sensor.type, endpoint: expose.endpoint)
            if let index = services.firstIndex(where: { $0.id == service.id }) {
                service.characteristics = services.remove(at: index).characteristics
                service.bindings = bindings.filter { $0.service == service.id }
                bindings.removeAll { $0.service == service.id }
            }
            let isBinary = expose.type == "binary"
            service.add(
                sensor.characteristic, expose, isBinary ? binary(expose) : .number,
                metadata: isBinary ? nil : measurement(sensor.characteristic, expose), readOnly: true)
            return finish(service, category: sensor.type == .battery ? nil : .sensor)
        }
        switch (expose.type, expose.name) {
        case ("enum", "motor_state") where device.exposes.contains(where: { $0.type == "cover" }):
            break  // the cover's PositionState
        case ("binary", "tamper"), ("binary", "child_lock"):
            additions.append(expose)  // to the service they belong to, once it is there
        case ("numeric", "power") where expose.unit == "W", ("numeric", "energy") where expose.unit == "kWh":
            additions.append(expose)
        case ("enum", "action") where expose.access.contains(.published):
            actions.append(expose)  // after the device's other services
        case ("enum", "identify") where expose.access.contains(.settable) && identify == nil:
            identify = MappedDevice.Identify(
                property: expose.property ?? "identify", value: expose.values.first ?? .string("identify"))
        default:
            unmapped.append(expose.displayName)
        }
    }

    /// Adds tamper, child lock and power readings to the services they belong to: StatusTampered
    /// to the device's sensor, LockPhysicalControls to its thermostat or else its switch, power as
    /// OutletInUse (above 1 W) and Eve's CurrentConsumption, energy as Eve's TotalConsumption, to its
    /// outlet or switch. With no such service they are listed unmapped.
    mutating func addAdditions() {
        let sensorTypes = Set(Self.sensors.values.map(\.type)).subtracting([.battery])
        let controls: [ServiceType] = [.thermostat, .outlet, .switch, .lightbulb, .fan, .windowCovering]
        let services = services
        func first(_ types: [ServiceType]) -> Int? {
            types.lazy.compactMap { type in services.firstIndex { $0.type == type } }.first
        }
        for expose in additions {
            switch expose.name {
            case "tamper":
                let target = services.firstIndex { sensorTypes.contains($0.type) }
                add(.statusTampered, expose, binary(expose), to: target, readOnly: true)
            case "child_lock":
                add(.lockPhysicalControls, expose, binary(expose), to: first(controls))
            case "power":
                let target = first([.outlet, .switch, .lightbulb])
                if let target, services[target].type == .outlet {
                    add(.outletInUse, expose, .above(1), to: target, readOnly: true)
                }
                add(.currentConsumption, expose, .number, to: target, readOnly: true)
            default:
                add(.totalConsumption, expose, .number, to: first([.outlet, .switch, .lightbulb]), readOnly: true)
            }
        }
    }

    /// Adds a characteristic bound to `expose` to the service at `index`; unmapped without one.
    private mutating func add(
        _ type: CharacteristicType, _ expose: Expose, _ conversion: Conversion, to index: Int?,
        readOnly: Bool = false
    ) {
        guard let index else { return unmapped.append(expose.displayName) }
        // A draft of the service made already, its id as the kind: its new characteristics' bindings only.
        let service = services[index]
        var draft = ServiceDraft(kind: service.id.rawValue, name: service.name, type: service.type, endpoint: nil)
        draft.characteristics = service.characteristics
        let metadata: CharacteristicMetadata? = if case .number = conversion { measurement(type, expose) } else { nil }
        draft.add(type, expose, conversion, metadata: metadata, readOnly: readOnly)
        unmapped += draft.dropped
        services[index] = draft.service
        bindings += draft.bindings
    }

    mutating func addButtons() {
        for expose in actions { addButtons(expose) }
        labelButtons()
    }

    /// HAP's labels for an accessory with several buttons: a ServiceLabel service saying they are
    /// numbered, and on each button its number (ServiceLabelIndex, from 1 in the order of the
    /// services), so that Apple Home orders and labels them. One button needs none.
    private mutating func labelButtons() {
        let buttons = services.indices.filter { services[$0].type == .statelessProgrammableSwitch }
        guard buttons.count > 1 else { return }
        for (number, index) in buttons.enumerated() {
            services[index].characteristics.append(.standard(.serviceLabelIndex, .int(number + 1)))
        }
        // ServiceLabelNamespace 1: buttons numbered 1, 2, 3 (0 would be dots).
        services.append(
            Service(
                id: "service_label", type: .serviceLabel, name: "Button Labels",
                characteristics: [.standard(.serviceLabelNamespace, .int(1))]))
    }

    /// One StatelessProgrammableSwitch per button that `action`'s values name (``ButtonLayout``):
    /// `Button` for a device's only one, else named after the button (`Left`, `Button 1`, `On`).
    private mutating func addButtons(_ expose: Expose) {
        let layout = ButtonLayout(actions: expose.values.compactMap(\.stringValue))
        unmapped += layout.unusable.map { "\(expose.displayName) \($0)" }
        for button in layout.buttons {
            let words = layout.buttons.count == 1 ? "Button" : HomeName.suggestion(from: Self.words(button.key))
            let name = HomeName.firstFree(words ?? "Button") { name in
                services.contains { HomeName.matches($0.name, name) }
            }
            var service = ServiceDraft(
                kind: button.key.isEmpty
                    ? "button" : button.key.hasPrefix("button") ? button.key : "button_\(button.key)",
                name: name,
                type: .statelessProgrammableSwitch, endpoint: expose.endpoint)
            var metadata = CharacteristicMetadata.zigbee(.programmableSwitchEvent)
            metadata.validValues = Set(button.presses.values).sorted()
            metadata.maximumValue = Double(metadata.validValues!.last!)
            service.add(.programmableSwitchEvent, expose, .press(button.presses), metadata: metadata, readOnly: true)
            finish(service, category: .programmableSwitch)
        }
    }

    // MARK: Names of endpoints' services

    /// Names the services of endpoints for people: numbered endpoints (`l1`, `2`, `ep3`) count per
    /// kind (`Light 1` … `Light 5`, `Cover 1` and `Cover 2` for zigfred's l6 and l7; a kind's only
    /// one keeps its plain name), and named ones go before the kind (`Left Switch`, `USB Switch`).
    /// A name taken already keeps the service's first name, `Light l1`.
    mutating func nameEndpointServices() {
        let origins = services.indices.compactMap { index in endpointOrigins[services[index].id].map { (index, $0) } }
        var kinds: Set<String> = []
        for (_, (base, _)) in origins where kinds.insert(base).inserted {
            let kind = origins.filter { $0.1.base == base }
            let plainTaken = services.contains { endpointOrigins[$0.id] == nil && HomeName.matches($0.name, base) }
            let numbered = kind.filter { Self.endpointNumber($0.1.endpoint) != nil }
            var next = plainTaken ? 2 : 1
            for (index, (_, endpoint)) in kind {
                let name: String?
                if Self.endpointNumber(endpoint) != nil {
                    name = numbered.count == 1 && !plainTaken ? base : "\(base) \(next)"
                    next += 1
                } else {
                    name = HomeName.suggestion(from: "\(Self.endpointWord(endpoint)) \(base)")
                }
                guard let name,
                    !services.contains(where: { $0.id != services[index].id && HomeName.matches($0.name, name) })
                else { continue }
                services[index].name = name
            }
        }
    }

    /// The number of an endpoint that is only a number: `l1`, `2`, `ep3`; nil for `left`, `usb`.
    static func endpointNumber(_ endpoint: String) -> Int? {
        let digits = endpoint.drop { !$0.isNumber }
        let prefix = endpoint.prefix(endpoint.count - digits.count).lowercased()
        guard ["", "l", "ep", "e", "s", "switch", "button", "relay", "channel", "ch"].contains(prefix) else {
            return nil
        }
        return Int(digits)
    }

    /// A named endpoint as a word before the kind: `left` → `Left`, `usb` → `USB`.
    static func endpointWord(_ endpoint: String) -> String {
        ["usb", "rgb", "cct", "led"].contains(endpoint.lowercased()) ? endpoint.uppercased() : words(endpoint)
    }

    // MARK: Helpers

    private mutating func finish(_ draft: ServiceDraft, category: AccessoryCategory?) {
        unmapped += draft.dropped
        guard !draft.characteristics.isEmpty else { return }
        if let endpoint = draft.endpoint { endpointOrigins[draft.id] = (draft.baseName, endpoint) }
        services.append(draft.service)
        bindings += draft.bindings
        if let category { categories.insert(category) }
    }

    /// The device's `motor_state` for a cover on `endpoint`.
    private func motorState(endpoint: String?) -> Expose? {
        device.exposes.first { $0.type == "enum" && $0.name == "motor_state" && $0.endpoint == endpoint }
    }

    private func binary(_ expose: Expose) -> Conversion {
        .binary(valueOn: expose.valueOn ?? .bool(true), valueOff: expose.valueOff ?? .bool(false))
    }

    /// An `enum` expose as an integer characteristic: the values of `known` the expose has, in
    /// `known`'s order, with their numbers.
    private func enumeration(_ expose: Expose, _ known: KeyValuePairs<String, Int>) -> Conversion {
        let table = known.filter { expose.stringValues.contains($0.key) }
        return .enumeration(names: table.map(\.key), numbers: table.map(\.value))
    }

    /// A sensor's reading: the standard metadata with the device's own range where it declares one,
    /// and its step (measurements are not forced onto HAP's whole-percent steps).
    private func measurement(_ type: CharacteristicType, _ expose: Expose) -> CharacteristicMetadata {
        var metadata = CharacteristicMetadata.zigbee(type)
        if let minimum = expose.valueMin { metadata.minimumValue = minimum }
        if let maximum = expose.valueMax { metadata.maximumValue = maximum }
        if metadata.format == .float { metadata.stepValue = expose.valueStep ?? 0.01 }
        return metadata
    }

    static let tiltAngle = CharacteristicMetadata(
        format: .int, unit: .arcDegrees, minimumValue: -90, maximumValue: 90, stepValue: 1,
        permissions: [.read, .write, .notify])
}

/// A service being assembled from one expose.
private struct ServiceDraft {
    let id: ServiceID
    let name: String
    /// The kind's name without the endpoint (`Light`), and the endpoint (`l1`) if the service is one's.
    let baseName: String
    let endpoint: String?
    let type: ServiceType
    var characteristics: [Characteristic] = []
    var bindings: [Binding] = []
    /// Features that could not become a characteristic (no property, no permission, a second one
    /// of the same type), to be listed as unmapped.
    var dropped: [String] = []

    init(kind: String, name: String, type: ServiceType, endpoint: String?) {
        id = ServiceID(endpoint.map { "\(kind)_\($0)" } ?? kind)
        self.name = endpoint.map { "\(name) \($0)" } ?? name
        baseName = name
        self.endpoint = endpoint
        self.type = type
    }

    var service: Service { Service(id: id, type: type, name: name, characteristics: characteristics) }

    /// Adds a characteristic bound to `expose`'s property. Permissions come from the access bits:
    /// published → read and notify, settable → write (unless `readOnly`), gettable → read.
    mutating func add(
        _ type: CharacteristicType, _ expose: Expose, _ conversion: Conversion,
        metadata: CharacteristicMetadata? = nil, readOnly: Bool = false, isTarget: Bool = false
    ) {
        guard let property = expose.property, !characteristics.contains(where: { $0.type == type }) else {
            // A second characteristic of the type from a property that made the first is not dropped.
            if expose.property == nil || !bindings.contains(where: { $0.property == expose.property }) {
                dropped.append(expose.displayName)
            }
            return
        }
        var metadata = metadata ?? .zigbee(type)
        var permissions: CharacteristicPermissions = []
        if expose.access.contains(.published) { permissions.formUnion([.read, .notify]) }
        if expose.access.contains(.gettable) { permissions.insert(.read) }
        if expose.access.contains(.settable), !readOnly { permissions.insert(.write) }
        if case .command = conversion { permissions = expose.access.contains(.settable) ? [.write] : [] }
        if readOnly { permissions.remove(.write) }
        guard !permissions.isEmpty else {
            if !bindings.contains(where: { $0.property == property }) { dropped.append(expose.displayName) }
            return
        }
        metadata.permissions = permissions
        characteristics.append(Characteristic(type: type, metadata: metadata, value: nil))
        bindings.append(
            Binding(
                service: id, characteristic: type, metadata: metadata, property: property, conversion: conversion,
                isPublished: expose.access.contains(.published), isGettable: expose.access.contains(.gettable),
                isTarget: isTarget))
    }
}

extension CharacteristicMetadata {
    /// HAP's metadata for `type`, including the types only this driver brings (air pressure, light
    /// level, occupancy, tilt, hold position); a float reading for a type with none.
    static func zigbee(_ type: CharacteristicType) -> CharacteristicMetadata {
        if let standard = standard(for: type) { return standard }
        func reading(_ unit: CharacteristicUnit, _ minimum: Double, _ maximum: Double) -> Self {
            .init(
                format: .float, unit: unit, minimumValue: minimum, maximumValue: maximum, permissions: [.read, .notify])
        }
        switch type {
        case .airPressure: return reading(.hectopascals, 300, 1100)
        case .currentAmbientLightLevel: return reading(.lux, 0, 100_000)
        case .currentConsumption: return reading(.watts, 0, 100_000)
        case .totalConsumption: return reading(.kilowattHours, 0, 1_000_000_000)
        case .occupancyDetected:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 1, stepValue: 1, validValues: [0, 1],
                permissions: [.read, .notify])
        default:
            return .init(format: .float, permissions: [.read, .notify])
        }
    }
}

extension CharacteristicUnit {
    static let hectopascals = Self(rawValue: "hPa")
    static let watts = Self(rawValue: "W")
    static let kilowattHours = Self(rawValue: "kWh")
}
