import Mustache

/// The pages' mustache templates (swift-mustache), in the binary like ``Assets``: a hub runs the
/// one file it was given, with no resource folder beside it.
///
/// Every template starts with the pragma of ``ScalarHTML``: swift-mustache's own HTML escaping
/// compares whole characters, so a quote followed by a combining mark (`"\u{301}`, one character)
/// was left as it is and ended an attribute (`TemplateTests`).
enum Templates {
    static let library: MustacheLibrary = {
        MustacheContentTypes.register(ScalarHTML(), named: ScalarHTML.name)
        var library = MustacheLibrary()
        for (name, text) in sources {
            // The templates are constants of the binary: one that does not parse is a bug of this file.
            try! library.register("{{% CONTENT_TYPE: \(ScalarHTML.name)}}" + text, named: name)
        }
        return library
    }()

    /// `view` rendered by the template `name`.
    static func render(_ view: Any, _ name: String) -> String {
        library.render(view, withTemplate: name) ?? ""
    }

    static let sources: [String: String] = [
        "frame": """
        {{#frame}}<!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · homegate</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/static/app.css"><script src="/static/app.js" defer></script>
        </head><body{{#live}} data-live="{{live}}"{{/live}}>
        <a class="skip" href="#main">Skip to the content</a>
        <header><a class="brand" href="/">homegate</a>{{#session}}<nav>{{#homes}}\
        <a href="/home?name={{query}}">{{name}}</a>{{/homes}}{{#administrator}}<a href="/health">Health</a>{{/administrator}}\
        <form method="post" action="/logout" class="inline">{{>csrf}}\
        <button type="submit" class="link" id="logout">Log out {{account}}</button></form></nav>{{/session}}\
        </header><main id="main">{{#live}}<p id="live-state" class="notice error" role="alert" hidden></p>{{/live}}\
        {{#notice}}<p id="notice" class="notice {{kind}}" role="status">{{text}}</p>{{/notice}}\
        {{^notice}}<p id="notice" class="notice" role="status" hidden></p>{{/notice}}\
        {{$body}}{{/body}}</main></body></html>
        {{/frame}}
        """,
        "csrf": #"<input type="hidden" name="csrf" value="{{csrf}}">"#,
        "login": """
        {{<frame}}{{$body}}{{#page}}<section class="card narrow"><h1>Log in</h1>
        <p class="hint">With your MQTT account and its password.</p>
        <form method="post" action="/login" class="stack">
        <input type="hidden" name="csrf" value="{{token}}">
        <label>Account <input name="account" autocomplete="username" required value="{{account}}"></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
        <button type="submit" id="login">Log in</button></form></section>{{/page}}{{/body}}{{/frame}}
        """,
        "homes": """
        {{<frame}}{{$body}}<h1>Your homes</h1>{{^homes}}<p class="hint">{{#session}}{{account}}{{/session}} is a member of no home yet; \
        an administrator adds it.</p>{{/homes}}<ul class="cards">{{#homes}}
        <li class="card"><a href="/home?name={{query}}"><strong>{{name}}</strong></a>
        <span class="badge">{{role}}</span>{{#primary}} <span class="badge">primary</span>{{/primary}}</li>\
        {{/homes}}</ul>{{/body}}{{/frame}}
        """,
        "health": """
        {{<frame}}{{$body}}{{#page}}<h1>Gateway health</h1><dl class="health">{{#rows}}\
        <dt>{{label}}</dt><dd id="health-{{id}}">{{value}}</dd>{{/rows}}</dl>\
        {{#hasDrivers}}<h2>Devices</h2><dl class="health">{{#drivers}}\
        <dt>{{title}}</dt><dd id="driver-{{id}}"{{#troubled}} class="trouble"{{/troubled}}>{{summary}}</dd>\
        {{/drivers}}</dl>{{/hasDrivers}}{{/page}}{{/body}}{{/frame}}
        """,
        "problem": """
        {{<frame}}{{$body}}<h1>{{title}}</h1><p class="notice error" role="alert">{{#page}}{{message}}{{/page}}</p>{{/body}}{{/frame}}
        """,
        "home": """
        {{<frame}}{{$body}}{{#page}}{{{content}}}{{/page}}{{/body}}{{/frame}}
        """,
    ]
}

/// HTML escaping by Unicode scalar (`&`, `<`, `>`, `"`, `'`): see ``Templates``.
struct ScalarHTML: MustacheContentType {
    static let name = "SCALAR_HTML"

    func escapeText(_ text: String) -> String { escaped(text) }
}
