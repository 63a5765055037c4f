import HomeModel

/// One simulated device: its accessory (services, characteristics, values) and the state that makes it
/// behave like a real one over time. Pure value logic; ``VirtualDriver`` drives it with a clock.
struct VirtualDevice: Sendable {
    /// The device as declared, and as the driver's controls change it while it runs: its own
    /// reachability switch (a bridged device is also unreachable when its bridge is), a jam, an
    /// obstruction, the write delay and the failure rate.
    var configuration: VirtualDeviceConfiguration
    var accessory: Accessory
    /// Whether the device takes requests at all; a silent one leaves every request hanging (a device
    /// that lost power behind a driver that cannot tell).
    var isAnswering = true
    var identifyCount = 0
    /// Seconds left until a lock or garage door finishes its transition.
    private var transitionRemaining: Double?
    private var readingElapsed: Double = 0
    private var batteryElapsed: Double = 0
    /// Value changes not yet reported, in order.
    private(set) var changes: [DriverUpdate] = []

    static let mainService = ServiceID("main")
    static let batteryService = ServiceID("battery")
    static let readingInterval = 5.0
    static let batteryDrainInterval = 60.0

    init(_ configuration: VirtualDeviceConfiguration, bridge: AccessoryID?) {
        self.configuration = configuration
        let (category, type, values) = Self.model(of: configuration.kind)
        var services: [Service] = []
        if let type {
            let characteristics = values.map { characteristic, value in
                Characteristic.standard(
                    characteristic, characteristic == .obstructionDetected ? .bool(configuration.isObstructed) : value)
            }
            services.append(
                Service(id: Self.mainService, type: type, name: type.rawValue, characteristics: characteristics))
        }
        if let level = configuration.battery {
            services.append(
                Service(
                    id: Self.batteryService, type: .battery, name: "Battery",
                    characteristics: [
                        .standard(.batteryLevel, .int(level)),
                        .standard(.chargingState, .int(2)),  // primary cells: HAP's "not chargeable"
                        .standard(.statusLowBattery, .int(level < 20 ? 1 : 0)),
                    ]))
        }
        accessory = Accessory(
            id: AccessoryID(configuration.id), name: configuration.name, category: category,
            manufacturer: configuration.manufacturer, model: configuration.model, bridge: bridge,
            bridgedAccessories: configuration.bridged.map { AccessoryID($0.id) }, services: services,
            isReachable: configuration.isReachable)
    }

    /// What a kind of device is: its category, and its main service's type and characteristics with
    /// their first values (a bridge has no service of its own).
    private static func model(of kind: VirtualDeviceKind) -> (
        AccessoryCategory, ServiceType?, [(CharacteristicType, CharacteristicValue?)]
    ) {
        switch kind {
        case .lightbulb:
            (
                .lightbulb, .lightbulb,
                [
                    (.on, .bool(false)), (.brightness, .int(100)), (.hue, .float(0)), (.saturation, .float(0)),
                    (.colorTemperature, .int(300)),
                ]
            )
        case .switch: (.switch, .switch, [(.on, .bool(false))])
        case .outlet: (.outlet, .outlet, [(.on, .bool(false)), (.outletInUse, .bool(false))])
        case .thermostat:
            (
                .thermostat, .thermostat,
                [
                    (.currentTemperature, .float(20)), (.targetTemperature, .float(21)),
                    (.currentHeatingCoolingState, .int(0)), (.targetHeatingCoolingState, .int(0)),
                    (.temperatureDisplayUnits, .int(0)),
                ]
            )
        case .lock: (.doorLock, .lockMechanism, [(.lockCurrentState, .int(1)), (.lockTargetState, .int(1))])
        case .garageDoor:
            (
                .garageDoorOpener, .garageDoorOpener,
                [(.currentDoorState, .int(1)), (.targetDoorState, .int(1)), (.obstructionDetected, nil)]
            )
        case .windowCovering:
            (
                .windowCovering, .windowCovering,
                [
                    (.currentPosition, .int(0)), (.targetPosition, .int(0)), (.positionState, .int(2)),
                    (.holdPosition, nil),
                ]
            )
        case .fan:
            (.fan, .fan, [(.on, .bool(false)), (.rotationSpeed, .float(50)), (.rotationDirection, .int(0))])
        case .temperatureSensor: (.sensor, .temperatureSensor, [(.currentTemperature, .float(21))])
        case .humiditySensor: (.sensor, .humiditySensor, [(.currentRelativeHumidity, .float(45))])
        case .motionSensor: (.sensor, .motionSensor, [(.motionDetected, .bool(false))])
        case .contactSensor: (.sensor, .contactSensor, [(.contactSensorState, .int(0))])
        case .bridge: (.bridge, nil, [])
        }
    }

    // MARK: Values

    func value(_ type: CharacteristicType, service: ServiceID = mainService) -> CharacteristicValue? {
        accessory.characteristic(service, type)?.value
    }

    private func number(_ type: CharacteristicType, service: ServiceID = mainService) -> Double {
        value(type, service: service)?.doubleValue ?? 0
    }

    /// Sets a value and remembers the change for the driver to report.
    mutating func set(_ type: CharacteristicType, _ value: CharacteristicValue, service: ServiceID = mainService) {
        if accessory.setValue(value, service: service, type: type) {
            changes.append(.value(accessory.id, service: service, characteristic: type, value))
        }
    }

    mutating func takeChanges() -> [DriverUpdate] {
        defer { changes.removeAll() }
        return changes
    }

    /// Takes the stored values of `stored` for the characteristics this device has (a value the
    /// metadata refuses, from an older configuration, is left at the configured one). A lock or door
    /// stopped halfway by the restart finishes its move.
    mutating func restore(_ stored: Accessory) {
        for service in stored.services where accessory.service(service.id) != nil {
            for characteristic in service.characteristics {
                guard let value = characteristic.value,
                    let metadata = accessory.characteristic(service.id, characteristic.type)?.metadata,
                    (try? metadata.validate(value)) != nil
                else { continue }
                _ = accessory.setValue(value, service: service.id, type: characteristic.type)
            }
        }
        switch configuration.kind {
        case .lock where number(.lockCurrentState) != number(.lockTargetState) && !configuration.isJammed:
            react(to: .lockTargetState)
        case .garageDoor where number(.currentDoorState) != number(.targetDoorState):
            react(to: .targetDoorState)
        default:
            break
        }
    }

    // MARK: Behaviour

    /// Applies a confirmed write. The written values themselves are not reported back (the manager
    /// records them); what follows from them (an outlet in use, a door starting to open) is.
    mutating func write(_ writes: [CharacteristicWrite]) {
        for write in writes {
            _ = accessory.setValue(write.value, service: write.service, type: write.characteristic)
        }
        for write in writes where write.service == Self.mainService {
            react(to: write.characteristic)
        }
    }

    private mutating func react(to type: CharacteristicType) {
        switch (configuration.kind, type) {
        case (.outlet, .on):
            set(.outletInUse, value(.on) ?? .bool(false))
        case (.lock, .lockTargetState):
            // A lock told to be what it is already does not move (nor does a real one).
            guard number(.lockCurrentState) != number(.lockTargetState) else { return transitionRemaining = nil }
            transitionRemaining = configuration.transitionTime / .seconds(1)
        case (.windowCovering, .holdPosition) where value(.holdPosition) == .bool(true):
            // Stops where it is: the target becomes the position it has reached.
            set(.targetPosition, .int(Int(number(.currentPosition))))
            set(.positionState, .int(2))
        case (.garageDoor, .targetDoorState):
            let closing = number(.targetDoorState) == 1
            // A door told to close while closed (each "Good Night") or to open while open stays put;
            // one told to close while closing (or open while opening) goes on as it was.
            let state = Int(number(.currentDoorState))
            guard state != (closing ? 3 : 2) else { return }
            guard state != (closing ? 1 : 0) else { return transitionRemaining = nil }
            set(.currentDoorState, .int(closing ? 3 : 2))
            transitionRemaining = configuration.transitionTime / .seconds(1)
        default:
            break
        }
    }

    /// Whether time changes anything about the device: a thermostat, lock, door, covering or sensor
    /// moves on its own, and a battery drains; a switch, outlet, lamp or fan only does what it is told.
    var changesOverTime: Bool {
        ![.lightbulb, .switch, .outlet, .fan, .bridge].contains(configuration.kind) || configuration.battery != nil
    }

    /// Lets `elapsed` seconds of simulated time pass.
    mutating func advance(by elapsed: Double, using random: inout SplitMix64) {
        switch configuration.kind {
        case .thermostat: advanceThermostat(elapsed)
        case .lock:
            if finishTransition(elapsed) {
                set(.lockCurrentState, .int(configuration.isJammed ? 2 : Int(number(.lockTargetState))))
            }
        case .garageDoor: advanceGarageDoor(elapsed)
        case .windowCovering: advanceCovering(elapsed)
        case .temperatureSensor, .humiditySensor, .motionSensor, .contactSensor:
            readingElapsed += elapsed
            while readingElapsed >= Self.readingInterval {
                readingElapsed -= Self.readingInterval
                takeReading(using: &random)
            }
        default: break
        }
        if var level = value(.batteryLevel, service: Self.batteryService)?.intValue {
            batteryElapsed += elapsed
            while batteryElapsed >= Self.batteryDrainInterval && level > 0 {
                batteryElapsed -= Self.batteryDrainInterval
                level -= 1
            }
            set(.batteryLevel, .int(level), service: Self.batteryService)
            set(.statusLowBattery, .int(level < 20 ? 1 : 0), service: Self.batteryService)
        }
    }

    private mutating func finishTransition(_ elapsed: Double) -> Bool {
        guard let remaining = transitionRemaining else { return false }
        if remaining - elapsed > 1e-9 {
            transitionRemaining = remaining - elapsed
            return false
        }
        transitionRemaining = nil
        return true
    }

    private mutating func advanceThermostat(_ elapsed: Double) {
        let current = number(.currentTemperature)
        let target = number(.targetTemperature)
        let mode = Int(number(.targetHeatingCoolingState))
        let heat = (mode == 1 || mode == 3) && current < target - 0.05
        let cool = (mode == 2 || mode == 3) && current > target + 0.05
        // Turned off, the room settles at 18 °C; the temperature moves 0.05 °C a second.
        let goal = heat || cool ? target : (mode == 0 ? 18 : current)
        let step = 0.05 * elapsed
        let next = current < goal ? min(goal, current + step) : max(goal, current - step)
        set(.currentTemperature, .float((next * 10).rounded() / 10))
        let nowHeating = heat && next < target - 0.05
        let nowCooling = cool && next > target + 0.05
        set(.currentHeatingCoolingState, .int(nowHeating ? 1 : nowCooling ? 2 : 0))
    }

    private mutating func advanceGarageDoor(_ elapsed: Double) {
        let state = Int(number(.currentDoorState))
        if state == 3 && configuration.isObstructed {
            transitionRemaining = nil
            set(.obstructionDetected, .bool(true))
            set(.currentDoorState, .int(4))
            return
        }
        set(.obstructionDetected, .bool(configuration.isObstructed))
        if finishTransition(elapsed) {
            set(.currentDoorState, .int(number(.targetDoorState) == 1 ? 1 : 0))
        }
    }

    private mutating func advanceCovering(_ elapsed: Double) {
        let current = number(.currentPosition)
        let target = number(.targetPosition)
        guard current != target else {
            set(.positionState, .int(2))
            return
        }
        let step = 10 * elapsed  // percent a second
        let next = current < target ? min(target, current + step) : max(target, current - step)
        set(.currentPosition, .int(Int(next.rounded())))
        set(.positionState, .int(next == target ? 2 : (target > current ? 1 : 0)))
    }

    private mutating func takeReading(using random: inout SplitMix64) {
        switch configuration.kind {
        case .temperatureSensor:
            let next = number(.currentTemperature) + Double(Int.random(in: -1...1, using: &random)) / 10
            set(.currentTemperature, .float((min(30, max(15, next)) * 10).rounded() / 10))
        case .humiditySensor:
            let next = number(.currentRelativeHumidity) + Double(Int.random(in: -1...1, using: &random))
            set(.currentRelativeHumidity, .float(min(70, max(30, next))))
        case .motionSensor:
            set(.motionDetected, .bool(Double.random(in: 0..<1, using: &random) < 0.2))
        case .contactSensor:
            if Double.random(in: 0..<1, using: &random) < 0.1 {
                set(.contactSensorState, .int(number(.contactSensorState) == 0 ? 1 : 0))
            }
        default: break
        }
    }
}
