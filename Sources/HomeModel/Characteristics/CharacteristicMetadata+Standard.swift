extension CharacteristicMetadata {
    /// The metadata HAP defines for a standard characteristic type, so drivers do not each restate it;
    /// `nil` for a type the catalog does not know.
    package static func standard(for type: CharacteristicType) -> CharacteristicMetadata? {
        let readNotify: CharacteristicPermissions = [.read, .notify]
        let readWriteNotify: CharacteristicPermissions = [.read, .write, .notify]
        /// A state with `count` valid values, 0 to count - 1 (Unsecured, Secured, Jammed, Unknown).
        func states(_ count: Int, _ permissions: CharacteristicPermissions, format: CharacteristicFormat = .uint8)
            -> Self
        {
            .init(
                format: format, minimumValue: 0, maximumValue: Double(count - 1), stepValue: 1,
                validValues: Array(0..<count), permissions: permissions)
        }
        func percentage(_ format: CharacteristicFormat, _ permissions: CharacteristicPermissions) -> Self {
            .init(
                format: format, unit: .percentage, minimumValue: 0, maximumValue: 100, stepValue: 1,
                permissions: permissions)
        }
        func celsius(_ minimum: Double, _ maximum: Double, _ permissions: CharacteristicPermissions) -> Self {
            .init(
                format: .float, unit: .celsius, minimumValue: minimum, maximumValue: maximum, stepValue: 0.1,
                permissions: permissions)
        }
        switch type {
        case .name: return .init(format: .string, maxLength: 64, permissions: [.read])
        case .identify: return .init(format: .bool, permissions: [.write])
        case .holdPosition: return .init(format: .bool, permissions: [.write])
        case .on: return .init(format: .bool, permissions: readWriteNotify)
        case .outletInUse, .obstructionDetected, .motionDetected: return .init(format: .bool, permissions: readNotify)
        case .brightness: return percentage(.int, readWriteNotify)
        case .saturation, .rotationSpeed: return percentage(.float, readWriteNotify)
        case .targetPosition: return percentage(.uint8, readWriteNotify)
        case .currentPosition, .batteryLevel: return percentage(.uint8, readNotify)
        case .currentRelativeHumidity: return percentage(.float, readNotify)
        case .hue:
            return .init(
                format: .float, unit: .arcDegrees, minimumValue: 0, maximumValue: 360, stepValue: 1,
                permissions: readWriteNotify)
        case .colorTemperature:
            return .init(
                format: .uint32, minimumValue: 140, maximumValue: 500, stepValue: 1, permissions: readWriteNotify)
        case .currentTemperature: return celsius(-40, 100, readNotify)
        case .targetTemperature: return celsius(10, 38, readWriteNotify)
        case .temperatureDisplayUnits, .lockTargetState, .targetDoorState: return states(2, readWriteNotify)
        case .rotationDirection: return states(2, readWriteNotify, format: .int)
        case .contactSensorState, .leakDetected, .smokeDetected, .statusLowBattery, .statusTampered:
            return states(2, readNotify)
        case .lockPhysicalControls: return states(2, readWriteNotify)
        case .currentHeatingCoolingState, .positionState, .chargingState: return states(3, readNotify)
        case .targetHeatingCoolingState: return states(4, readWriteNotify)
        case .lockCurrentState: return states(4, readNotify)
        case .currentDoorState: return states(5, readNotify)
        case .programmableSwitchEvent: return states(3, readNotify)
        case .serviceLabelNamespace: return states(2, [.read])
        case .serviceLabelIndex:
            return .init(format: .uint8, minimumValue: 1, maximumValue: 255, stepValue: 1, permissions: [.read])
        default: return nil
        }
    }
}
