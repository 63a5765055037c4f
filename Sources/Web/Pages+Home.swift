import Foundation
import Gateway
import History
import HomeModel

/// The home page: its scenes, rooms, cards and their rows.
extension Pages {
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
        /// When each schedule automation of the home last came due (``ScheduleState``).
        var lastFirings: [TriggerID: Date] = [:]
        /// When each automation last ran, from the history's timeline (when kept).
        var lastRuns = AutomationFirings()
        var returnPath: String { "/home?name=\(queryEncoded(home.name))" }
    }

    /// The home page (home.mustache). Its forms, wherever they are, read `csrf`, `homeName` and
    /// `returnPath` from here.
    private struct HomeView {
        let homeName, role, csrf, returnPath, sceneIcon: String
        let scenes: [(name: String, fields: [Field])]
        let roomLinks: Bool
        let rooms: [RoomView]
        let automations: Automations
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
    static func roomName(_ room: Room) -> String { room.isDefault ? "Whole home" : room.name }

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
            rooms: rooms, automations: automations(context), admin: admin ? administration(context) : nil,
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
            let ((text, takesUnit), unit) = (valueText(value, type: type), unitSuffix(metadata.unit, type: type))
            row.output = (takesUnit ? text + unit : text, unit)
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

    /// A number in words (a bound, a step): whole numbers without a fraction.
    static func number(_ value: Double) -> String { CharacteristicValue.float(value).plainText }
}
