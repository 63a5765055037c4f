import Foundation
import History
import HomeModel
import JSON

/// One thing an account asks of the gateway, however it arrived: read from an MQTT topic and payload
/// (``CommandRouter/handle(_:)``) or built from the web page's form. ``CommandRouter/execute(_:)``
/// runs it against the home model, which checks the account's rights and finds every object by
/// name; the ``CommandResult`` is serialized for MQTT and put in words for the page.
package struct Command: Sendable, Equatable {
    /// Whose command it is: the model checks this account's role in the home.
    package var account: String
    package var action: Action

    package enum Action: Sendable, Equatable {
        /// One characteristic's new value, as text read by the characteristic's format (`true`, `1`,
        /// `21.5`, `"text"` or bare text): the payload of `…/<characteristic>/set`.
        case write(CharacteristicPath, value: [UInt8])
        /// Several characteristics of one accessory in one write, `{"<service>":{"<characteristic>":value}}`.
        case writeAccessory(AccessoryPath, values: JSON)
        /// Home Assistant's JSON light command for one lightbulb service.
        case homeAssistantLight(AccessoryPath, service: String, command: JSON)
        case identify(AccessoryPath)
        case runActionSet(home: String, actionSet: String)
        case request(Request)
    }

    package init(account: String, _ action: Action) {
        self.account = account
        self.action = action
    }

    /// The home the command names, if any: a non-member's command is answered as if there were no
    /// such home.
    var home: String? {
        switch action {
        case .write(let path, _): path.accessory.home
        case .writeAccessory(let path, _), .homeAssistantLight(let path, _, _), .identify(let path): path.home
        case .runActionSet(let home, _): home
        case .request(let request): request.home
        }
    }
}

/// What a command achieved, for the answer: MQTT puts it in the answer's `data`
/// (``CommandRouter/data(_:)``), the page in words.
package enum CommandResult: Sendable, Equatable {
    /// Done, with nothing to report.
    case done
    /// Something was added, under the name the model gave it (names are normalized).
    case added(name: String)
    /// The homes the account is a member of.
    case homes([HomeSummary])
    /// Values read fresh from an accessory.
    case values([CharacteristicRead])
    /// The networks that now accept new devices, with how long for.
    case joinPermits([JoinPermit])
    /// The controllers paired with an accessory.
    case pairings([ControllerPairing])
    /// An action set ran; each action's outcome, named as the home names it.
    case actions([ActionOutcome])
    /// A characteristic's recorded values, as points or hourly aggregates.
    case history(HistoryAnswer)
    /// A home's events, oldest first.
    case timeline([TimelineEvent])
}

/// One action of an action set that ran: its error if it failed, and how the answers list it.
package struct ActionOutcome: Sendable, Equatable {
    package var error: HomeError?
    /// As `runActionSet`'s answer and `didFireTrigger` list it: the characteristic named as its home
    /// names it (an object it no longer has, by its id), the value it wrote, `ok`, and the error's
    /// code and message when it failed.
    let json: JSON

    package init(_ result: ActionResult, in home: Home) {
        let action = result.action
        error = result.error
        var members =
            Rendering.names(action.accessory, action.service, action.characteristic, in: home) + [
                ("value", Rendering.value(action.value)), ("ok", .bool(error == nil)),
            ]
        if let error { members += [("code", .string(error.code.name)), ("message", .string(error.message))] }
        json = .object(members)
    }
}
