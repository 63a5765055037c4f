import Foundation
import HomeModel
import JSON

/// How one characteristic is read from a device's state payload and written into its `/set` payload.
enum Conversion: Sendable, Hashable {
    /// A `binary` expose: the characteristic is on when the property equals `valueOn`, off when it
    /// equals `valueOff`; in the model, true and false for a bool characteristic, else 1 and 0.
    case binary(valueOn: JSON, valueOff: JSON)
    /// A numeric expose on another scale: brightness 0...254 ↔ 0...100 %. A device value one above
    /// `deviceMax` (states sometimes carry 255 for 254) counts as `deviceMax`; anything further out
    /// is invalid.
    case scaled(deviceMax: Double, modelMax: Double)
    /// A numeric expose taken as it is (°C, %, mired, hPa, lx), rounded to the characteristic's step.
    case number
    /// An `enum` expose ↔ an integer characteristic (`system_mode` ↔ TargetHeatingCoolingState).
    case enumeration(names: [String], numbers: [Int])
    /// An `enum` expose with no HomeKit counterpart ↔ a string characteristic whose `validStrings`
    /// are the enum's values (a valve's `preset`).
    case text
    /// A cover's tilt 0...100 % ↔ HomeKit's tilt angle −90...90°.
    case tilt
    /// One component of a colour: the property is the composite `color` object.
    case color(ColorComponent, hasHueSaturation: Bool)
    /// A write-only command: writing any value sends `command` (a cover's STOP).
    case command(JSON)
    /// A window covering's position from an `OPEN`/`CLOSE` state when there is no position.
    case openClose(open: JSON, close: JSON)
    /// A thermostat's CurrentHeatingCoolingState where the device has no `running_state`: from its
    /// mode (`system_mode`, heat without one) and its temperature (the property) against its
    /// setpoint. Heating (1) while below the setpoint in heat or auto, cooling (2) while above it in
    /// cool or auto on a device that can cool (a radiator valve cannot), else off (0).
    case heatingCooling(mode: String?, setpoint: String, coolingSetpoint: String?, canCool: Bool)
    /// A reading above `threshold` is `true` (a plug's power above 1 W: OutletInUse).
    case above(Double)
    /// One button's presses: the `action` values that are this button's, each with its
    /// ProgrammableSwitchEvent (0 single, 1 double, 2 long); any other value is another button's.
    case press([String: Int])

    enum ColorComponent: Sendable, Hashable { case hue, saturation }
}

/// One characteristic of an accessory, tied to the device property it reads and writes.
struct Binding: Sendable, Hashable {
    let service: ServiceID
    let characteristic: CharacteristicType
    let metadata: CharacteristicMetadata
    /// The key in the state payload and in `/set` (`brightness_l1`, `color`, `state`).
    let property: String
    let conversion: Conversion
    /// Whether the device publishes the property, so that a write can wait for its echo.
    let isPublished: Bool
    /// Whether `/get` can ask for it.
    let isGettable: Bool
    /// A target the device moves towards (a cover's position or tilt): its state carries where the
    /// device is, not where it goes, so the target is read from the state only while it has no value,
    /// and a write is confirmed by the device's next state publish whatever it carries.
    let isTarget: Bool

    /// What the state payload says this characteristic is now.
    enum Reading: Equatable {
        /// Not in this payload, or `null` (zigbee2mqtt's "not known").
        case absent
        case value(CharacteristicValue)
        /// Present but unusable: outside the declared range, of the wrong kind, an unknown enum value.
        case invalid(String)
    }

    func read(_ state: JSON) -> Reading {
        guard let raw = state[property], raw != .null else { return .absent }
        switch conversion {
        case .binary(let valueOn, let valueOff):
            if raw == valueOn || raw == valueOff {
                return .value(metadata.format == .bool ? .bool(raw == valueOn) : .int(raw == valueOn ? 1 : 0))
            }
            return .invalid(
                "\(property) is \(raw.serialized), neither \(valueOn.serialized) nor \(valueOff.serialized)")
        case .scaled(let deviceMax, let modelMax):
            guard let number = raw.numberValue else { return .invalid("\(property) is not a number") }
            guard number <= deviceMax + 1 else {
                return .invalid("\(property) \(raw.serialized) is above \(Int(deviceMax))")
            }
            return checked(min(number, deviceMax) * modelMax / deviceMax)
        case .number:
            guard let number = raw.numberValue else { return .invalid("\(property) is not a number") }
            return checked(number)
        case .enumeration(let names, let numbers):
            guard let name = raw.stringValue, let index = names.firstIndex(of: name) else {
                return .invalid("\(property) is \(raw.serialized), not one of \(names.joined(separator: ", "))")
            }
            return .value(.int(numbers[index]))
        case .text:
            guard case .string(let text) = raw else { return .invalid("\(property) is not a string") }
            do {
                return .value(try metadata.validate(.string(text)))
            } catch {
                return .invalid("\(property) \(raw.serialized): \(error.message)")
            }
        case .tilt:
            guard let number = raw.numberValue else { return .invalid("\(property) is not a number") }
            return checked(number * 1.8 - 90)
        case .color(let component, _):
            guard let hs = ColorSpace.hueSaturation(of: raw) else { return .absent }
            return checked(component == .hue ? hs.hue : hs.saturation)
        case .command:
            return .absent
        case .openClose(let open, let close):
            if raw == open { return .value(.int(100)) }
            if raw == close { return .value(.int(0)) }
            return .absent
        case .heatingCooling(let modeProperty, let setpointProperty, let coolingProperty, let canCool):
            guard let temperature = raw.numberValue, let setpoint = state[setpointProperty]?.numberValue else {
                return .absent
            }
            // A device with a cooling setpoint of its own cools above that one (heat 20, cool 26: idle at 23).
            let coolingSetpoint = coolingProperty.flatMap { state[$0]?.numberValue } ?? setpoint
            let mode = modeProperty.map { state[$0]?.stringValue } ?? "heat"
            let heats = temperature < setpoint && (mode == "heat" || mode == "auto")
            let cools = canCool && temperature > coolingSetpoint && (mode == "cool" || mode == "auto")
            return .value(.int(heats ? 1 : cools ? 2 : 0))
        case .above(let threshold):
            guard let number = raw.numberValue else { return .invalid("\(property) is not a number") }
            return .value(.bool(number > threshold))
        case .press(let events):
            guard let action = raw.stringValue else { return .invalid("\(property) is not a string") }
            return events[action].map { .value(.int($0)) } ?? .absent
        }
    }

    /// A device number as the characteristic's value: rounded to its step (and to an integer for an
    /// integer format), then checked against its range.
    private func checked(_ number: Double) -> Reading {
        // Beyond 2^53 no device value means anything, and Int() of it could trap.
        guard number.isFinite, abs(number) < 9e15 else { return .invalid("\(property) is not a usable number") }
        var rounded = number
        if let step = metadata.stepValue, step > 0 {
            let base = metadata.minimumValue ?? 0
            rounded = base + ((number - base) / step).rounded() * step
            rounded = (rounded * 1e6).rounded() / 1e6
        }
        let value: CharacteristicValue = metadata.format == .float ? .float(rounded) : .int(Int(rounded.rounded()))
        do {
            return .value(try metadata.validate(value))
        } catch {
            return .invalid("\(property) \(CharacteristicValue.float(number).plainText): \(error.message)")
        }
    }

    /// The device value to send for `value` (already validated by the model); nil for a colour
    /// component, which ``ColorSpace`` writes together with its partner.
    func deviceValue(for value: CharacteristicValue) -> JSON? {
        switch conversion {
        case .binary(let valueOn, let valueOff):
            return value.doubleValue.map { $0 != 0 } == true ? valueOn : valueOff
        case .scaled(let deviceMax, let modelMax):
            return .integer(Int(((value.doubleValue ?? 0) * deviceMax / modelMax).rounded()))
        case .number:
            let number = value.doubleValue ?? 0
            return number.rounded() == number && metadata.format != .float ? .integer(Int(number)) : .number(number)
        case .enumeration(let names, let numbers):
            guard let index = numbers.firstIndex(of: value.intValue ?? -1) else { return nil }
            return .string(names[index])
        case .text:
            guard case .string(let text) = value else { return nil }
            return .string(text)
        case .tilt:
            return .integer(Int((((value.doubleValue ?? 0) + 90) / 1.8).rounded()))
        case .color:
            return nil
        case .command(let command):
            return value.doubleValue == 0 ? nil : command
        case .openClose(let open, let close):
            return (value.intValue ?? 0) >= 50 ? open : close
        case .press, .above, .heatingCooling:
            return nil
        }
    }
}

/// Colour as HomeKit has it (hue 0...360°, saturation 0...100 %) and as zigbee2mqtt has it
/// (`color` with `hue`/`saturation`, or CIE 1931 `x`/`y`).
enum ColorSpace {
    /// Hue and saturation of a state's `color` object: its own `hue`/`saturation` when it has both,
    /// else computed from `x`/`y`.
    static func hueSaturation(of color: JSON) -> (hue: Double, saturation: Double)? {
        if let hue = color["hue"]?.numberValue, let saturation = color["saturation"]?.numberValue {
            return (hue, saturation)
        }
        guard let x = color["x"]?.numberValue, let y = color["y"]?.numberValue, y > 0 else { return nil }
        return hueSaturation(x: x, y: y)
    }

    /// CIE xy (at full brightness) → hue/saturation, through sRGB (D65, Wide Gamut conversion as Philips
    /// documents it).
    static func hueSaturation(x: Double, y: Double) -> (hue: Double, saturation: Double) {
        let z = 1 - x - y
        let bigY = 1.0
        let bigX = bigY / y * x
        let bigZ = bigY / y * z
        var r = bigX * 1.656492 - bigY * 0.354851 - bigZ * 0.255038
        var g = -bigX * 0.707196 + bigY * 1.655397 + bigZ * 0.036152
        var b = bigX * 0.051713 - bigY * 0.121364 + bigZ * 1.011530
        let largest = max(r, g, b, 1e-9)
        r = max(r / largest, 0)
        g = max(g / largest, 0)
        b = max(b / largest, 0)
        let maximum = max(r, g, b)
        let minimum = min(r, g, b)
        let delta = maximum - minimum
        var hue = 0.0
        if delta > 0 {
            if maximum == r {
                hue = 60 * ((g - b) / delta).truncatingRemainder(dividingBy: 6)
            } else if maximum == g {
                hue = 60 * ((b - r) / delta + 2)
            } else {
                hue = 60 * ((r - g) / delta + 4)
            }
        }
        if hue < 0 { hue += 360 }
        let saturation = maximum == 0 ? 0 : delta / maximum * 100
        return (hue, saturation)
    }

    /// Hue/saturation → CIE xy, rounded to 4 decimals as zigbee2mqtt reports them.
    static func xy(hue: Double, saturation: Double) -> (x: Double, y: Double) {
        let s = saturation / 100
        let c = s
        let h = hue.truncatingRemainder(dividingBy: 360) / 60
        let x2 = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        var (r, g, b): (Double, Double, Double)
        switch h {
        case ..<1: (r, g, b) = (c, x2, 0)
        case ..<2: (r, g, b) = (x2, c, 0)
        case ..<3: (r, g, b) = (0, c, x2)
        case ..<4: (r, g, b) = (0, x2, c)
        case ..<5: (r, g, b) = (x2, 0, c)
        default: (r, g, b) = (c, 0, x2)
        }
        let m = 1 - c
        (r, g, b) = (r + m, g + m, b + m)
        let bigX = r * 0.664511 + g * 0.154324 + b * 0.162028
        let bigY = r * 0.283881 + g * 0.668433 + b * 0.047685
        let bigZ = r * 0.000088 + g * 0.072310 + b * 0.986039
        let sum = bigX + bigY + bigZ
        guard sum > 0 else { return (0.3127, 0.329) }
        func four(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }
        return (four(bigX / sum), four(bigY / sum))
    }
}
