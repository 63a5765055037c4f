import HomeModel

/// Line icons for accessory cards and the page's favicon, drawn inline (24×24, stroked in the text's
/// colour) so the page needs no other resource and follows light and dark.
enum CategoryIcons {
    /// The inner SVG elements (paths, circles, rects, lines) of each icon, by name: the symbols of
    /// Resources/icons.svg, one per line.
    static let shapes: [String: String] = {
        let sprite = String(decoding: PackageResources.icons_svg, as: UTF8.self)
        var shapes: [String: String] = [:]
        for match in sprite.matches(of: /<symbol id="(\w+)">(.*)<\/symbol>/) {
            shapes[String(match.1)] = String(match.2)
        }
        return shapes
    }()
    /// The favicon: a whole SVG document (image/svg+xml) served at /favicon.svg (Resources/favicon.svg).
    static let favicon = String(decoding: PackageResources.favicon_svg, as: UTF8.self)
}

extension CategoryIcons {
    /// The icon of each HomeKit service type that has one of its own.
    static let byServiceType: [String: String] = [
        "Lightbulb": "lightbulb", "Switch": "switch", "Outlet": "outlet", "Thermostat": "thermostat",
        "HeaterCooler": "thermostat", "LockMechanism": "doorLock", "GarageDoorOpener": "garageDoorOpener",
        "WindowCovering": "windowCovering", "Window": "window", "Door": "door", "Fan": "fan", "Fanv2": "fan",
        "MotionSensor": "motion", "OccupancySensor": "motion", "ContactSensor": "contact",
        "TemperatureSensor": "temperature", "HumiditySensor": "humidity", "LeakSensor": "leak",
        "SmokeSensor": "smoke", "CarbonMonoxideSensor": "smoke", "CarbonDioxideSensor": "airQuality",
        "AirQualitySensor": "airQuality", "LightSensor": "lightSensor",
        "StatelessProgrammableSwitch": "programmableSwitch", "Doorbell": "doorbell", "Speaker": "speaker",
        "CameraRTPStreamManagement": "camera", "SecuritySystem": "security", "Valve": "valve",
        "IrrigationSystem": "valve", "Faucet": "valve", "AirPurifier": "airPurifier", "Battery": "battery",
    ]

    /// The icon of an accessory: that of its first service with one (the service a person uses;
    /// a sensor shows what it senses), else its category's, else a plain box.
    static func name(for accessory: Accessory) -> String {
        for service in accessory.services where service.type.rawValue != "Battery" {
            if let name = byServiceType[service.type.rawValue] { return name }
        }
        if accessory.isBridge { return "bridge" }
        let category = accessory.category.rawValue
        return shapes[category] != nil ? category : "other"
    }

    /// An icon as inline SVG, hidden from screen readers (the text beside it says the same).
    static func svg(_ name: String) -> String {
        """
        <svg class="icon" aria-hidden="true" focusable="false" viewBox="0 0 24 24" fill="none" \
        stroke="currentColor" stroke-width="1.75" stroke-linecap="round" stroke-linejoin="round">\
        \(shapes[name] ?? shapes["other"] ?? "")</svg>
        """
    }
}
