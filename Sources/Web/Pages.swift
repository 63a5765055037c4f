import Gateway
import HomeModel

/// The server-rendered pages. Every text from the model, a form or an answer is escaped here; the
/// pages load only the page's own stylesheet and script (no fonts, scripts or CDNs from elsewhere).
enum Pages {
    /// What the frame of every page shows: the header with the account's homes, health
    /// (administrators) and logout, the notice of the last action, and the live stream to follow.
    struct Frame {
        struct HomeLink {
            let name: String
            let query: String
            let role: String
            let primary: Bool
        }

        struct NoticeView {
            let kind: String
            let text: String
        }

        let title: String
        let session: Session?
        let homes: [HomeLink]
        let administrator: Bool
        let live: String?
        let notice: NoticeView?

        init(title: String, session: Session?, homes: [HomeSummary] = [], live: String? = nil, notice: Notice? = nil) {
            self.title = title
            self.session = session
            self.homes = homes.map {
                HomeLink(name: $0.name, query: queryEncoded($0.name), role: $0.role.rawValue, primary: $0.isPrimary)
            }
            administrator = homes.contains { $0.role == .administrator }
            self.live = live
            self.notice = notice.map { NoticeView(kind: $0.succeeded ? "ok" : "error", text: noticeText($0)) }
        }
    }

    /// A page for the templates: the frame, and what the page's own template reads (`{{#page}}`).
    private struct View {
        let frame: Frame
        let page: Any
    }

    /// `page` rendered by the template `name` in the frame of every page.
    static func render(_ name: String, _ frame: Frame, _ page: Any = ()) -> String {
        Templates.render(View(frame: frame, page: page), name)
    }

    /// The frame around `body`, HTML made by this file's own code (the home page).
    static func document(
        title: String, session: Session?, homes: [HomeSummary] = [], live: String? = nil, notice: Notice? = nil,
        body: String
    ) -> String {
        render(
            "home", Frame(title: title, session: session, homes: homes, live: live, notice: notice), ["content": body])
    }

    static func csrfField(_ session: Session) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(escaped(session.csrf))\">"
    }

    static func noticeText(_ notice: Notice) -> String {
        notice.succeeded || notice.code == nil ? notice.text : "\(notice.text) (\(notice.code ?? ""))"
    }

    static func login(loginToken: String, account: String = "", problem: String? = nil) -> String {
        render(
            "login",
            Frame(title: "Log in", session: nil, notice: problem.map { Notice(succeeded: false, text: $0, code: nil) }),
            ["token": loginToken, "account": account])
    }

    static func homes(session: Session, homes: [HomeSummary], notice: Notice?) -> String {
        render("homes", Frame(title: "Homes", session: session, homes: homes, notice: notice))
    }

    // MARK: One home

    /// What the home page needs beside the home.
    struct HomeContext {
        var session: Session
        var homes: [HomeSummary]
        var home: Home
        var role: Role
        var discovered: [Accessory]
        /// The home's accessories that hold a pairing of their own (HomeKit, not bridged): they get
        /// an Unpair button.
        var paired: Set<AccessoryID> = []
        var notice: Notice?
        /// When the last permit join the page asked for ends (for the countdown), in Unix seconds.
        var joinOpenUntil: Int?
        var returnPath: String { "/home?name=\(queryEncoded(home.name))" }
    }

    static func home(_ context: HomeContext) -> String {
        let home = context.home
        let admin = context.role.mayChangeLayout
        var body = "<h1>\(escaped(home.name)) <span class=\"badge\">\(context.role.rawValue)</span></h1>"
        // Scenes first: what a household does most is one tap.
        if !home.actionSets.isEmpty {
            body += "<section aria-labelledby=\"scenes\"><h2 id=\"scenes\">Scenes</h2><div class=\"row\">"
            for actionSet in home.actionSets {
                body += commandForm(
                    "run", context,
                    fields: [("actionSet", actionSet.name)],
                    control:
                        "<button type=\"submit\" class=\"scene\">\(CategoryIcons.svg("scene"))\(escaped(actionSet.name))</button>"
                )
            }
            body += "</div></section>"
        }
        let rooms = home.allRooms.enumerated().filter { _, room in
            !(room.isDefault && home.accessories(in: room.id).allSatisfy { $0.isBridge && $0.services.isEmpty })
        }
        if rooms.count > 1 {
            body += "<nav class=\"rooms\" aria-label=\"Rooms\">"
            for (index, room) in rooms {
                body += "<a href=\"#room-\(index)\">\(escaped(room.isDefault ? "Whole home" : room.name))</a>"
            }
            body += "</nav>"
        }
        // Rooms flow in columns on a wide screen, each card kept whole: a room of one card no longer
        // takes the page's whole width.
        body += "<div class=\"rooms-flow\">"
        for (index, room) in rooms {
            let accessories = home.accessories(in: room.id).filter { !$0.isBridge || !$0.services.isEmpty }
            let zones = home.zones.filter { $0.rooms.contains(room.id) }.map(\.name)
            body +=
                "<section class=\"room\" id=\"room-\(index)\"><h2>\(escaped(room.isDefault ? "Whole home" : room.name))"
            if !zones.isEmpty {
                body += " <small>\(zones.map { escaped($0) }.joined(separator: ", "))</small>"
            }
            body += "</h2>"
            if accessories.isEmpty { body += "<p class=\"hint\">No accessories.</p>" }
            body += "<div class=\"grid\">"
            for accessory in accessories {
                body += accessoryCard(accessory, room: room, context: context, admin: admin)
            }
            body += "</div>"
            if admin && !room.isDefault {
                body += """
                    <details class="edit"><summary>Edit room</summary>\
                    \(requestForm("renameRoom", context, fields: [("home", home.name), ("room", room.name)], input: ("name", "New name"), button: "Rename"))\
                    \(requestForm("removeRoom", context, fields: [("home", home.name), ("room", room.name)], button: "Remove room", confirm: "Remove the room \(room.name)?"))\
                    </details>
                    """
            }
            body += "</section>"
        }
        body += "</div>"
        if admin { body += administration(context) }
        return document(
            title: home.name, session: context.session, homes: context.homes,
            live: "/home/live?name=\(queryEncoded(home.name))", notice: context.notice, body: body)
    }

    static func accessoryCard(_ accessory: Accessory, room: Room, context: HomeContext, admin: Bool) -> String {
        let batteryLow = accessory.services.contains { $0.characteristic(.statusLowBattery)?.value?.intValue == 1 }
        var card = """
            <article class="card accessory" data-accessory="\(escaped(accessory.id.rawValue))">
            <h3 id="\(elementID("h-", accessory.id.rawValue))">\(CategoryIcons.svg(CategoryIcons.name(for: accessory)))\(escaped(accessory.name)) <span class="badge off" data-reach="\(escaped(accessory.id.rawValue))"\
            \(accessory.isReachable ? " hidden" : "")>unreachable</span>\
            \(batteryLow ? " <span class=\"badge off\">battery low</span>" : "")</h3>
            """
        let roomLevel = room.name
        // What a person uses stays in view; the battery and Identify wait under "More" (a low battery
        // shows in the heading).
        var primary = ""
        var more = ""
        for service in accessory.services where service.type.rawValue != "AccessoryInformation" {
            // A button's number (ServiceLabelIndex) orders the buttons for Apple Home; here the
            // service's name says which button it is.
            let shown = service.characteristics.filter {
                !$0.metadata.permissions.contains(.hidden) && $0.type != .name && $0.type != .serviceLabelIndex
                    && !$0.metadata.permissions.isDisjoint(with: [.read, .write])
            }
            guard !shown.isEmpty else { continue }
            var part = accessory.services.count > 1 ? "<h4>\(escaped(serviceHeading(service)))</h4>" : ""
            for characteristic in shown {
                part += characteristicRow(
                    characteristic, accessory: accessory, service: service, room: roomLevel, context: context)
            }
            if Self.secondaryServices.contains(service.type) { more += part } else { primary += part }
        }
        card += primary
        card += "<details class=\"more\"><summary>More</summary>" + more
        card += commandForm(
            "identify", context, fields: [("room", roomLevel), ("accessory", accessory.name)],
            control: """
                <button type="submit" class="link" aria-describedby="\(elementID("h-", accessory.id.rawValue))">Identify</button>
                """)
        card += "</details>"
        if admin {
            let home = context.home.name
            let rooms = context.home.allRooms.filter { $0.id != accessory.room }
            card += "<details class=\"edit\"><summary>Edit</summary>"
            card += requestForm(
                "renameAccessory", context, fields: [("home", home), ("accessory", accessory.name)],
                input: ("name", "New name"), button: "Rename")
            if !rooms.isEmpty {
                card += requestForm(
                    "assignAccessory", context, fields: [("home", home), ("accessory", accessory.name)],
                    select: ("room", rooms.map { ($0.name, $0.isDefault ? "Whole home" : $0.name) }), button: "Move")
            }
            card += pressAutomationForms(accessory, context: context)
            card += requestForm(
                "removeAccessory", context, fields: [("home", home), ("accessory", accessory.name)],
                button: "Remove from home", confirm: "Remove \(accessory.name) from \(home)?")
            // A HomeKit pairing is the accessory's, or its bridge's for all the bridge's accessories.
            let bridge = accessory.bridge.flatMap { context.paired.contains($0) ? context.home.accessory($0) : nil }
            let pairingHolder = context.paired.contains(accessory.id) ? accessory : bridge
            if let holder = pairingHolder {
                let others = holder.isBridge ? " with every accessory of the bridge" : ""
                card += requestForm(
                    "unpairAccessory", context, fields: [("home", home), ("accessory", holder.name)],
                    button: holder.id == accessory.id ? "Unpair" : "Unpair its bridge \(holder.name)",
                    confirm:
                        "Unpair \(holder.name)? It leaves \(home)\(others), and pairing it again needs its setup code.")
            }
            card += "</details>"
        }
        return card + "</article>"
    }

    static func characteristicRow(
        _ characteristic: Characteristic, accessory: Accessory, service: Service, room: String, context: HomeContext
    ) -> String {
        let key = characteristicKey(accessory: accessory.id, service: service.id, type: characteristic.type)
        let metadata = characteristic.metadata
        // A control is named by its row's label and its card's heading ("Brightness", "Floor Lamp"),
        // and a button by its own words, described by the same.
        let labelledBy = "\(elementID("l-", key)) \(elementID("h-", accessory.id.rawValue))"
        var row = """
            <div class="characteristic"><span class="label" id="\(elementID("l-", key))">\(escaped(words(characteristic.type.rawValue)))</span>
            """
        // A write-only characteristic (Hold position) has no value to show: only its action.
        let readable = metadata.permissions.contains(.read)
        if readable {
            row += """
                <span class="value"><output data-k="\(escaped(key))" data-unit="\(escaped(unitSuffix(metadata.unit, type: characteristic.type)))">\
                \(escaped(displayedValue(characteristic.value, type: characteristic.type, unit: metadata.unit)))</output></span>
                """
        }
        guard metadata.permissions.contains(.write) else { return row + "</div>" }
        let fields = [
            ("room", room), ("accessory", accessory.name), ("service", service.name),
            ("characteristic", characteristic.type.rawValue),
        ]
        let control: String
        switch metadata.format {
        case .bool where !readable:
            control = """
                <button type="submit" name="value" value="true" aria-describedby="\(labelledBy)">\
                \(characteristic.type == .holdPosition ? "Stop" : "Send")</button>
                """
        case .bool:
            let on = characteristic.value?.boolValue ?? false
            control = """
                <button type="submit" name="value" value="\(on ? "false" : "true")" class="toggle\(on ? " on" : "")" \
                data-toggle="\(escaped(key))" aria-pressed="\(on)" aria-describedby="\(labelledBy)">\(on ? "Turn off" : "Turn on")</button>
                """
        case _ where metadata.validValues != nil:
            let current = characteristic.value?.intValue
            // Before the device said, no choice is shown as if it were the state.
            let unknown = current == nil ? "<option value=\"\" selected disabled>unknown</option>" : ""
            let options =
                unknown
                + (metadata.validValues ?? []).map {
                    let name = escaped(characteristic.type.name(of: $0) ?? "\($0)")
                    return "<option value=\"\($0)\"\($0 == current ? " selected" : "")>\(name)</option>"
                }.joined()
            control =
                "<select name=\"value\" data-k-input=\"\(escaped(key))\" aria-labelledby=\"\(labelledBy)\">\(options)</select>"
                + "<button type=\"submit\" aria-describedby=\"\(labelledBy)\">Set</button>"
        case .string where metadata.validStrings != nil:
            let current = characteristic.value?.plainText
            let unknown = current == nil ? "<option value=\"\" selected disabled>unknown</option>" : ""
            let options =
                unknown
                + (metadata.validStrings ?? []).map {
                    "<option value=\"\(escaped($0))\"\($0 == current ? " selected" : "")>\(escaped($0))</option>"
                }.joined()
            control =
                "<select name=\"value\" data-k-input=\"\(escaped(key))\" aria-labelledby=\"\(labelledBy)\">\(options)</select>"
                + "<button type=\"submit\" aria-describedby=\"\(labelledBy)\">Set</button>"
        case .string:
            control = """
                <input name="value" maxlength="\(metadata.maxLength ?? CharacteristicMetadata.defaultMaxStringLength)" \
                value="\(escaped(characteristic.value?.plainText ?? ""))" aria-labelledby="\(labelledBy)">\
                <button type="submit" aria-describedby="\(labelledBy)">Set</button>
                """
        case .data, .tlv8:
            return row + "</div>"
        default:
            let current = characteristic.value?.plainText ?? ""
            if let minimum = metadata.minimumValue, let maximum = metadata.maximumValue {
                let step = metadata.stepValue.map(number) ?? (metadata.format == .float ? "any" : "1")
                // A range always sits somewhere: before the device said, it is marked unknown (dimmed,
                // read out as "unknown") rather than pretending to the middle.
                let unknown = characteristic.value == nil ? " class=\"unknown\" aria-valuetext=\"unknown\"" : ""
                control = """
                    <input type="range" name="value" min="\(number(minimum))" max="\(number(maximum))" step="\(step)" \
                    value="\(escaped(current))" data-k-input="\(escaped(key))"\(unknown) \
                    aria-labelledby="\(labelledBy)"><button type="submit" aria-describedby="\(labelledBy)">Set</button>
                    """
            } else {
                control = """
                    <input type="number" name="value" step="any" value="\(escaped(current))" \
                    data-k-input="\(escaped(key))" aria-labelledby="\(labelledBy)">\
                    <button type="submit" aria-describedby="\(labelledBy)">Set</button>
                    """
            }
        }
        row += commandForm("set", context, fields: fields, control: control)
        return row + "</div>"
    }

    /// Services a card keeps under "More": what a person looks at now and then, not what they use.
    static let secondaryServices: Set<ServiceType> = ["Battery", "ServiceLabel"]

    /// A service's name for people: one that is only its type's (`MotionSensor`) in words.
    static func serviceHeading(_ service: Service) -> String {
        service.name == service.type.rawValue ? words(service.name) : service.name
    }

    private static func number(_ value: Double) -> String { CharacteristicValue.float(value).plainText }

    /// A form that sends a command (`set`, `run`, `identify`) of this home through the command path.
    static func commandForm(
        _ kind: String, _ context: HomeContext, fields: [(String, String)], control: String
    ) -> String {
        var form = """
            <form method="post" action="/command" class="command" data-async>\(csrfField(context.session))\
            <input type="hidden" name="kind" value="\(kind)">\
            <input type="hidden" name="home" value="\(escaped(context.home.name))">\
            <input type="hidden" name="return" value="\(escaped(context.returnPath))">
            """
        for (name, value) in fields {
            form += "<input type=\"hidden\" name=\"\(name)\" value=\"\(escaped(value))\">"
        }
        return form + control + "</form>"
    }

    /// A form that sends request `operation` through the command path, with fixed fields and at most
    /// one text input or choice.
    static func requestForm(
        _ operation: String, _ context: HomeContext, fields: [(String, String)], input: (String, String)? = nil,
        inputs: [(String, String)] = [], select: (String, [(String, String)])? = nil,
        selects: [(name: String, label: String, options: [(String, String)])] = [], button: String,
        confirm: String? = nil
    ) -> String {
        // `confirm`: a destructive request, asked about first (by the script; without it the form posts).
        let asking = confirm.map { " data-confirm=\"\(escaped($0))\"" } ?? ""
        var form = """
            <form method="post" action="/request" class="request" data-async data-operation="\(operation)"\(asking)>\(csrfField(context.session))\
            <input type="hidden" name="operation" value="\(operation)">\
            <input type="hidden" name="return" value="\(escaped(context.returnPath))">
            """
        for (name, value) in fields {
            form += "<input type=\"hidden\" name=\"\(name)\" value=\"\(escaped(value))\">"
        }
        for (name, label) in (input.map { [$0] } ?? []) + inputs {
            form +=
                "<input name=\"\(name)\" placeholder=\"\(escaped(label))\" aria-label=\"\(escaped(label))\" required>"
        }
        if let (name, options) = select {
            form += "<select name=\"\(name)\">"
            for (value, label) in options {
                form += "<option value=\"\(escaped(value))\">\(escaped(label))</option>"
            }
            form += "</select>"
        }
        for (name, label, options) in selects {
            form += "<select name=\"\(name)\" aria-label=\"\(escaped(label))\">"
            for (value, text) in options {
                form += "<option value=\"\(escaped(value))\">\(escaped(text))</option>"
            }
            form += "</select>"
        }
        return form
            + "<button type=\"submit\"\(confirm != nil ? " class=\"danger\"" : "")>\(escaped(button))</button></form>"
    }

    /// For each button of `accessory`, a form that binds one of its presses to a scene (an
    /// automation); none while the home has no scene.
    static func pressAutomationForms(_ accessory: Accessory, context: HomeContext) -> String {
        let scenes = context.home.actionSets.map { ($0.name, $0.name) }
        guard !scenes.isEmpty else { return "" }
        var html = ""
        for service in accessory.services {
            guard let press = service.characteristic(.programmableSwitchEvent) else { continue }
            let presses = (press.metadata.validValues ?? [0, 1, 2]).compactMap { value in
                CharacteristicType.programmableSwitchEvent.name(of: value).map { (String(value), $0) }
            }
            let button = accessory.services.count > 1 ? " (\(service.name))" : ""
            html += requestForm(
                "addTrigger", context,
                fields: [
                    ("home", context.home.name), ("accessory", accessory.name), ("service", service.name),
                    ("characteristic", CharacteristicType.programmableSwitchEvent.rawValue),
                ],
                inputs: [("name", "Automation name")],
                selects: [("value", "Press\(button)", presses), ("actionSets", "Scene to run", scenes)],
                button: "Run the scene on this press")
        }
        return html
    }

    /// An automation in words: "When Hall Button (Button) reports Single press, run Lamp On."
    static func automationText(_ trigger: Trigger, in home: Home) -> String {
        let event = trigger.characteristic
        let accessory = home.accessory(event.accessory)
        let service = accessory?.service(event.service)
        let source =
            "\(accessory?.name ?? "a removed accessory")\(service.map { accessory?.services.count ?? 0 > 1 ? " (\($0.name))" : "" } ?? "")"
        let change: String
        if let value = trigger.value {
            let text = valueText(value, type: event.characteristic).text
            change =
                event.characteristic.isEvent
                ? "reports \(text)" : "\(words(event.characteristic.rawValue).lowercased()) becomes \(text)"
        } else {
            change = "\(words(event.characteristic.rawValue).lowercased()) changes"
        }
        let scenes = trigger.actionSets.compactMap { home.actionSet($0)?.name }
        return
            "When \(source) \(change), run \(scenes.isEmpty ? "nothing (its scenes were removed)" : scenes.joined(separator: ", then "))."
    }

    /// The administrator's part of a home page: new accessories, rooms, pairing, users.
    static func administration(_ context: HomeContext) -> String {
        let home = context.home
        var html = "<section class=\"admin\"><h2>New accessories</h2>"
        if context.discovered.isEmpty {
            html +=
                "<p class=\"hint\">None found. Let a Zigbee device join, or switch on a HomeKit accessory near the hub.</p>"
        }
        for accessory in context.discovered {
            html += """
                <div class="card discovered"><strong>\(escaped(accessory.name))</strong> \
                <small>\(escaped([accessory.manufacturer, accessory.model].filter { !$0.isEmpty }.joined(separator: " ")))</small>
                """
            let rooms = home.allRooms.map { ($0.isDefault ? "" : $0.name, $0.isDefault ? "Whole home" : $0.name) }
            if accessory.needsPairing {
                // HomeKit: the setup code on the accessory or its box, XXX-XX-XXX.
                html += requestForm(
                    "pairAccessory", context, fields: [("home", home.name), ("id", accessory.id.rawValue)],
                    inputs: [("setupCode", "Setup code XXX-XX-XXX")], select: ("room", rooms),
                    button: "Pair and add to \(home.name)")
            } else {
                html += requestForm(
                    "addAccessory", context, fields: [("home", home.name), ("accessory", accessory.id.rawValue)],
                    select: ("room", rooms), button: "Add to \(home.name)")
            }
            html += "</div>"
        }
        html += "<h3>Pair Zigbee devices</h3>"
        if let until = context.joinOpenUntil {
            html += "<p class=\"countdown\" data-until=\"\(until)\">Joining is open.</p>"
        }
        html += requestForm("permitJoin", context, fields: [("seconds", "120")], button: "Allow joining for 2 minutes")
        html += "</section><section class=\"admin\"><h2>Rooms and zones</h2>"
        html += requestForm(
            "addRoom", context, fields: [("home", home.name)], input: ("name", "Room name"), button: "Add room")
        html += requestForm(
            "addZone", context, fields: [("home", home.name)], input: ("name", "Zone name"), button: "Add zone")
        for zone in home.zones {
            let inZone = home.rooms.filter { zone.rooms.contains($0.id) }
            let outside = home.rooms.filter { !zone.rooms.contains($0.id) }
            html += "<div class=\"card\"><strong>\(escaped(zone.name))</strong>: "
            html += inZone.isEmpty ? "no rooms" : inZone.map { escaped($0.name) }.joined(separator: ", ")
            if !outside.isEmpty {
                html += requestForm(
                    "addRoomToZone", context, fields: [("home", home.name), ("zone", zone.name)],
                    select: ("room", outside.map { ($0.name, $0.name) }), button: "Add room")
            }
            html += requestForm(
                "removeZone", context, fields: [("home", home.name), ("zone", zone.name)], button: "Remove zone",
                confirm: "Remove the zone \(zone.name)?")
            html += "</div>"
        }
        html += "</section><section class=\"admin\"><h2>Automations</h2>"
        if home.triggers.isEmpty {
            html += "<p class=\"hint\">None yet. A button's Edit section runs a scene on a press.</p>"
        } else {
            html += "<ul class=\"automations\">"
            for trigger in home.triggers {
                let fields = [("home", home.name), ("trigger", trigger.name)]
                html +=
                    "<li><strong>\(escaped(trigger.name))</strong>\(trigger.isEnabled ? "" : " <span class=\"badge off\">off</span>"): \(escaped(automationText(trigger, in: home)))"
                html += requestForm(
                    "enableTrigger", context, fields: fields + [("enabled", trigger.isEnabled ? "false" : "true")],
                    button: trigger.isEnabled ? "Turn off" : "Turn on")
                html += requestForm(
                    "removeTrigger", context, fields: fields, button: "Remove",
                    confirm: "Remove the automation \(trigger.name)?")
                html += "</li>"
            }
            html += "</ul>"
        }
        html += "</section><section class=\"admin\"><h2>Users</h2><ul class=\"users\">"
        for user in home.users {
            html += "<li>\(escaped(user.name)) <span class=\"badge\">\(user.role.rawValue)</span>"
            if user.role != .administrator {
                html += requestForm(
                    "removeUser", context, fields: [("home", home.name), ("userId", user.id.rawValue)],
                    button: "Remove", confirm: "Remove \(user.name) from \(home.name)? They can no longer see it.")
            }
            html += "</li>"
        }
        html += "</ul>"
        html += requestForm(
            "addUser", context, fields: [("home", home.name)], inputs: [("account", "Account"), ("name", "Name")],
            button: "Add guest")
        return html + "</section>"
    }

    // MARK: Health

    struct Health {
        var connected: Bool
        var summary: GatewayStatistics.Summary
        var residentBytes: Int?
        var openPages: Int
        var version: String
        var drivers: [DriverReport] = []
    }

    /// A driver's name for people.
    static func driverTitle(_ name: String) -> String {
        switch name {
        case "hap": "HomeKit accessories"
        case "zigbee2mqtt": "Zigbee (zigbee2mqtt)"
        case "virtual": "Simulated devices"
        default: name
        }
    }

    /// One driver in words: what it says of itself, then what it found.
    static func driverSummary(_ report: DriverReport) -> String {
        var parts: [String] = []
        if let condition = report.condition { parts.append(condition.text) }
        let noun = report.accessories == 1 ? "accessory" : "accessories"
        parts.append("\(report.accessories) \(noun), \(report.inHomes) in a home")
        if report.unreachable > 0 { parts.append("\(report.unreachable) unreachable") }
        if report.waitingForPairing > 0 { parts.append("\(report.waitingForPairing) waiting to be paired") }
        return parts.joined(separator: "; ")
    }

    static func health(session: Session, homes: [HomeSummary], health: Health) -> String {
        struct Row {
            let id: String
            let label: String
            let value: String
        }
        struct Driver {
            let id: String
            let title: String
            let summary: String
            let troubled: Bool
        }
        let summary = health.summary
        let seconds = Int(summary.uptime.components.seconds)
        var rows = [
            Row(id: "broker", label: "Broker", value: health.connected ? "connected" : "not connected"),
            Row(
                id: "uptime", label: "Up for",
                value: "\(seconds / 86_400) d \(seconds / 3_600 % 24) h \(seconds / 60 % 60) min"),
            Row(
                id: "memory", label: "Memory (resident)",
                value: health.residentBytes.map { "\($0 / 1_048_576) MiB" } ?? "unknown"),
            Row(id: "commands", label: "Commands in the last minute", value: "\(summary.commandsLastMinute)"),
            Row(id: "failures", label: "Refused or failed in the last minute", value: "\(summary.failuresLastMinute)"),
            Row(id: "succeeded", label: "Commands since start", value: "\(summary.commandsSucceeded)"),
            Row(id: "messages", label: "Messages in / out", value: "\(summary.messagesIn) / \(summary.messagesOut)"),
            Row(id: "reconnects", label: "Broker reconnects", value: "\(summary.brokerReconnects)"),
            Row(id: "pages", label: "Open pages", value: "\(health.openPages)"),
            Row(id: "version", label: "Version", value: health.version),
        ]
        for (code, count) in summary.commandsFailed.sorted(by: { $0.key < $1.key }) {
            rows.append(Row(id: "error-\(code)", label: "Errors: \(code)", value: "\(count)"))
        }
        let drivers = health.drivers.map {
            Driver(
                id: $0.driver, title: driverTitle($0.driver), summary: driverSummary($0),
                troubled: $0.condition?.isHealthy == false || $0.unreachable > 0)
        }
        return render(
            "health", Frame(title: "Health", session: session, homes: homes),
            ["rows": rows, "drivers": drivers, "hasDrivers": !drivers.isEmpty] as [String: Any])
    }

    /// A page that only says what went wrong (not found, refused).
    static func problem(title: String, message: String, session: Session?, homes: [HomeSummary] = []) -> String {
        render("problem", Frame(title: title, session: session, homes: homes), ["message": message])
    }
}
