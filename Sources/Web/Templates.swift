import Mustache

/// The pages' mustache templates (swift-mustache), from Resources/templates, compiled into the
/// binary like ``Assets``: a hub runs the one file it was given, with no resource folder beside it.
///
/// Every template starts with the pragma of ``ScalarHTML``: swift-mustache's own HTML escaping
/// compares whole characters, so a quote followed by a combining mark (`"\u{301}`, one character)
/// was left as it is and ended an attribute (`TemplateTests`).
///
/// A line break and the indentation after it are for reading only: they are dropped (as is a file's
/// last line break) when the template is registered, so nested markup is indented without putting
/// whitespace on the page. A line that starts at the margin starts a line of the page. Besides
/// plain mustache, the templates use swift-mustache's `empty(list)` to test a list once.
enum Templates {
    static let library: MustacheLibrary = {
        MustacheContentTypes.register(ScalarHTML(), named: ScalarHTML.name)
        var library = MustacheLibrary()
        for (name, text) in sources {
            // The templates are constants of the binary: one that does not parse is a bug of this file.
            let text = text.replacing(/\n[ \t]+|\n\z/, with: "")
            try! library.register("{{% CONTENT_TYPE: \(ScalarHTML.name)}}" + text, named: name)
        }
        return library
    }()

    /// `view` rendered by the template `name`.
    static func render(_ view: Any, _ name: String) -> String {
        library.render(view, withTemplate: name) ?? ""
    }

    /// The templates in Resources/templates, by name.
    static let sources: [String: String] = [
        "administration": PackageResources.administration_mustache,
        "automationDays": PackageResources.automationDays_mustache,
        "automationEnd": PackageResources.automationEnd_mustache,
        "automations": PackageResources.automations_mustache,
        "automationStart": PackageResources.automationStart_mustache, "card": PackageResources.card_mustache,
        "characteristic": PackageResources.characteristic_mustache, "command": PackageResources.command_mustache,
        "csrf": PackageResources.csrf_mustache, "frame": PackageResources.frame_mustache,
        "health": PackageResources.health_mustache, "history": PackageResources.history_mustache,
        "home": PackageResources.home_mustache,
        "homes": PackageResources.homes_mustache, "login": PackageResources.login_mustache,
        "problem": PackageResources.problem_mustache, "request": PackageResources.request_mustache,
        "timeline": PackageResources.timeline_mustache,
    ].mapValues { String(decoding: $0, as: UTF8.self) }
}

/// HTML escaping by Unicode scalar (`&`, `<`, `>`, `"`, `'`): see ``Templates``.
struct ScalarHTML: MustacheContentType {
    static let name = "SCALAR_HTML"

    /// Escapes text for HTML element content and double-quoted attribute values: every string that
    /// reaches a page from the model, a form or an answer passes through here.
    func escapeText(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
