// Swift here decides what each page shows (views of strings, booleans, lists); Resources/templates hold the markup.
import Foundation
import Gateway
import History
import HomeModel

/// The server-rendered pages. Every text from the model, a form or an answer is escaped by the
/// templates (``ScalarHTML``); the pages load only the page's own stylesheet and script (no fonts,
/// scripts or CDNs from elsewhere).
enum Pages {
    /// What the frame of every page shows: the header with the account's homes, health
    /// (administrators) and logout, the notice of the last action, and the live stream to follow.
    struct Frame {
        let title: String
        let session: Session?
        let homes: [(name: String, query: String, role: String, primary: Bool)]
        let administrator: Bool
        let live: String?
        let notice: (kind: String, text: String)?

        init(title: String, session: Session?, homes: [HomeSummary] = [], live: String? = nil, notice: Notice? = nil) {
            self.title = title
            self.session = session
            self.homes = homes.map { ($0.name, queryEncoded($0.name), $0.role.rawValue, $0.isPrimary) }
            administrator = homes.contains { $0.role == .administrator }
            self.live = live
            self.notice = notice.map { ($0.succeeded ? "ok" : "error", noticeText($0)) }
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
        /// The home's HomeKit bridge setup (administrators only; nil when the home is no bridge).
        var homekit: HomeKitPairing?
        /// Whether the gateway keeps history: recorded characteristics link to their history page.
        var historyKept = false
        /// The last day of each recorded characteristic of the home that changed in it
        /// (``HistoryStore/recentLines``), drawn small on its row, and the day it spans.
        var recentLines: [ValueKey: [HistoryPoint]] = [:]
        var recentSpan = (from: Date.distantPast, to: Date.distantPast)
        var returnPath: String { "/home?name=\(queryEncoded(home.name))" }
    }

    /// A hidden field of a form.
    typealias Field = (name: String, value: String)

    /// A choice of a `<select>`.
    struct Option {
        let value, text: String
        var selected = false
    }

    /// A form that sends request `operation` through the command path (request.mustache): fixed
    /// fields, then text inputs and choices (a choice's label, when it has one, is its `aria-label`).
    struct Request {
        let operation: String
        let fields: [Field]
        var inputs: [(name: String, label: String)] = []
        var selects: [(name: String, label: String?, options: [Option])] = []
        let button: String
        /// A destructive request, asked about first (by the script; without it the form posts).
        var confirm: String?
    }

    /// The home page (home.mustache). Its forms, wherever they are, read `csrf`, `homeName` and
    /// `returnPath` from here.
    private struct HomeView {
        let homeName, role, csrf, returnPath, sceneIcon: String
        let scenes: [(name: String, fields: [Field])]
        let roomLinks: Bool
        let rooms: [RoomView]
        let admin: Administration?
        /// The home's timeline page, when the gateway keeps history.
        let timeline: String?
    }

    /// A room: its name, the zones it is in, its cards and an administrator's forms.
    private struct RoomView {
        let index: Int
        let name: String
        let zones: String?
        let cards: [Card]
        let edit: [Request]
    }

    /// The name a room shows: the default room is the whole home.
    private static func roomName(_ room: Room) -> String { room.isDefault ? "Whole home" : room.name }

    static func home(_ context: HomeContext) -> String {
        let home = context.home
        let admin = context.role.mayChangeLayout
        let rooms = home.allRooms.enumerated().filter { _, room in
            !(room.isDefault && home.accessories(in: room.id).allSatisfy { $0.isBridge && $0.services.isEmpty })
        }.map { index, room in
            let zones = home.zones.filter { $0.rooms.contains(room.id) }.map(\.name)
            let fields: [Field] = [("home", home.name), ("room", room.name)]
            return RoomView(
                index: index, name: roomName(room), zones: zones.isEmpty ? nil : zones.joined(separator: ", "),
                cards: home.accessories(in: room.id).filter { !$0.isBridge || !$0.services.isEmpty }.map {
                    card($0, room: room, context: context, admin: admin)
                },
                edit: !admin || room.isDefault
                    ? []
                    : [
                        Request(
                            operation: "renameRoom", fields: fields, inputs: [("name", "New name")], button: "Rename"),
                        Request(
                            operation: "removeRoom", fields: fields, button: "Remove room",
                            confirm: "Remove the room \(room.name)?"),
                    ])
        }
        let view = HomeView(
            homeName: home.name, role: context.role.rawValue, csrf: context.session.csrf,
            returnPath: context.returnPath, sceneIcon: CategoryIcons.svg("scene"),
            scenes: home.actionSets.map { ($0.name, [("actionSet", $0.name)]) }, roomLinks: rooms.count > 1,
            rooms: rooms, admin: admin ? administration(context) : nil,
            timeline: context.historyKept ? "/timeline?home=\(queryEncoded(home.name))" : nil)
        let frame = Frame(
            title: home.name, session: context.session, homes: context.homes,
            live: "/home/live?name=\(queryEncoded(home.name))", notice: context.notice)
        return render("home", frame, view)
    }

    /// An accessory's card (card.mustache).
    struct Card {
        let id, headingID, icon, name: String
        let reachable, batteryLow: Bool
        /// Each service's heading (when the accessory has more than one) and rows: what a person uses,
        /// and what waits under "More".
        let primary, more: [(heading: String?, rows: [Row])]
        /// The Identify form's fields.
        let fields: [Field]
        let edit: [Request]
    }

    static func card(_ accessory: Accessory, room: Room, context: HomeContext, admin: Bool) -> Card {
        var primary: [(heading: String?, rows: [Row])] = []
        var more: [(heading: String?, rows: [Row])] = []
        for service in accessory.services where service.type.rawValue != "AccessoryInformation" {
            // A button's number (ServiceLabelIndex) orders the buttons for Apple Home; here the
            // service's name says which button it is.
            let shown = service.characteristics.filter {
                !$0.metadata.permissions.contains(.hidden) && $0.type != .name && $0.type != .serviceLabelIndex
                    && !$0.metadata.permissions.isDisjoint(with: [.read, .write])
            }
            guard !shown.isEmpty else { continue }
            let part = (
                heading: accessory.services.count > 1 ? serviceHeading(service) : nil,
                rows: shown.map { characteristic in
                    var row = row(
                        characteristic, accessory: accessory, service: service, room: room.name,
                        historyOf: context.historyKept ? context.home.name : nil)
                    let key = ValueKey(
                        accessory: accessory.id, service: service.id, characteristic: characteristic.type)
                    if row.history != nil, let line = context.recentLines[key] {
                        row.sparkline = HistoryChart(
                            kind: .line, from: context.recentSpan.from, to: context.recentSpan.to, width: 96, height: 24
                        ).sparkline(line)
                    }
                    return row
                }
            )
            if Self.secondaryServices.contains(service.type) { more.append(part) } else { primary.append(part) }
        }
        let id = accessory.id.rawValue
        return Card(
            id: id, headingID: elementID("h-", id), icon: CategoryIcons.svg(CategoryIcons.name(for: accessory)),
            name: accessory.name, reachable: accessory.isReachable,
            batteryLow: accessory.services.contains { $0.characteristic(.statusLowBattery)?.value?.intValue == 1 },
            primary: primary, more: more, fields: [("room", room.name), ("accessory", accessory.name)],
            edit: admin ? editForms(accessory, context: context) : [])
    }

    /// An administrator's forms on a card: rename, move, bind a button's presses, remove, unpair.
    static func editForms(_ accessory: Accessory, context: HomeContext) -> [Request] {
        let home = context.home.name
        let fields: [Field] = [("home", home), ("accessory", accessory.name)]
        let rooms = context.home.allRooms.filter { $0.id != accessory.room }
        var forms = [
            Request(operation: "renameAccessory", fields: fields, inputs: [("name", "New name")], button: "Rename")
        ]
        if !rooms.isEmpty {
            let options = rooms.map { Option(value: $0.name, text: roomName($0)) }
            forms.append(
                Request(operation: "assignAccessory", fields: fields, selects: [("room", nil, options)], button: "Move")
            )
        }
        forms += pressAutomationForms(accessory, context: context)
        forms.append(
            Request(
                operation: "removeAccessory", fields: fields, button: "Remove from home",
                confirm: "Remove \(accessory.name) from \(home)?"))
        // A HomeKit pairing is the accessory's, or its bridge's for all the bridge's accessories.
        let bridge = accessory.bridge.flatMap { context.paired.contains($0) ? context.home.accessory($0) : nil }
        if let holder = context.paired.contains(accessory.id) ? accessory : bridge {
            let others = holder.isBridge ? " with every accessory of the bridge" : ""
            forms.append(
                Request(
                    operation: "unpairAccessory", fields: [("home", home), ("accessory", holder.name)],
                    button: holder.id == accessory.id ? "Unpair" : "Unpair its bridge \(holder.name)",
                    confirm:
                        "Unpair \(holder.name)? It leaves \(home)\(others), and pairing it again needs its setup code."
                ))
        }
        return forms
    }

    /// A characteristic's row (characteristic.mustache): its label, its value unless it is write-only,
    /// and, when it is writable, the set form's fields and the one control that writes it.
    struct Row {
        let key, labelID, label, labelledBy: String
        var output: (text: String, unit: String)?
        var fields: [Field] = []
        /// A write-only bool's button: what it does (Stop, Send).
        var action: String?
        var toggle = false, on = false
        var choice: (unknown: Bool, options: [Option])?
        var input: (maxLength: Int, value: String)?
        var range: (min: String, max: String, step: String, value: String, unknown: Bool)?
        var number: String?
        /// The characteristic's history page, when its values are recorded.
        var history: String?
        /// The small SVG line of its last day, when it changed in it.
        var sparkline: String?
    }

    /// `historyOf`: the home's name when the gateway keeps history.
    static func row(
        _ characteristic: Characteristic, accessory: Accessory, service: Service, room: String,
        historyOf home: String? = nil
    ) -> Row {
        let key = characteristicKey(accessory: accessory.id, service: service.id, type: characteristic.type)
        let (type, metadata, value) = (characteristic.type, characteristic.metadata, characteristic.value)
        var row = Row(
            key: key, labelID: elementID("l-", key), label: words(type.rawValue),
            labelledBy: "\(elementID("l-", key)) \(elementID("h-", accessory.id.rawValue))")
        // A write-only characteristic (Hold position) has no value to show: only its action.
        let readable = metadata.permissions.contains(.read)
        if readable {
            row.output = (displayedValue(value, type: type, unit: metadata.unit), unitSuffix(metadata.unit, type: type))
        }
        if let home, HistorySelection.isRecorded(characteristic, in: service) {
            row.history =
                "/history?home=\(queryEncoded(home))&accessory=\(queryEncoded(accessory.name))"
                + "&service=\(queryEncoded(service.name))&characteristic=\(queryEncoded(type.rawValue))"
        }
        guard metadata.permissions.contains(.write) else { return row }
        switch metadata.format {
        case .bool where !readable: row.action = type == .holdPosition ? "Stop" : "Send"
        case .bool: (row.toggle, row.on) = (true, value?.boolValue ?? false)
        case _ where metadata.validValues != nil:
            let options = (metadata.validValues ?? []).map {
                Option(value: "\($0)", text: type.name(of: $0) ?? "\($0)", selected: $0 == value?.intValue)
            }
            row.choice = (value?.intValue == nil, options)
        case .string where metadata.validStrings != nil:
            let options = (metadata.validStrings ?? []).map {
                Option(value: $0, text: $0, selected: $0 == value?.plainText)
            }
            row.choice = (value?.plainText == nil, options)
        case .string:
            row.input = (metadata.maxLength ?? CharacteristicMetadata.defaultMaxStringLength, value?.plainText ?? "")
        case .data, .tlv8:
            return row
        default:
            let current = value?.plainText ?? ""
            if let minimum = metadata.minimumValue, let maximum = metadata.maximumValue {
                let step = metadata.stepValue.map(number) ?? (metadata.format == .float ? "any" : "1")
                row.range = (number(minimum), number(maximum), step, current, value == nil)
            } else {
                row.number = current
            }
        }
        row.fields = [
            ("room", room), ("accessory", accessory.name), ("service", service.name), ("characteristic", type.rawValue),
        ]
        return row
    }

    /// Services a card keeps under "More": what a person looks at now and then, not what they use.
    static let secondaryServices: Set<ServiceType> = ["Battery", "ServiceLabel"]

    /// A service's name for people: one that is only its type's (`MotionSensor`) in words.
    static func serviceHeading(_ service: Service) -> String {
        service.name == service.type.rawValue ? words(service.name) : service.name
    }

    private static func number(_ value: Double) -> String { CharacteristicValue.float(value).plainText }

    /// For each button of `accessory`, a form that binds one of its presses to a scene (an
    /// automation); none while the home has no scene.
    static func pressAutomationForms(_ accessory: Accessory, context: HomeContext) -> [Request] {
        let scenes = context.home.actionSets.map { Option(value: $0.name, text: $0.name) }
        guard !scenes.isEmpty else { return [] }
        return accessory.services.compactMap { service in
            guard let press = service.characteristic(.programmableSwitchEvent) else { return nil }
            let presses = (press.metadata.validValues ?? [0, 1, 2]).compactMap { value in
                CharacteristicType.programmableSwitchEvent.name(of: value).map {
                    Option(value: String(value), text: $0)
                }
            }
            let button = accessory.services.count > 1 ? " (\(service.name))" : ""
            return Request(
                operation: "addTrigger",
                fields: [
                    ("home", context.home.name), ("accessory", accessory.name), ("service", service.name),
                    ("characteristic", CharacteristicType.programmableSwitchEvent.rawValue),
                ],
                inputs: [("name", "Automation name")],
                selects: [("value", "Press\(button)", presses), ("actionSets", "Scene to run", scenes)],
                button: "Run the scene on this press")
        }
    }

    /// An automation in words: "When Hall Button (Button) reports Single press, run Lamp On."
    static func automationText(_ trigger: Trigger, in home: Home) -> String {
        let scenes = trigger.actionSets.compactMap { home.actionSet($0)?.name }
        let run = scenes.isEmpty ? "nothing (its scenes were removed)" : scenes.joined(separator: ", then ")
        guard case .characteristic(let event, let triggerValue) = trigger.event else {
            return "On a schedule, run \(run)."
        }
        let accessory = home.accessory(event.accessory)
        let service = accessory?.service(event.service)
        let source =
            "\(accessory?.name ?? "a removed accessory")\(service.map { accessory?.services.count ?? 0 > 1 ? " (\($0.name))" : "" } ?? "")"
        let change: String
        if let value = triggerValue {
            let text = valueText(value, type: event.characteristic).text
            change =
                event.characteristic.isEvent
                ? "reports \(text)" : "\(words(event.characteristic.rawValue).lowercased()) becomes \(text)"
        } else {
            change = "\(words(event.characteristic.rawValue).lowercased()) changes"
        }
        return "When \(source) \(change), run \(run)."
    }

    /// The administrator's part of a home page (administration.mustache): new accessories, rooms and
    /// zones, automations, users.
    struct Administration {
        let discovered: [(name: String, maker: String, form: Request)]
        let joinOpenUntil: Int?
        let permitJoin, addRoom, addZone, addUser: Request
        let zones: [(name: String, rooms: String, forms: [Request])]
        let triggers: [(name: String, enabled: Bool, text: String, forms: [Request])]
        let users: [(name: String, role: String, forms: [Request])]
        let homekit: HomeKitPairing?
    }

    static func administration(_ context: HomeContext) -> Administration {
        let home = context.home
        let rooms = home.allRooms.map { Option(value: $0.isDefault ? "" : $0.name, text: roomName($0)) }
        let discovered = context.discovered.map { accessory in
            let maker = [accessory.manufacturer, accessory.model].filter { !$0.isEmpty }.joined(separator: " ")
            // HomeKit: the setup code on the accessory or its box, XXX-XX-XXX.
            let form =
                accessory.needsPairing
                ? Request(
                    operation: "pairAccessory", fields: [("home", home.name), ("id", accessory.id.rawValue)],
                    inputs: [("setupCode", "Setup code XXX-XX-XXX")], selects: [("room", nil, rooms)],
                    button: "Pair and add to \(home.name)")
                : Request(
                    operation: "addAccessory", fields: [("home", home.name), ("accessory", accessory.id.rawValue)],
                    selects: [("room", nil, rooms)], button: "Add to \(home.name)")
            return (name: accessory.name, maker: maker, form: form)
        }
        let zones = home.zones.map { zone in
            let fields: [Field] = [("home", home.name), ("zone", zone.name)]
            let inZone = home.rooms.filter { zone.rooms.contains($0.id) }.map(\.name)
            let outside = home.rooms.filter { !zone.rooms.contains($0.id) }.map {
                Option(value: $0.name, text: $0.name)
            }
            let add = Request(
                operation: "addRoomToZone", fields: fields, selects: [("room", nil, outside)], button: "Add room")
            let remove = Request(
                operation: "removeZone", fields: fields, button: "Remove zone", confirm: "Remove the zone \(zone.name)?"
            )
            let rooms = inZone.isEmpty ? "no rooms" : inZone.joined(separator: ", ")
            return (name: zone.name, rooms: rooms, forms: (outside.isEmpty ? [] : [add]) + [remove])
        }
        let triggers = home.triggers.map { trigger in
            let fields: [Field] = [("home", home.name), ("trigger", trigger.name)]
            let forms = [
                Request(
                    operation: "enableTrigger", fields: fields + [("enabled", trigger.isEnabled ? "false" : "true")],
                    button: trigger.isEnabled ? "Turn off" : "Turn on"),
                Request(
                    operation: "removeTrigger", fields: fields, button: "Remove",
                    confirm: "Remove the automation \(trigger.name)?"),
            ]
            return (
                name: trigger.name, enabled: trigger.isEnabled, text: automationText(trigger, in: home), forms: forms
            )
        }
        let users = home.users.map { user in
            let remove = Request(
                operation: "removeUser", fields: [("home", home.name), ("userId", user.id.rawValue)], button: "Remove",
                confirm: "Remove \(user.name) from \(home.name)? They can no longer see it.")
            return (name: user.name, role: user.role.rawValue, forms: user.role == .administrator ? [] : [remove])
        }
        return Administration(
            discovered: discovered, joinOpenUntil: context.joinOpenUntil,
            permitJoin: Request(
                operation: "permitJoin", fields: [("seconds", "120")], button: "Allow joining for 2 minutes"),
            addRoom: Request(
                operation: "addRoom", fields: [("home", home.name)], inputs: [("name", "Room name")], button: "Add room"
            ),
            addZone: Request(
                operation: "addZone", fields: [("home", home.name)], inputs: [("name", "Zone name")], button: "Add zone"
            ),
            addUser: Request(
                operation: "addUser", fields: [("home", home.name)],
                inputs: [("account", "Account"), ("name", "Name")],
                button: "Add guest"),
            zones: zones, triggers: triggers, users: users, homekit: context.homekit)
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
        let summary = health.summary
        let seconds = Int(summary.uptime.components.seconds)
        var rows: [(id: String, label: String, value: String)] = [
            ("broker", "Broker", health.connected ? "connected" : "not connected"),
            ("uptime", "Up for", "\(seconds / 86_400) d \(seconds / 3_600 % 24) h \(seconds / 60 % 60) min"),
            ("memory", "Memory (resident)", health.residentBytes.map { "\($0 / 1_048_576) MiB" } ?? "unknown"),
            ("commands", "Commands in the last minute", "\(summary.commandsLastMinute)"),
            ("failures", "Refused or failed in the last minute", "\(summary.failuresLastMinute)"),
            ("succeeded", "Commands since start", "\(summary.commandsSucceeded)"),
            ("messages", "Messages in / out", "\(summary.messagesIn) / \(summary.messagesOut)"),
            ("reconnects", "Broker reconnects", "\(summary.brokerReconnects)"),
            ("pages", "Open pages", "\(health.openPages)"),
            ("version", "Version", health.version),
        ]
        for (code, count) in summary.commandsFailed.sorted(by: { $0.key < $1.key }) {
            rows.append(("error-\(code)", "Errors: \(code)", "\(count)"))
        }
        let drivers: [(id: String, title: String, summary: String, troubled: Bool)] = health.drivers.map {
            (
                $0.driver, driverTitle($0.driver), driverSummary($0),
                $0.condition?.isHealthy == false || $0.unreachable > 0
            )
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
