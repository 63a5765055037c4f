extension CharacteristicType {
    /// What each valid value of this type means, in the words of HomeKit's own apps ("Secured",
    /// "Opening", "Not charging"); nil for a type whose values are plain numbers. MQTT keeps the
    /// numbers (docs/mqtt.md lists these words beside them): the words are for people.
    package var valueNames: [Int: String]? { Self.valueNames[self] }

    /// The name of `value` of this type, nil when it has none.
    package func name(of value: Int) -> String? { Self.valueNames[self]?[value] }

    static let valueNames: [CharacteristicType: [Int: String]] = [
        "Active": [0: "Inactive", 1: "Active"],
        "AirParticulateSize": [0: "2.5 µm", 1: "10 µm"],
        "AirQuality": [0: "Unknown", 1: "Excellent", 2: "Good", 3: "Fair", 4: "Inferior", 5: "Poor"],
        "CarbonDioxideDetected": [0: "Normal", 1: "Abnormal"],
        "CarbonMonoxideDetected": [0: "Normal", 1: "Abnormal"],
        "ChargingState": [0: "Not charging", 1: "Charging", 2: "Not chargeable"],
        "ClosedCaptions": [0: "Off", 1: "On"],
        "ContactSensorState": [0: "Contact", 1: "No contact"],
        "CurrentAirPurifierState": [0: "Inactive", 1: "Idle", 2: "Purifying"],
        "CurrentDoorState": [0: "Open", 1: "Closed", 2: "Opening", 3: "Closing", 4: "Stopped"],
        "CurrentFanState": [0: "Inactive", 1: "Idle", 2: "Blowing"],
        "CurrentHeaterCoolerState": [0: "Inactive", 1: "Idle", 2: "Heating", 3: "Cooling"],
        "CurrentHeatingCoolingState": [0: "Off", 1: "Heating", 2: "Cooling"],
        "CurrentHumidifierDehumidifierState": [0: "Inactive", 1: "Idle", 2: "Humidifying", 3: "Dehumidifying"],
        "CurrentMediaState": [0: "Playing", 1: "Paused", 2: "Stopped", 3: "Unknown"],
        "CurrentSlatState": [0: "Fixed", 1: "Jammed", 2: "Swinging"],
        "FilterChangeIndication": [0: "Filter OK", 1: "Change filter"],
        "InUse": [0: "Not in use", 1: "In use"],
        "IsConfigured": [0: "Not configured", 1: "Configured"],
        "LeakDetected": [0: "No leak", 1: "Leak detected"],
        "LockCurrentState": [0: "Unsecured", 1: "Secured", 2: "Jammed", 3: "Unknown"],
        "LockLastKnownAction": [
            0: "Secured inside", 1: "Unsecured inside", 2: "Secured outside", 3: "Unsecured outside",
            4: "Secured by keypad", 5: "Unsecured by keypad", 6: "Secured remotely", 7: "Unsecured remotely",
            8: "Secured automatically",
        ],
        "LockPhysicalControls": [0: "Child lock off", 1: "Child lock on"],
        "LockTargetState": [0: "Unsecured", 1: "Secured"],
        "OccupancyDetected": [0: "Not occupied", 1: "Occupied"],
        "PositionState": [0: "Closing", 1: "Opening", 2: "Stopped"],
        "ProgramMode": [0: "No program", 1: "Program", 2: "Program (changed by hand)"],
        "ProgrammableSwitchEvent": [0: "Single press", 1: "Double press", 2: "Long press"],
        "RotationDirection": [0: "Clockwise", 1: "Counterclockwise"],
        "SecuritySystemCurrentState": [
            0: "Home", 1: "Away", 2: "Night", 3: "Off", 4: "Alarm triggered",
        ],
        "SecuritySystemTargetState": [0: "Home", 1: "Away", 2: "Night", 3: "Off"],
        "ServiceLabelNamespace": [0: "Dots", 1: "Numbers"],
        "SlatType": [0: "Horizontal", 1: "Vertical"],
        "SmokeDetected": [0: "No smoke", 1: "Smoke detected"],
        "StatusFault": [0: "No fault", 1: "Fault"],
        "StatusJammed": [0: "Not jammed", 1: "Jammed"],
        "StatusLowBattery": [0: "Battery normal", 1: "Battery low"],
        "StatusTampered": [0: "Not tampered", 1: "Tampered"],
        "SwingMode": [0: "Swing off", 1: "Swing on"],
        "TargetAirPurifierState": [0: "Manual", 1: "Auto"],
        "TargetDoorState": [0: "Open", 1: "Closed"],
        "TargetFanState": [0: "Manual", 1: "Auto"],
        "TargetHeaterCoolerState": [0: "Auto", 1: "Heat", 2: "Cool"],
        "TargetHeatingCoolingState": [0: "Off", 1: "Heat", 2: "Cool", 3: "Auto"],
        "TargetHumidifierDehumidifierState": [0: "Auto", 1: "Humidify", 2: "Dehumidify"],
        "TargetMediaState": [0: "Play", 1: "Pause", 2: "Stop"],
        "TargetSlatState": [0: "Manual", 1: "Auto"],
        "TemperatureDisplayUnits": [0: "Celsius", 1: "Fahrenheit"],
        "ValveType": [0: "Valve", 1: "Irrigation", 2: "Shower head", 3: "Water faucet"],
    ]
}
