import Foundation
import History
import HomeModel
import JSON

extension CommandRouter {
    /// Runs `command` as its account: the model checks the account's role and finds every object by
    /// name. A non-member's command about a home learns no more than that there is no such home for
    /// it, in the words used for a home that does not exist.
    nonisolated(nonsending) package func execute(_ command: Command) async throws(HomeError) -> CommandResult {
        do throws(HomeError) {
            return try await run(command.action, account: command.account)
        } catch {
            if error.code == .insufficientPrivileges, let home = command.home,
                await !manager.homes(for: command.account).contains(where: { HomeName.matches($0.name, home) })
            {
                throw HomeError(.notFound, "There is no home named '\(home)'.")
            }
            throw error
        }
    }

    /// Runs `command` within its account's rate (`tooManyRequests` beyond it), then as
    /// ``execute(_:)``: for adapters other than MQTT, whose ``handle(_:)`` counts every message.
    nonisolated(nonsending) package func perform(_ command: Command) async throws(HomeError) -> CommandResult {
        if let rateLimiter, !rateLimiter.admit(command.account) {
            throw RateLimiter.refusal(command.account, rateLimiter)
        }
        return try await execute(command)
    }

    nonisolated(nonsending) private func run(_ action: Command.Action, account: String) async throws(HomeError)
        -> CommandResult
    {
        switch action {
        case .write(let path, let value):
            try await manager.writeValue(at: path, account: account) { characteristic throws(HomeError) in
                try ValueDecoding.value(fromPayload: value, for: characteristic.metadata, type: characteristic.type)
            }
        case .writeAccessory(let path, let values):
            let (home, accessory) = try await locate(path, account: account)
            try await manager.writeValues(try Self.writes(values, to: accessory), home: home, account: account)
        case .homeAssistantLight(let path, let serviceName, let lightCommand):
            let (home, accessory) = try await locate(path, account: account)
            let service = try accessory.service(named: serviceName)
            guard service.type == .lightbulb else {
                throw HomeError(
                    .invalidParameter,
                    "$ha/set takes Home Assistant's light commands; '\(service.name)' is a \(service.type.rawValue), set its characteristics instead."
                )
            }
            let writes = try HomeAssistantLightCommand.writes(lightCommand, to: service, of: accessory)
            try await manager.writeValues(writes, home: home, account: account)
        case .identify(let path):
            let (home, accessory) = try await locate(path, account: account)
            try await manager.identify(accessory: accessory.name, home: home, account: account)
        case .runActionSet(let homeName, let actionSet):
            let home = try await manager.home(homeName, account: account)
            let results = try await manager.executeActionSet(actionSet, home: home.name, account: account)
            let outcomes = results.map { ActionOutcome($0, in: home) }
            let failures = outcomes.compactMap(\.error)
            if let first = failures.first {
                throw HomeError(
                    first.code,
                    "\(failures.count) of \(outcomes.count) actions failed; first: \(first.message) Results: \(Self.data(.actions(outcomes))?.serialized ?? "")"
                )
            }
            return .actions(outcomes)
        case .request(let request):
            return try await run(request, account: account)
        }
        return .done
    }

    nonisolated(nonsending) private func run(_ request: Command.Request, account: String) async throws(HomeError)
        -> CommandResult
    {
        switch request {
        case .homes:
            return .homes(await manager.homes(for: account))
        case .edit(let edit):
            if let name = try await manager.edit(edit, account: account) { return .added(name: name) }
        case .addActionSet(let homeName, let name, let actions):
            let home = try await manager.home(homeName, account: account)
            // Each action's value is read by its characteristic's format.
            let requests = try actions.map { action throws(HomeError) in
                try Self.actionRequest(
                    try home.accessory(named: action.accessory), action.service, action.characteristic, action.value)
            }
            let edit = HomeEdit.addActionSet(home: home.name, name: name, actions: requests)
            return .added(name: try await manager.edit(edit, account: account) ?? name)
        case .addTrigger(let homeName, let name, let event, let actionSets, let options, let conditions, let updating):
            let home = try await manager.home(homeName, account: account)
            let definition = try Self.characteristicTrigger(
                event, in: home, name: name, actionSets: actionSets, options: options, conditions: conditions)
            guard updating else { return .added(name: try await manager.edit(definition, account: account) ?? name) }
            _ = try await manager.edit(
                .updateTrigger(home: home.name, trigger: name, definition: definition), account: account)
        case .read(let home, let accessory, let service, let characteristic, let bridged):
            return .values(
                try await manager.readValues(
                    accessory: accessory, service: service,
                    characteristic: characteristic.map { CharacteristicType(rawValue: $0) }, bridged: bridged,
                    home: home, account: account))
        case .permitJoin(let seconds):
            return .joinPermits(try await manager.permitJoin(seconds: seconds, account: account))
        case .pairAccessory(let home, let id, let setupCode, let room, let name):
            return .added(
                name: try await manager.pairAccessory(
                    id, setupCode: setupCode, home: home, room: room, name: name, account: account))
        case .unpairAccessory(let home, let accessory):
            try await manager.unpairAccessory(accessory, home: home, account: account)
        case .listPairings(let home, let accessory):
            return .pairings(try await manager.pairings(ofAccessory: accessory, home: home, account: account))
        case .addPairing(let home, let accessory, let controller, let publicKey, let admin):
            try await manager.addPairing(
                ControllerPairing(identifier: controller, isAdministrator: admin, isThisGateway: false),
                publicKey: publicKey, toAccessory: accessory, home: home, account: account)
        case .removePairing(let home, let accessory, let controller):
            try await manager.removePairing(
                controller: controller, fromAccessory: accessory, home: home, account: account)
        case .history(let query):
            return .history(try await history(query, account: account))
        case .timeline(let homeName, let from, let to):
            let home = try await manager.home(homeName, account: account)
            let store = try historyStore()
            do throws(HistoryError) {
                return .timeline(try await store.timeline(home: home.id, from: from, to: to))
            } catch {
                throw HomeError(error)
            }
        }
        return .done
    }

    /// A characteristic's history, for a member of its home: the names are found in the home
    /// before the store is asked, so a stranger learns nothing and a misspelt name is `notFound`.
    nonisolated(nonsending) private func history(_ query: Command.Request.HistoryQuery, account: String)
        async throws(HomeError) -> HistoryAnswer
    {
        let home = try await manager.home(query.home, account: account)
        let accessory = try home.accessory(named: query.accessory)
        let (service, characteristic) = try accessory.characteristic(
            named: query.characteristic, service: query.service)
        let store = try historyStore()
        do throws(HistoryError) {
            return try await store.points(
                accessory: accessory.id, service: service.id, characteristic: characteristic.type, from: query.from,
                to: query.to, resolution: query.resolution)
        } catch {
            throw HomeError(error)
        }
    }

    private func historyStore() throws(HomeError) -> HistoryStore {
        guard let history else {
            throw HomeError(.historyUnavailable, "History is off on this hub (history.enabled: false).")
        }
        return history
    }

    /// Finds the accessory a path names, in the room it names. Returns the home's name rather than
    /// the home: a command holding the home while it waits for the write would make the model copy
    /// the home's accessories to commit it.
    nonisolated(nonsending) private func locate(_ path: AccessoryPath, account: String) async throws(HomeError) -> (
        String, Accessory
    ) {
        let home = try await manager.home(path.home, account: account)
        return (home.name, try home.accessory(at: path))
    }

    /// The writes of a `$set` payload, `{"<service>":{"<characteristic>":value}}`.
    private static func writes(_ values: JSON, to accessory: Accessory) throws(HomeError) -> [ActionRequest] {
        guard case .object(let services) = values else {
            throw HomeError(.invalidParameter, "$set takes a JSON object {\"<service>\":{\"<characteristic>\":value}}.")
        }
        var requests: [ActionRequest] = []
        for (serviceName, values) in services {
            _ = try accessory.service(named: serviceName)
            guard case .object(let characteristics) = values else {
                throw HomeError(
                    .invalidParameter, "The value of \"\(serviceName)\" must be an object of characteristics.")
            }
            for (name, json) in characteristics {
                requests.append(try actionRequest(accessory, serviceName, name, json))
            }
        }
        guard !requests.isEmpty else { throw HomeError(.missingParameter, "$set names no characteristic to set.") }
        return requests
    }

    private static func actionRequest(
        _ accessory: Accessory, _ serviceName: String, _ characteristicName: String, _ value: JSON
    ) throws(HomeError) -> ActionRequest {
        let (target, characteristic) = try reference(accessory, serviceName, characteristicName)
        return ActionRequest(
            target, try ValueDecoding.value(fromJSON: value, for: characteristic.metadata, type: characteristic.type))
    }

    /// A characteristic named by a request, as a reference and as the accessory has it.
    private static func reference(
        _ accessory: Accessory, _ serviceName: String, _ characteristicName: String
    ) throws(HomeError) -> (CharacteristicReference, Characteristic) {
        let (service, characteristic) = try accessory.characteristic(named: characteristicName, service: serviceName)
        return (
            CharacteristicReference(
                accessory: accessory.name, service: service.name, characteristic: characteristic.type),
            characteristic
        )
    }

    /// A characteristic event's automation as the model takes it: its value read by the
    /// characteristic's format, words included.
    private static func characteristicTrigger(
        _ event: Command.Request.Event, in home: Home, name: String, actionSets: [String], options: TriggerOptions,
        conditions: [ConditionRequest]
    ) throws(HomeError) -> HomeEdit {
        let (target, characteristic) = try reference(
            try home.accessory(named: event.accessory), event.service, event.characteristic)
        return .addTrigger(
            home: home.name, name: name, characteristic: target,
            value: try event.value.map { value throws(HomeError) in
                try ValueDecoding.value(fromJSON: value, for: characteristic.metadata, type: characteristic.type)
            },
            actionSets: actionSets, options: options, conditions: conditions)
    }

    // MARK: Answers' data

    /// A result as the `data` of an MQTT answer (docs/mqtt.md, "Answers"); nil when there is none.
    package static func data(_ result: CommandResult) -> JSON? {
        switch result {
        case .done:
            return nil
        case .added(let name):
            return .object([("name", .string(name))])
        case .homes(let homes):
            return .array(
                homes.map {
                    .object([
                        ("name", .string($0.name)), ("primary", .bool($0.isPrimary)),
                        ("role", .string($0.role.rawValue)),
                    ])
                })
        case .values(let reads):
            return .array(
                reads.map {
                    .object([
                        ("accessory", .string($0.accessoryName)), ("service", .string($0.serviceName)),
                        ("characteristic", .string($0.characteristic.rawValue)), ("value", Rendering.value($0.value)),
                    ])
                })
        case .joinPermits(let permits):
            return .array(
                permits.map { .object([("network", .string($0.network)), ("seconds", .integer($0.seconds))]) })
        case .pairings(let pairings):
            return .array(
                pairings.map {
                    .object([
                        ("controller", .string($0.identifier)), ("admin", .bool($0.isAdministrator)),
                        ("thisGateway", .bool($0.isThisGateway)),
                    ])
                })
        case .actions(let outcomes):
            return .array(outcomes.map(\.json))
        case .history(.points(let points)):
            return .object([
                ("resolution", .string(HistoryResolution.raw.rawValue)),
                ("points", .array(points.map { .object([("time", time($0.time)), ("value", .number($0.value))]) })),
            ])
        case .history(.hourly(let hours)):
            return .object([
                ("resolution", .string(HistoryResolution.hour.rawValue)),
                (
                    "hours",
                    .array(
                        hours.map {
                            .object([
                                ("hour", time($0.hour)), ("min", .number($0.minimum)), ("mean", .number($0.mean)),
                                ("max", .number($0.maximum)), ("count", .integer($0.count)),
                            ])
                        })
                ),
            ])
        case .timeline(let events):
            return .array(
                events.map {
                    .object([
                        ("time", time($0.time)), ("kind", .string($0.kind.rawValue)), ("subject", .string($0.subject)),
                        ("detail", .string($0.detail)),
                    ])
                })
        }
    }

    private static func time(_ date: Date) -> JSON { .string(WireTime.text(date)) }
}

extension HomeError {
    /// A history query's refusal as the wire's code, with its message.
    package init(_ error: HistoryError) {
        let code: Code =
            switch error.code {
            case .reversedSpan: .reversedSpan
            case .spanBeyondRetention: .spanBeyondRetention
            case .unknownCharacteristic: .unknownCharacteristic
            case .tooManyPoints: .tooManyPoints
            case .unavailable: .historyUnavailable
            }
        self.init(code, error.message)
    }
}
