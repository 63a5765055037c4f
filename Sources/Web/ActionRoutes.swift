import Foundation
import Gateway
import HomeModel
import Hummingbird
import JSON
import Logging
import Synchronization

/// What a session does: commands of a home and requests, each as the session's account through the
/// gateway's command path (``CommandRouter/perform(_:)``: the account's rate, then the model's checks).
struct ActionRoutes {
    let site: WebSite

    var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.post("/command") { request, context in try await act(request, context: context, command) }
        routes.post("/request") { request, context in try await act(request, context: context, operation) }
        routes.post("/automation") { request, context in
            try await act(request, context: context) { (form: AutomationForm, session) in
                await perform(session, form.request)
            }
        }
        return routes
    }

    /// A command of a home (`set`, `run`, `identify`) from the form's fields.
    private func command(_ form: CommandForm, _ session: Session) async -> Notice {
        let path = AccessoryPath(home: form.home ?? "", room: form.room ?? "", accessory: form.accessory ?? "")
        let action: Command.Action
        switch form.kind {
        case "set":
            let characteristic = CharacteristicPath(
                path, service: form.service ?? "", characteristic: form.characteristic ?? "")
            action = .write(characteristic, value: Array((form.value ?? "").utf8))
        case "run":
            action = .runActionSet(home: path.home, actionSet: form.actionSet ?? "")
        case "identify":
            action = .identify(path)
        default:
            return Notice(succeeded: false, text: "Unknown command.", code: HomeError.Code.invalidParameter.name)
        }
        return await perform(Command(account: session.account, action))
    }

    /// A request (the operations of `B/$request/<account>/<operation>`) from the form's fields.
    private func operation(_ form: RequestForm, _ session: Session) async -> Notice {
        var members: [(key: String, value: JSON)] = []
        for (name, value) in form.members.sorted(by: { $0.key < $1.key }) {
            if name == "room" && value.isEmpty { continue }
            if name == "seconds" || name == "value", let number = Int(value) {
                members.append((name, .integer(number)))
            } else if name == "enabled" {
                members.append((name, .bool(value == "true")))
            } else if name == "actionSets" {
                members.append((name, .array([.string(value)])))
            } else {
                members.append((name, .string(value)))
            }
        }
        let notice = await perform(session) { () throws(HomeError) in
            try Command.Request(operation: form.operation ?? "", body: .object(members))
        }
        if notice.succeeded, let seconds = Int(form.members["seconds"] ?? ""), form.operation == "permitJoin" {
            site.joinOpenUntil.withLock { $0 = Int(Date().timeIntervalSince1970) + seconds }
        }
        return notice
    }

    /// Reads a request with `read` and runs it as the session's account; a request that cannot be
    /// read is answered as the router would answer it, with its code.
    private func perform(_ session: Session, _ read: () throws(HomeError) -> Command.Request) async -> Notice {
        let operation: Command.Request
        do throws(HomeError) {
            operation = try read()
        } catch {
            site.statistics.handled(.failed(code: error.code.name))
            return Notice(succeeded: false, text: error.message, code: error.code.name)
        }
        return await perform(Command(account: session.account, .request(operation)))
    }

    /// Checks the session and the form's CSRF token, runs `perform`, and answers: JSON for the
    /// page's script, else a redirect back with the notice kept for the next page.
    private func act<Form: SessionForm>(
        _ request: Request, context: WebRequestContext, _ perform: (Form, Session) async -> Notice
    ) async throws -> Response {
        let wantsJSON = request.headers[.accept]?.contains("application/json") ?? false
        guard let session = site.session(of: request) else {
            return wantsJSON
                ? .json(Notice(succeeded: false, text: "Log in again.", code: "sessionExpired"), status: .unauthorized)
                : .seeOther("/login")
        }
        let form = try await request.form(Form.self)
        guard let sent = form.csrf, sameSecret(session.csrf, sent), site.proxy.sameOrigin(request, context: context)
        else {
            site.logger.warning(
                "web: refused a form without this session's token", metadata: ["account": "\(session.account)"])
            let refusal = "That form was not this page's own; nothing was done."
            return wantsJSON
                ? .json(Notice(succeeded: false, text: refusal, code: "forbidden"), status: .forbidden)
                : .problem("Refused", refusal, session: session, status: .forbidden)
        }
        let notice = await perform(form, session)
        if wantsJSON { return .json(notice) }
        site.sessions.leave(notice, for: session.token)
        return .seeOther(WebSite.safeReturn(form.return))
    }

    /// Runs a command through the gateway's command path and says in words what became of it.
    private func perform(_ command: Command) async -> Notice {
        do throws(HomeError) {
            _ = try await site.commands.perform(command)
            site.statistics.handled(.succeeded)
            return Notice(succeeded: true, text: Self.doneText(command.action), code: nil)
        } catch {
            site.statistics.handled(.failed(code: error.code.name))
            return Notice(succeeded: false, text: error.message, code: error.code.name)
        }
    }

    static func doneText(_ action: Command.Action) -> String {
        guard case .request(let request) = action else { return "Done." }
        switch request {
        case .edit(.addAccessory): return "The accessory was added."
        case .edit(.removeAccessory): return "The accessory was removed from the home."
        case .edit(.renameAccessory), .edit(.renameRoom), .edit(.renameZone): return "Renamed."
        case .edit(.assignAccessory): return "The accessory was moved."
        case .edit(.addRoom): return "The room was added."
        case .edit(.removeRoom): return "The room was removed."
        case .edit(.addZone): return "The zone was added."
        case .edit(.removeZone): return "The zone was removed."
        case .edit(.addRoomToZone): return "The room was added to the zone."
        case .edit(.addUser): return "The guest was added."
        case .edit(.removeUser), .edit(.removeMember): return "The user was removed."
        case .addTrigger(_, _, _, _, _, _, false), .edit(.addScheduleTrigger), .edit(.addRangeTrigger):
            return "The automation was added."
        case .edit(.enableTrigger(_, _, let enabled)):
            return enabled ? "The automation is on." : "The automation is off."
        case .edit(.removeTrigger): return "The automation was removed."
        case .permitJoin: return "Joining is open."
        case .pairAccessory: return "Paired, and added to the home."
        case .unpairAccessory: return "The pairing was removed, and the accessory with it."
        default: return "Done."
        }
    }
}
