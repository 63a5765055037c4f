import Foundation
import Gateway
import HTTPTypes
import HomeModel
import Hummingbird
import JSON

/// The login form (`POST /login`): the login page's token and the account's credentials.
struct LoginForm: Decodable {
    var csrf: String?
    var account: String?
    var password: String?
}

/// A form posted within a session: its CSRF token, and the page to return to.
protocol SessionForm: Decodable {
    var csrf: String? { get }
    var `return`: String? { get }
}

/// The logout button's form.
struct LogoutForm: SessionForm {
    var csrf: String?
    var `return`: String?
}

/// A command of a home (`POST /command`): `set` a characteristic, `run` a scene, `identify` an accessory.
struct CommandForm: SessionForm {
    var csrf: String?
    var `return`: String?
    var kind: String?
    var home: String?
    var room: String?
    var accessory: String?
    var service: String?
    var characteristic: String?
    var value: String?
    var actionSet: String?
}

/// A request (`POST /request`): the operation, and its body's members as the form's other fields.
struct RequestForm: SessionForm {
    var csrf: String?
    var `return`: String?
    var operation: String?
    /// Every field but `csrf`, `operation` and `return`.
    var members: [String: String]

    init(from decoder: any Decoder) throws {
        let fields = try [String: String](from: decoder)
        (csrf, `return`, operation) = (fields["csrf"], fields["return"], fields["operation"])
        members = fields.filter { !["csrf", "return", "operation"].contains($0.key) }
    }
}

/// Why a POST's body was not read as its form: thrown out of the route, and answered with a page that
/// says so (by ``SecurityHeaders``, as Hummingbird's own errors are).
enum FormProblem: HTTPResponseError {
    /// Larger than the page's forms can be (``WebSite/maximumBody``).
    case tooLarge
    /// Not an urlencoded form of the fields expected: a name twice, an escape that is not one (no
    /// page of ours sends either).
    case unreadable

    var status: HTTPResponse.Status { self == .tooLarge ? .contentTooLarge : .badRequest }

    func response(from request: Request, context: some RequestContext) -> Response {
        switch self {
        case .tooLarge: .problem("Too large", "The form is too large.", status: status)
        case .unreadable: .problem("Not a form", "The form could not be read.", status: status)
        }
    }
}

extension Request {
    /// The urlencoded body of a POST, decoded by Hummingbird's `URLEncodedFormDecoder`.
    func form<Form: Decodable>(_ type: Form.Type) async throws(FormProblem) -> Form {
        var request = self
        guard let buffer = try? await request.collectBody(upTo: WebSite.maximumBody) else { throw .tooLarge }
        do {
            return try URLEncodedFormDecoder().decode(type, from: String(buffer: buffer))
        } catch {
            throw .unreadable
        }
    }
}

/// An automation in one of the page's shapes (`POST /automation`, docs/web.md): `shape` is `time`,
/// `sun`, `reports` (a characteristic takes a value) or `range` (a value goes above or below); the
/// scenes, weekdays and the "only between" window as the page's fields. ``request()`` turns it into
/// the JSON body `addTrigger` takes over MQTT and reads it with the same parser, so each mistake is
/// the error MQTT would answer.
struct AutomationForm: SessionForm {
    var csrf: String?
    var `return`: String?
    var home: String?
    var shape: String?
    var name: String?
    /// `time`: "22:30".
    var time: String?
    /// `sun`: "sunrise" or "sunset", and `offsetMinutes` `before` or `after` it.
    var sun: String?
    var offsetMinutes: String?
    var offsetDirection: String?
    /// `time` and `sun`: the checked days, "mon" … "sun".
    var weekdays: [String]?
    /// `reports` and `range`: the characteristic, `["<accessory>","<service>","<characteristic>"]`,
    /// `"bool"` fourth for a bool.
    var characteristic: String?
    /// `reports`: the value it waits for (words or a number); empty for any change.
    var value: String?
    /// `range`: its bounds, either left empty.
    var min: String?
    var max: String?
    var actionSets: [String]?
    /// "Only between": both a time ("22:30") or a sun point ("sunset-30"), or both empty.
    var from: String?
    var to: String?
    var turnBackMinutes: String?

    /// The `addTrigger` this form stands for.
    func request() throws(HomeError) -> Command.Request {
        var body: [(key: String, value: JSON)] = [
            ("home", .string(home ?? "")), ("name", .string(name ?? "")),
            ("actionSets", .array((actionSets ?? []).map(JSON.string))),
        ]
        switch shape {
        case "time":
            // Left empty, it is the schedule's mistake (invalidSchedule), not a characteristic's.
            body.append(("time", .string(Self.filled(time) ?? "")))
            body.append(("weekdays", .array((weekdays ?? []).map(JSON.string))))
        case "sun":
            body.append(("sun", .string(sun ?? "")))
            if let minutes = Self.filled(offsetMinutes) {
                guard let count = Int(minutes) else {
                    throw HomeError(.invalidParameter, "The minutes before or after are a whole number.")
                }
                body.append(("offset", .integer(offsetDirection == "before" ? -count : count)))
            }
            body.append(("weekdays", .array((weekdays ?? []).map(JSON.string))))
        case "reports", "range":
            guard let text = Self.filled(characteristic),
                let items = (try? JSON.parse(text))?.arrayValue, case let path = items.compactMap(\.stringValue),
                path.count == items.count, path.count == 3 || path.count == 4
            else { throw HomeError(.missingParameter, "Choose the accessory's value the automation follows.") }
            body += [
                ("accessory", .string(path[0])), ("service", .string(path[1])), ("characteristic", .string(path[2])),
            ]
            if shape == "range" {
                body.append(("range", .object([("min", min), ("max", max)].compactMap(Self.bound))))
            } else if let value = Self.filled(value) {
                body.append(("value", Self.written(value, isBool: path.count == 4 && path[3] == "bool")))
            }
        default:
            throw HomeError(
                .invalidParameter,
                "An automation from the page is at a time, at sunrise or sunset, on a report or on a range.")
        }
        switch (Self.filled(from), Self.filled(to)) {
        case (nil, nil): break
        case (let from?, let to?):
            body.append(("conditions", .array([.object([("from", .string(from)), ("to", .string(to))])])))
        default: throw HomeError(.invalidCondition, "\"Only between\" needs both of its times, or neither.")
        }
        if let minutes = Self.filled(turnBackMinutes) {
            guard let count = Double(minutes), count.isFinite else {
                throw HomeError(.invalidParameter, "\"Turn back after\" is a number of minutes.")
            }
            let seconds = count * 60
            body.append(("turnBackAfter", seconds == seconds.rounded() ? .integer(Int(seconds)) : .number(seconds)))
        }
        return try Command.Request(operation: "addTrigger", body: .object(body))
    }

    /// The text of a field, nil when left empty.
    private static func filled(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }

    /// A range's bound: a number, or the text as sent (for the parser to refuse).
    private static func bound(_ field: (key: String, text: String?)) -> (key: String, value: JSON)? {
        guard let text = filled(field.text) else { return nil }
        return (field.key, Double(text).map(JSON.number) ?? .string(text))
    }

    /// A value as typed: for a bool, on or off as `/set` reads them; else a whole number, a number,
    /// or words ("single", "heat").
    private static func written(_ text: String, isBool: Bool) -> JSON {
        if isBool,
            let on = ["on": true, "true": true, "1": true, "off": false, "false": false, "0": false][
                text.lowercased()]
        {
            return .bool(on)
        }
        if let number = Int(text) { return .integer(number) }
        if let number = Double(text) { return .number(number) }
        return .string(text)
    }
}
