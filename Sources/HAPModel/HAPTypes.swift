import HomeModel

/// HAP's type UUIDs and the model's type names. Apple's types are written short ("25") or in full
/// ("00000025-0000-1000-8000-0026BB765291"); both are read, in any case. A type not in the table is
/// kept as a custom type named by its full UUID, so it survives and goes back to the device as is.
package enum HAPTypes {
    package static let appleSuffix = "-0000-1000-8000-0026BB765291"

    /// Apple's names (HomeKit's `HMServiceType…` and `HMCharacteristicType…` without the prefix), for
    /// every type of the HAP specification as HAP-python's resources list them; Battery is HomeKit's
    /// name for what HAP-python calls BatteryService, and Speaker the one of 113 (its TelevisionSpeaker too).
    package static let services: [String: String] = [
        "A2": "ProtocolInformation",
        "3E": "AccessoryInformation", "40": "Fan", "41": "GarageDoorOpener", "43": "Lightbulb",
        "44": "LockManagement", "45": "LockMechanism", "47": "Outlet", "49": "Switch", "4A": "Thermostat",
        "7E": "SecuritySystem", "7F": "CarbonMonoxideSensor", "80": "ContactSensor", "81": "Door",
        "82": "HumiditySensor", "83": "LeakSensor", "84": "LightSensor", "85": "MotionSensor",
        "86": "OccupancySensor", "87": "SmokeSensor", "89": "StatelessProgrammableSwitch",
        "8A": "TemperatureSensor", "8B": "Window", "8C": "WindowCovering", "8D": "AirQualitySensor",
        "96": "Battery", "97": "CarbonDioxideSensor", "B7": "Fanv2", "B9": "Slat", "BA": "FilterMaintenance",
        "BB": "AirPurifier", "BC": "HeaterCooler", "BD": "HumidifierDehumidifier", "CC": "ServiceLabel",
        "CF": "IrrigationSystem", "D0": "Valve", "D7": "Faucet", "D8": "Television", "D9": "InputSource",
        "110": "CameraRTPStreamManagement", "112": "Microphone", "113": "Speaker",
        "121": "Doorbell", "129": "DataStreamTransportManagement", "204": "CameraRecordingManagement",
        "21A": "CameraOperatingMode", "228": "SmartSpeaker", "266": "NFCAccess",
    ]

    package static let characteristics: [String: String] = [
        "1": "AdministratorOnlyAccess", "5": "AudioFeedback", "8": "Brightness", "D": "CoolingThresholdTemperature",
        "E": "CurrentDoorState", "F": "CurrentHeatingCoolingState", "10": "CurrentRelativeHumidity",
        "11": "CurrentTemperature", "12": "HeatingThresholdTemperature", "13": "Hue", "14": "Identify",
        "19": "LockControlPoint", "1A": "LockManagementAutoSecurityTimeout", "1C": "LockLastKnownAction",
        "1D": "LockCurrentState", "1E": "LockTargetState", "1F": "Logs", "20": "Manufacturer", "21": "Model",
        "22": "MotionDetected", "23": "Name", "24": "ObstructionDetected", "25": "On", "26": "OutletInUse",
        "28": "RotationDirection", "29": "RotationSpeed", "2F": "Saturation", "30": "SerialNumber",
        "32": "TargetDoorState", "33": "TargetHeatingCoolingState", "34": "TargetRelativeHumidity",
        "35": "TargetTemperature", "36": "TemperatureDisplayUnits", "37": "Version", "4C": "PairSetup",
        "4E": "PairVerify", "4F": "PairingFeatures", "50": "PairingPairings", "52": "FirmwareRevision",
        "53": "HardwareRevision", "64": "AirParticulateDensity", "65": "AirParticulateSize",
        "66": "SecuritySystemCurrentState", "67": "SecuritySystemTargetState", "68": "BatteryLevel",
        "69": "CarbonMonoxideDetected", "6A": "ContactSensorState", "6B": "CurrentAmbientLightLevel",
        "6C": "CurrentHorizontalTiltAngle", "6D": "CurrentPosition", "6E": "CurrentVerticalTiltAngle",
        "6F": "HoldPosition", "70": "LeakDetected", "71": "OccupancyDetected", "72": "PositionState",
        "73": "ProgrammableSwitchEvent", "75": "StatusActive", "76": "SmokeDetected", "77": "StatusFault",
        "78": "StatusJammed", "79": "StatusLowBattery", "7A": "StatusTampered", "7B": "TargetHorizontalTiltAngle",
        "7C": "TargetPosition", "7D": "TargetVerticalTiltAngle", "8E": "SecuritySystemAlarmType",
        "8F": "ChargingState", "90": "CarbonMonoxideLevel", "91": "CarbonMonoxidePeakLevel",
        "92": "CarbonDioxideDetected", "93": "CarbonDioxideLevel", "94": "CarbonDioxidePeakLevel",
        "95": "AirQuality", "A6": "AccessoryFlags", "A7": "LockPhysicalControls", "A8": "TargetAirPurifierState",
        "A9": "CurrentAirPurifierState", "AA": "CurrentSlatState", "AB": "FilterLifeLevel",
        "AC": "FilterChangeIndication", "AD": "ResetFilterIndication", "AE": "TargetAirQuality",
        "AF": "CurrentFanState", "B0": "Active", "B1": "CurrentHeaterCoolerState", "B2": "TargetHeaterCoolerState",
        "B3": "CurrentHumidifierDehumidifierState", "B4": "TargetHumidifierDehumidifierState", "B5": "WaterLevel",
        "B6": "SwingMode", "BE": "TargetSlatState", "BF": "TargetFanState", "C0": "SlatType",
        "C1": "CurrentTiltAngle", "C2": "TargetTiltAngle", "C3": "OzoneDensity", "C4": "NitrogenDioxideDensity",
        "C5": "SulphurDioxideDensity", "C6": "PM2.5Density", "C7": "PM10Density", "C8": "VOCDensity",
        "C9": "RelativeHumidityDehumidifierThreshold", "CA": "RelativeHumidityHumidifierThreshold",
        "CB": "ServiceLabelIndex", "CD": "ServiceLabelNamespace", "CE": "ColorTemperature", "D1": "ProgramMode",
        "D2": "InUse", "D3": "SetDuration", "D4": "RemainingDuration", "D5": "ValveType", "D6": "IsConfigured",
        "DB": "InputSourceType", "DC": "InputDeviceType", "DD": "ClosedCaptions", "DF": "PowerModeSelection",
        "E0": "CurrentMediaState", "E1": "RemoteKey", "E2": "PictureMode", "E3": "ConfiguredName",
        "E6": "Identifier", "E7": "ActiveIdentifier", "E8": "SleepDiscoveryMode", "E9": "VolumeControlType",
        "EA": "VolumeSelector", "114": "SupportedVideoStreamConfiguration",
        "115": "SupportedAudioStreamConfiguration", "116": "SupportedRTPConfiguration",
        "117": "SelectedRTPStreamConfiguration", "118": "SetupEndpoints", "119": "Volume", "11A": "Mute",
        "11B": "NightVision", "11C": "OpticalZoom", "11D": "DigitalZoom", "11E": "ImageRotation",
        "11F": "ImageMirroring", "120": "StreamingStatus", "130": "SupportedDataStreamTransportConfiguration",
        "131": "SetupDataStreamTransport", "134": "TargetVisibilityState", "135": "CurrentVisibilityState",
        "136": "DisplayOrder", "137": "TargetMediaState", "143": "TransitionControl",
        "144": "SupportedTransitionConfiguration", "205": "SupportedCameraRecordingConfiguration",
        "206": "SupportedVideoRecordingConfiguration", "207": "SupportedAudioRecordingConfiguration",
        "209": "SelectedCameraRecordingConfiguration", "21B": "HomeKitCameraActive",
        "21C": "ThirdPartyCameraActive", "21D": "CameraOperatingModeIndicator", "223": "EventSnapshotsActive",
        "225": "PeriodicSnapshotsActive", "226": "RecordingAudioActive", "227": "ManuallyDisabled",
        "24B": "ActiveTransitionCount", "25B": "AirPlayEnable", "263": "ConfigurationState",
        "264": "NFCAccessControlPoint", "265": "NFCAccessSupportedConfiguration", "26C": "HardwareFinish",
    ]

    private static let serviceUUIDs = Dictionary(services.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    private static let characteristicUUIDs = Dictionary(
        characteristics.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })

    /// The HAP type of a model service type: Apple's short form ("43") for one of Apple's, the
    /// type's own UUID for another vendor's; nil for a model type HAP has no UUID for.
    package static func uuid(of type: ServiceType) -> String? {
        serviceUUIDs[type.rawValue] ?? customUUID(type.rawValue)
    }

    /// The HAP type of a model characteristic type, as ``uuid(of:)-swift.type.method`` for services.
    package static func uuid(of type: CharacteristicType) -> String? {
        characteristicUUIDs[type.rawValue] ?? customUUID(type.rawValue)
    }

    /// A type the model keeps by its full UUID (another vendor's, kept as the device gave it).
    private static func customUUID(_ rawValue: String) -> String? {
        rawValue.count == 36 && rawValue.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12] ? rawValue : nil
    }

    /// The short form of an Apple type ("25"), or nil for another vendor's UUID.
    package static func short(_ text: String) -> String? {
        let upper = text.uppercased()
        if !upper.contains("-") {
            let trimmed = upper.drop { $0 == "0" }
            return trimmed.isEmpty ? "0" : String(trimmed)
        }
        guard upper.hasSuffix(appleSuffix), upper.count == 36 else { return nil }
        let head = upper.prefix(8).drop { $0 == "0" }
        return head.isEmpty ? "0" : String(head)
    }

    /// The full uppercase UUID of a type.
    package static func full(_ text: String) -> String {
        let upper = text.uppercased()
        guard !upper.contains("-") else { return upper }
        return String(repeating: "0", count: max(0, 8 - upper.count)) + upper + appleSuffix
    }

    package static func service(_ text: String) -> ServiceType {
        ServiceType(rawValue: short(text).flatMap { services[$0] } ?? full(text))
    }

    package static func characteristic(_ text: String) -> CharacteristicType {
        CharacteristicType(rawValue: short(text).flatMap { characteristics[$0] } ?? full(text))
    }

    /// The accessory's category from its main service: the first that gives one.
    package static func category(of services: [Service]) -> AccessoryCategory {
        services.lazy.compactMap { categories[$0.type] }.first ?? .other
    }

    private static let categories: [ServiceType: AccessoryCategory] = [
        .lightbulb: .lightbulb, .switch: .switch, .outlet: .outlet, .thermostat: .thermostat, .lockMechanism: .doorLock,
        .garageDoorOpener: .garageDoorOpener, .temperatureSensor: .sensor, .humiditySensor: .sensor,
        .motionSensor: .sensor, .contactSensor: .sensor, .lightSensor: .sensor, .leakSensor: .sensor,
        .smokeSensor: .sensor, .occupancySensor: .sensor,
    ]
}
