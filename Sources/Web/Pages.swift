// Swift here decides what each page shows (views of strings, booleans, lists); Resources/templates hold the markup.
import Gateway
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
        ["hap": "HomeKit accessories", "zigbee2mqtt": "Zigbee (zigbee2mqtt)", "virtual": "Simulated devices"][name]
            ?? name
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
