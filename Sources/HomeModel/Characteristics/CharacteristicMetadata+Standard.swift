extension CharacteristicMetadata {
    /// The metadata HAP defines for a standard characteristic type, so drivers do not each restate it;
    /// `nil` for a type the catalog does not know.
    package static func standard(for type: CharacteristicType) -> CharacteristicMetadata? {
        let readNotify: CharacteristicPermissions = [.read, .notify]
        let readWriteNotify: CharacteristicPermissions = [.read, .write, .notify]
        switch type {
        case .name:
            return .init(format: .string, maxLength: 64, permissions: [.read])
        case .identify:
            return .init(format: .bool, permissions: [.write])
        case .on:
            return .init(format: .bool, permissions: readWriteNotify)
        case .brightness:
            return .init(
                format: .int, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readWriteNotify)
        case .hue:
            return .init(
                format: .float, unit: .arcDegrees, minimumValue: 0, maximumValue: 360, stepValue: 1,
                permissions: readWriteNotify)
        case .saturation:
            return .init(
                format: .float, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readWriteNotify)
        case .colorTemperature:
            return .init(
                format: .uint32, minimumValue: 140, maximumValue: 500, stepValue: 1, permissions: readWriteNotify)
        case .outletInUse, .obstructionDetected, .motionDetected:
            return .init(format: .bool, permissions: readNotify)
        case .currentTemperature:
            return .init(
                format: .float, unit: .celsius, minimumValue: -40, maximumValue: 100, stepValue: 0.1,
                permissions: readNotify)
        case .targetTemperature:
            return .init(
                format: .float, unit: .celsius, minimumValue: 10, maximumValue: 38, stepValue: 0.1,
                permissions: readWriteNotify)
        case .currentHeatingCoolingState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 2, stepValue: 1, validValues: [0, 1, 2],
                permissions: readNotify)
        case .targetHeatingCoolingState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 3, stepValue: 1, validValues: [0, 1, 2, 3],
                permissions: readWriteNotify)
        case .temperatureDisplayUnits:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 1, stepValue: 1, validValues: [0, 1],
                permissions: readWriteNotify)
        case .lockCurrentState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 3, stepValue: 1, validValues: [0, 1, 2, 3],
                permissions: readNotify)
        case .lockTargetState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 1, stepValue: 1, validValues: [0, 1],
                permissions: readWriteNotify)
        case .currentDoorState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 4, stepValue: 1, validValues: [0, 1, 2, 3, 4],
                permissions: readNotify)
        case .targetDoorState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 1, stepValue: 1, validValues: [0, 1],
                permissions: readWriteNotify)
        case .currentPosition:
            return .init(
                format: .uint8, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readNotify)
        case .targetPosition:
            return .init(
                format: .uint8, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readWriteNotify)
        case .positionState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 2, stepValue: 1, validValues: [0, 1, 2],
                permissions: readNotify)
        case .rotationSpeed:
            return .init(
                format: .float, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readWriteNotify)
        case .rotationDirection:
            return .init(
                format: .int, minimumValue: 0, maximumValue: 1, stepValue: 1, validValues: [0, 1],
                permissions: readWriteNotify)
        case .currentRelativeHumidity:
            return .init(
                format: .float, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readNotify)
        case .contactSensorState, .leakDetected, .smokeDetected, .statusLowBattery:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 1, stepValue: 1, validValues: [0, 1],
                permissions: readNotify)
        case .batteryLevel:
            return .init(
                format: .uint8, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: readNotify)
        case .chargingState:
            return .init(
                format: .uint8, minimumValue: 0, maximumValue: 2, stepValue: 1, validValues: [0, 1, 2],
                permissions: readNotify)
        default:
            return nil
        }
    }
}
