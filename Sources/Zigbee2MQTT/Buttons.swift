/// A device's `action` values grouped into buttons, as HomeKit models them: one
/// StatelessProgrammableSwitch per button, whose ProgrammableSwitchEvent says single (0), double (1)
/// or long (2) press.
///
/// A value names its press by a word at its end or start, apart from the rest by `_` or `-`
/// (`single_left`, `button_1_hold`, `on_press`); the rest names the button. `single`, `click` and
/// `press` are a single press, `double` a double, `hold` and `long` a long one; `triple` and
/// `quadruple` are a single and a double press of a button of their own (HomeKit knows no third
/// and fourth). A value with no press word (`on`, `brightness_move_up`) is a button of its own,
/// pressed once. Releases (`release`, `hold_release`) end a press already reported and are left out;
/// so is a value with a wildcard (`*`), which names no value the device sends.
struct ButtonLayout: Equatable {
    struct Button: Equatable {
        /// What the values have in common besides the press (`left`, `button_1`, `on`); empty for
        /// the device's only button.
        var key: String
        /// The button's action values and their ProgrammableSwitchEvent.
        var presses: [String: Int]
    }

    private(set) var buttons: [Button] = []
    /// Values with a wildcard (not a value the device sends), and values no button could take.
    private(set) var unusable: [String] = []

    init(actions: [String]) {
        for action in actions {
            let words = action.split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
            if action.contains("*") {
                unusable.append(action)
            } else if words.last == "release" || words.first == "release" {
                continue  // a release, not a press
            } else if let (key, event) = Self.press(in: words) {
                add(action, key: key, event: event)
            } else {
                add(action, key: action, event: 0)
            }
        }
    }

    private mutating func add(_ action: String, key: String, event: Int) {
        if let index = buttons.firstIndex(where: { $0.key == key }) {
            if !buttons[index].presses.values.contains(event) {
                buttons[index].presses[action] = event
                return
            }
            // The button has that press already (`press` beside `single`): the value is a button of
            // its own, unless it is that button already (`on` after `on_press`): then it is listed.
            guard key != action else { return unusable.append(action) }
            return add(action, key: action, event: 0)
        }
        buttons.append(Button(key: key, presses: [action: event]))
    }

    /// The press a value's first or last word names, and the button the other words name.
    private static func press(in words: [String]) -> (key: String, event: Int)? {
        func event(_ word: String) -> (event: Int, ownButton: String?)? {
            switch word {
            case "single", "click", "press": (0, nil)
            case "double": (1, nil)
            case "hold", "long": (2, nil)
            case "triple", "tripple": (0, "triple")
            case "quadruple": (1, "triple")
            default: nil
            }
        }
        let found: (event: Int, ownButton: String?, rest: ArraySlice<String>)? =
            if let last = words.last, let press = event(last) {
                (press.event, press.ownButton, words.dropLast())
            } else if words.count > 1, let press = event(words[0]) {
                (press.event, press.ownButton, words.dropFirst())
            } else {
                nil
            }
        guard let found else { return nil }
        let key = (Array(found.rest) + (found.ownButton.map { [$0] } ?? [])).joined(separator: "_")
        return (key, found.event)
    }
}
