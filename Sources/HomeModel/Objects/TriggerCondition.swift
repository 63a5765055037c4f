import Foundation
import Schedules

/// What must hold when an automation's event fires for it to run (HomeKit's event trigger
/// predicate): all of its conditions, checked on the home as it is at that moment.
package enum TriggerCondition: Sendable, Hashable {
    /// The characteristic's current value compared with `value` (in the characteristic's format);
    /// a characteristic with no value yet fails it.
    case characteristic(ValueKey, Comparison, CharacteristicValue)
    /// The moment lies in the window, on the home's clock.
    case time(TimeWindow)

    /// Whether it holds in `home` (its accessories' values, its location and time zone) at `now`.
    /// A sun window in a home with no location fails.
    package func holds(in home: Home, at now: Date) -> Bool {
        switch self {
        case .characteristic(let key, let comparison, let value):
            guard let current = home.accessory(key.accessory)?.characteristic(key.service, key.characteristic)?.value
            else { return false }
            return comparison.holds(current, value)
        case .time(let window):
            return window.contains(
                now, in: home.location?.timeZone ?? .current, at: home.location?.coordinates)
        }
    }
}

/// How a condition compares a characteristic's value with its own: `=` and `≠` for any value, the
/// orders for numbers only.
package enum Comparison: String, Sendable, Hashable, CaseIterable {
    case equal = "="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="

    /// The written forms besides the raw value: `==`, and the mathematical signs.
    package init?(written text: String) {
        switch text {
        case "==": self = .equal
        case "≠": self = .notEqual
        case "≤": self = .lessOrEqual
        case "≥": self = .greaterOrEqual
        default: self.init(rawValue: text)
        }
    }

    /// Whether it orders numbers (and so needs a numeric characteristic).
    var isOrder: Bool { self != .equal && self != .notEqual }

    /// `current` compared with `value`; numbers by their value (21 equals 21.0), anything else by
    /// equality; an order between values that are not both numbers does not hold.
    package func holds(_ current: CharacteristicValue, _ value: CharacteristicValue) -> Bool {
        let numbers =
            current.boolValue == nil && value.boolValue == nil ? (current.doubleValue, value.doubleValue) : (nil, nil)
        switch (self, numbers) {
        case (.equal, (let a?, let b?)): return a == b
        case (.equal, _): return current == value
        case (.notEqual, (let a?, let b?)): return a != b
        case (.notEqual, _): return current != value
        case (.less, (let a?, let b?)): return a < b
        case (.lessOrEqual, (let a?, let b?)): return a <= b
        case (.greater, (let a?, let b?)): return a > b
        case (.greaterOrEqual, (let a?, let b?)): return a >= b
        default: return false
        }
    }
}

/// A condition as a request names it: the characteristic by its accessory's and service's names.
package enum ConditionRequest: Sendable, Hashable {
    case characteristic(CharacteristicReference, Comparison, CharacteristicValue)
    case time(TimeWindow)
}
