import HomeModel

/// Line icons for accessory cards and the page's favicon, drawn inline (24×24, stroked in the text's
/// colour) so the page needs no other resource and follows light and dark.
enum CategoryIcons {
    /// The inner SVG elements (paths, circles, rects, lines) of each icon, by name.
    static let shapes: [String: String] = [
        "lightbulb": """
        <path d="M9 16c0-2-3-3.5-3-7a6 6 0 1 1 12 0c0 3.5-3 5-3 7z"/>\
        <path d="M9.5 19h5"/>\
        <path d="M10.5 21.5h3"/>
        """,
        "switch": """
        <rect x="2" y="7" width="20" height="10" rx="5"/>\
        <circle cx="17" cy="12" r="2.5" fill="currentColor"/>
        """,
        "outlet": """
        <rect x="3" y="3" width="18" height="18" rx="4"/>\
        <path d="M9.5 8.5v3M14.5 8.5v3"/>\
        <path d="M10.5 17v-1a1.5 1.5 0 0 1 3 0v1z"/>
        """,
        "thermostat": """
        <circle cx="12" cy="12" r="9"/>\
        <path d="M8.1 15.9a5.5 5.5 0 1 1 7.8 0"/>\
        <path d="M12 12l2.5-2.5"/>
        """,
        "doorLock": """
        <rect x="5" y="11" width="14" height="10" rx="2"/>\
        <path d="M8 11V7.5a4 4 0 0 1 8 0V11"/>\
        <path d="M12 15v2"/>
        """,
        "garageDoorOpener": """
        <path d="M3 20V9.5L12 4l9 5.5V20"/>\
        <path d="M7 20v-8h10v8"/>\
        <path d="M7 14.7h10M7 17.3h10"/>
        """,
        "windowCovering": """
        <rect x="4" y="3" width="16" height="18" rx="1.5"/>\
        <path d="M4 7h16M4 10.5h16M4 14h16"/>\
        <path d="M16 14v3.5"/>
        """,
        "fan": """
        <circle cx="12" cy="12" r="2"/>\
        <path d="M10.5 10.7C8.6 8.8 8.6 5 11 3.7c2-1 4.2.6 3.6 2.8-.4 1.6-1.6 2.9-3.1 3.6z"/>\
        <path d="M10.5 10.7C8.6 8.8 8.6 5 11 3.7c2-1 4.2.6 3.6 2.8-.4 1.6-1.6 2.9-3.1 3.6z" transform="rotate(120 12 12)"/>\
        <path d="M10.5 10.7C8.6 8.8 8.6 5 11 3.7c2-1 4.2.6 3.6 2.8-.4 1.6-1.6 2.9-3.1 3.6z" transform="rotate(240 12 12)"/>
        """,
        "sensor": """
        <circle cx="12" cy="12" r="2"/>\
        <path d="M8.5 8.5a5 5 0 0 0 0 7M15.5 8.5a5 5 0 0 1 0 7"/>\
        <path d="M5.6 5.6a9 9 0 0 0 0 12.8M18.4 5.6a9 9 0 0 1 0 12.8"/>
        """,
        "motion": """
        <circle cx="14.5" cy="4.5" r="2"/>\
        <path d="M7.5 10.5L10 8.2h3.5l2 2.8 2.5.5"/>\
        <path d="M13 8.2L11 14l3 2.5V21"/>\
        <path d="M11 14l-1.5 3.5-4 1"/>
        """,
        "contact": """
        <rect x="3" y="5" width="7" height="14" rx="1.5"/>\
        <rect x="14" y="8" width="7" height="8" rx="1.5"/>\
        <circle cx="6.5" cy="8.5" r=".8" fill="currentColor"/>
        """,
        "temperature": """
        <path d="M10 13V5a2 2 0 0 1 4 0v8a4.5 4.5 0 1 1-4 0z"/>\
        <path d="M12 17V9"/>
        """,
        "humidity": """
        <path d="M12 3c3 4 6 7.5 6 11a6 6 0 0 1-12 0c0-3.5 3-7 6-11z"/>\
        <path d="M9 14.5a3 3 0 0 0 3 3"/>
        """,
        "leak": """
        <path d="M12 3c2 2.7 4 5 4 7.3a4 4 0 0 1-8 0C8 8 10 5.7 12 3z"/>\
        <path d="M3 19c1.5 1 3 1 4.5 0s3-1 4.5 0 3 1 4.5 0 3-1 4.5 0"/>
        """,
        "smoke": """
        <path d="M3 3.5h18"/>\
        <path d="M5 3.5v1A2.5 2.5 0 0 0 7.5 7h9A2.5 2.5 0 0 0 19 4.5v-1"/>\
        <path d="M7 21c-1.3-1.2-1.3-2.3 0-3.5s1.3-2.3 0-3.5M12 20c-1.3-1.2-1.3-2.3 0-3.5s1.3-2.3 0-3.5M17 21c-1.3-1.2-1.3-2.3 0-3.5s1.3-2.3 0-3.5"/>
        """,
        "lightSensor": """
        <circle cx="12" cy="12" r="4"/>\
        <path d="M12 2.5v2M12 19.5v2M2.5 12h2M19.5 12h2M5.3 5.3l1.4 1.4M17.3 17.3l1.4 1.4M5.3 18.7l1.4-1.4M17.3 6.7l1.4-1.4"/>
        """,
        "airQuality": """
        <path d="M3 8h10a3 3 0 1 0-3-3"/>\
        <path d="M3 12h17"/>\
        <path d="M3 16h13a3 3 0 1 1-3 3"/>
        """,
        "programmableSwitch": """
        <rect x="3" y="15" width="18" height="5.5" rx="1.5"/>\
        <path d="M7.5 15v-2.5a4.5 4.5 0 0 1 9 0V15"/>\
        <path d="M12 2.5v4M10 5l2 2 2-2"/>
        """,
        "bridge": """
        <circle cx="12" cy="12" r="2.5"/>\
        <circle cx="5" cy="5.5" r="2"/>\
        <circle cx="19" cy="5.5" r="2"/>\
        <circle cx="12" cy="20" r="2"/>\
        <path d="M6.5 6.9l3.6 3.4M17.5 6.9l-3.6 3.4M12 14.5V18"/>
        """,
        "other": """
        <path d="M12 3l8 4.5v9L12 21l-8-4.5v-9z"/>\
        <path d="M4 7.5l8 4.5 8-4.5"/>\
        <path d="M12 12v9"/>
        """,
        "battery": """
        <rect x="2" y="7" width="17" height="10" rx="2"/>\
        <path d="M21.5 10.5v3"/>\
        <rect x="5" y="10" width="7" height="4" rx=".5" fill="currentColor" stroke="none"/>
        """,
        "scene": """
        <path d="M10 3c.5 3.5 2.5 5.5 6 6-3.5.5-5.5 2.5-6 6-.5-3.5-2.5-5.5-6-6 3.5-.5 5.5-2.5 6-6z"/>\
        <path d="M18 14c.3 1.8 1.2 2.7 3 3-1.8.3-2.7 1.2-3 3-.3-1.8-1.2-2.7-3-3 1.8-.3 2.7-1.2 3-3z"/>
        """,
        "valve": """
        <path d="M3 10l18 9v-9L3 19z"/>\
        <path d="M12 14.5V6"/>\
        <path d="M8 6h8"/>
        """,
        "security": """
        <path d="M12 3l7 3v5.5c0 4.5-3 7.8-7 9.5-4-1.7-7-5-7-9.5V6z"/>\
        <path d="M9 12l2 2 4-4"/>
        """,
        "camera": """
        <rect x="2" y="6" width="13" height="12" rx="2"/>\
        <path d="M15 10.5l6-3.5v10l-6-3.5"/>
        """,
        "doorbell": """
        <path d="M6 16v-5a6 6 0 0 1 12 0v5l2 2H4z"/>\
        <path d="M10 20.5a2 2 0 0 0 4 0"/>
        """,
        "speaker": """
        <rect x="5" y="2.5" width="14" height="19" rx="2"/>\
        <circle cx="12" cy="14" r="4"/>\
        <circle cx="12" cy="6.5" r="1" fill="currentColor"/>
        """,
        "window": """
        <rect x="4" y="3" width="16" height="18" rx="1.5"/>\
        <path d="M12 3v18M4 12h16"/>
        """,
        "door": """
        <path d="M5 21V4a1 1 0 0 1 1-1h12a1 1 0 0 1 1 1v17"/>\
        <path d="M3 21h18"/>\
        <circle cx="15" cy="12" r="1" fill="currentColor"/>
        """,
        "airPurifier": """
        <rect x="4" y="3" width="16" height="18" rx="3"/>\
        <path d="M8 8.5c1.3-1 2.7-1 4 0s2.7 1 4 0M8 12c1.3-1 2.7-1 4 0s2.7 1 4 0M8 15.5c1.3-1 2.7-1 4 0s2.7 1 4 0"/>
        """,
    ]
    /// The favicon: a whole SVG document (image/svg+xml) served at /favicon.svg.
    static let favicon: String = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#2a7ae2" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">\
        <path d="M3 10.5L12 3l9 7.5V20a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1z"/>\
        <path d="M9.5 13a3.5 3.5 0 0 1 5 0"/>\
        <circle cx="12" cy="16" r="1.2" fill="#2a7ae2"/>\
        </svg>
        """
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
