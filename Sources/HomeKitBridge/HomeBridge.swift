import Execution
import HAPModel
import HAPProtocol
import HomeModel
import JSON
import Logging
import MQTT
import NIOHTTP1

/// One home served as a HomeKit bridge: the accessory side of HAP over the home model. It answers
/// each connection's requests (pairing, the accessory database, reads, writes, subscriptions,
/// `/pairings`) and tells subscribed controllers of every value change the home makes. Every write
/// is a command of the bridge's account, checked by the home manager like any other; reads are
/// answered at once from the values the bridge follows.
///
/// Where it runs: on the loop that serves its connections' sockets (``BridgeListener``), the
/// gateway's loop, which the home manager runs on too: a request is read, handled and answered, and
/// a change told to subscribers, in one pass of that thread, with no hop between executors. It
/// awaits the home manager only for writes, identify and a rebuild of its accessories, and serves
/// other controllers meanwhile. (A gateway without a loop gives the bridges one of their own; their
/// writes then hop to the manager's queue.)
package actor HomeBridge {
    /// Which home, served with whose rights, on which port.
    package struct Settings: Sendable, Equatable {
        package let home: String
        package let account: String
        package let port: Int

        package init(home: String, account: String, port: Int) {
            self.home = home
            self.account = account
            self.port = port
        }
    }

    /// What the bridge's `_hap._tcp` record says; it follows the pairing state and `c#`.
    package struct Advertisement: Sendable, Equatable {
        package let name: String
        let deviceID: String
        package let configurationNumber: Int
        package let isPaired: Bool
        let setupHash: String
        package let port: Int
    }

    /// The most pairings a bridge keeps (HAP asks for at least 16).
    static let maximumPairings = 16
    /// Failed pair setups after which the bridge refuses more (HAP: 100).
    static let maximumFailedAttempts = 100

    package nonisolated let settings: Settings
    package nonisolated let homeID: HomeID
    /// The loop that serves the bridge's sockets, which is the home manager's too when the gateway
    /// has one: a write then goes to the manager and its driver without a hop between threads, as an
    /// MQTT command does.
    private nonisolated let executor: ExecutorChoice
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.unownedExecutor }
    let manager: HomeManager
    let store: BridgeStateStore
    let logger: Logger
    let clock: AnyClock
    let firmware: String

    var homeName: String
    var state: BridgeState
    var accessories: BridgeAccessories
    var values: [HAPAddress: CharacteristicValue] = [:]
    var unreachable: Set<Int> = []
    var connections: [Int: Connection] = [:]
    private var nextConnection = 0
    private var pairSetup: (connection: Int, exchange: AccessoryPairSetup, started: AnyClock.Instant)?
    /// How long a pair setup may hold the bridge (another controller's M1 gets Busy meanwhile): a
    /// controller that sent M1 and went quiet is not waited for longer.
    static let pairSetupLifetime = Duration.seconds(60)
    private var advertisementSinks: [@Sendable (Advertisement) -> Void] = []
    /// What was said to be left out, so that it is said once.
    var warned: Set<String> = []

    /// One controller's connection, from accept to close.
    struct Connection {
        /// Writes an event to the controller at once (on the loop, where the bridge runs).
        let send: @Sendable (HAPOutbound) -> Void
        let close: @Sendable () -> Void
        var verify: AccessoryPairVerify?
        /// The controller's pairing identifier, once pair verify succeeded.
        var controller: [UInt8]?
        var subscriptions: Set<HAPAddress> = []
        /// Values this controller wrote, not to be told back to it (HAP: no event to the writer).
        var ownWrites: [HAPAddress: CharacteristicValue] = [:]
        /// A timed write's id and when it expires.
        var prepared: (id: UInt64, expiry: AnyClock.Instant)?
    }

    /// A bridge of `home` (found with `settings.account`'s rights) that runs on `loop`, its state
    /// read from the home database or made and stored the first time.
    package init(
        settings: Settings, home: Home, manager: HomeManager, loop: EventLoopThread, logger: Logger,
        clock: AnyClock = AnyClock(ContinuousClock()), firmware: String = "1.0"
    ) throws {
        self.settings = settings
        self.manager = manager
        executor = ExecutorChoice(loop, otherwise: "homegate-hap")
        self.logger = logger
        self.clock = clock
        self.firmware = firmware
        homeID = home.id
        homeName = home.name
        store = BridgeStateStore(secrets: manager.secrets(for: BridgeStateStore.driver))
        state = try store.load(home: home.id)
        var warned: Set<String> = []
        let accessories = Self.build(
            home, state: &state, name: home.name, firmware: firmware, logger: logger, warned: &warned)
        self.warned = warned
        self.accessories = accessories
        values = Self.values(of: home, in: accessories)
        unreachable = Set(home.accessories.filter { !$0.isReachable }.compactMap { accessories.aid(of: $0.id) })
        try store.save(state, home: homeID)
    }

    /// The setup code ("XXX-XX-XXX") people type in the Home app, for the home's administrators only.
    package var setupCode: String { state.setup.setupCode }

    /// The bridge's record as it stands.
    package var advertisement: Advertisement {
        Advertisement(
            name: homeName, deviceID: state.deviceID, configurationNumber: state.configurationNumber.value,
            isPaired: state.isPaired, setupHash: state.setup.setupHash(deviceID: state.deviceID), port: settings.port)
    }

    /// Calls `sink` with the record now and whenever it changes.
    package func advertise(to sink: @escaping @Sendable (Advertisement) -> Void) {
        advertisementSinks.append(sink)
        sink(advertisement)
    }

    func advertisementChanged() {
        let current = advertisement
        for sink in advertisementSinks { sink(current) }
    }

    // MARK: Connections

    /// A new connection's id; `send` writes what the bridge tells it unasked (events), `close` ends it.
    func open(
        send: @escaping @Sendable (HAPOutbound) -> Void, close: @escaping @Sendable () -> Void
    ) -> Int {
        nextConnection += 1
        connections[nextConnection] = Connection(send: send, close: close)
        return nextConnection
    }

    func closed(_ id: Int) {
        connections.removeValue(forKey: id)
        if pairSetup?.connection == id { pairSetup = nil }
    }

    /// The answer to one request of connection `id`.
    func handle(_ request: HAPRequest, on id: Int) async -> HAPOutbound {
        switch (request.method, request.path) {
        case (.POST, "/pair-setup"): return .response(await pairSetup(request.body, on: id), secureWith: nil)
        case (.POST, "/pair-verify"): return pairVerify(request.body, on: id)
        case (.POST, "/identify"):
            // Only an unpaired accessory identifies itself on this request; a paired one is asked
            // through its Identify characteristic.
            guard !state.isPaired else { return .response(Self.status(.badRequest, -70401), secureWith: nil) }
            logger.info("HomeKit bridge identify", metadata: ["home": "\(homeName)"])
            return .response(.noContent, secureWith: nil)
        default: break
        }
        guard connections[id]?.controller != nil else {
            // 470 Connection Authorization Required: nothing but pairing before pair verify.
            return .response(
                Self.status(.custom(code: 470, reasonPhrase: "Connection Authorization Required"), -70401),
                secureWith: nil)
        }
        let response: HAPResponse
        switch (request.method, request.path) {
        case (.GET, "/accessories"): response = .json(.ok, accessoryDatabase().bytes)
        case (.GET, "/characteristics"): response = read(request, on: id)
        case (.PUT, "/characteristics"): response = await write(request.body, on: id)
        case (.PUT, "/prepare"): response = prepare(request.body, on: id)
        case (.POST, "/pairings"): response = await pairings(request.body, on: id)
        default: response = Self.status(.notFound, -70409)
        }
        return .response(response, secureWith: nil)
    }

    static func status(_ http: HTTPResponseStatus, _ status: Int) -> HAPResponse {
        .json(http, JSON.object([("status", .integer(status))]).bytes)
    }

    // MARK: Pairing

    private func pairSetup(_ body: [UInt8], on id: Int) async -> HAPResponse {
        let step = (try? TLV8(decoding: body))?[.state] ?? []
        if step == [1] {
            if state.isPaired { return .tlv8(Self.refusal(.unavailable)) }
            if state.failedAttempts >= Self.maximumFailedAttempts { return .tlv8(Self.refusal(.maxTries)) }
            if let current = pairSetup, current.connection != id,
                current.started.duration(to: clock.now) < Self.pairSetupLifetime
            {
                return .tlv8(Self.refusal(.busy))
            }
            do {
                pairSetup = (
                    id, try AccessoryPairSetup(setupCode: state.setup.setupCode, accessory: state.identity), clock.now
                )
            } catch {
                return .tlv8(Self.refusal(.unknown))
            }
        }
        guard let current = pairSetup, current.connection == id else { return .tlv8(Self.refusal(.unknown)) }
        let (answer, advanced) = await Self.advance(current.exchange, with: body)
        // The controller went away, or its pair setup was given up, while the step was worked out.
        guard let still = pairSetup, still.connection == id, still.started == current.started else {
            return .tlv8(Self.refusal(.unknown))
        }
        pairSetup = (id, advanced, current.started)
        switch answer.outcome {
        case nil: break
        case .paired(let controller):
            pairSetup = nil
            let before = state
            state.pairings = [controller]
            state.failedAttempts = 0
            // A pairing the controller keeps but the bridge lost would never verify: unless it is
            // stored, the controller is told the pair setup failed.
            guard await persist("the first pairing") else {
                state = before
                return .tlv8(AccessoryPairSetup.Answer.failure(.unknown, state: 6).body)
            }
            logger.notice("HomeKit bridge paired", metadata: ["home": "\(homeName)"])
            advertisementChanged()
        case .failed(let code, let step):
            pairSetup = nil
            // Only M4's authentication error is a wrong setup code (the SRP proof failed). At M6 the
            // code was right and the controller's M5 did not open or verify: no attempt at the code.
            if code == .authentication && step == 4 {
                state.failedAttempts += 1
                await persist("a failed pair setup")
                logger.warning(
                    "HomeKit bridge: a pair setup with a wrong setup code",
                    metadata: ["home": "\(homeName)", "failed": "\(state.failedAttempts)"])
            }
        }
        return .tlv8(answer.body)
    }

    /// One step of pair setup, worked out on the global executor: SRP's 3072-bit arithmetic takes
    /// milliseconds, which the gateway's loop (this actor's executor) spends on MQTT commands instead.
    @concurrent
    private static func advance(_ exchange: AccessoryPairSetup, with body: [UInt8]) async -> (
        AccessoryPairSetup.Answer, AccessoryPairSetup
    ) {
        var exchange = exchange
        let answer = exchange.handle(body)
        return (answer, exchange)
    }

    /// Pair setup's M2 refusing to start.
    private static func refusal(_ code: PairingError.Code) -> [UInt8] {
        AccessoryPairSetup.Answer.failure(code, state: 2).body
    }

    private func pairVerify(_ body: [UInt8], on id: Int) -> HAPOutbound {
        guard var connection = connections[id] else {
            return .response(Self.status(.badRequest, -70410), secureWith: nil)
        }
        if (try? TLV8(decoding: body))?[.state] == [1] {
            connection.verify = AccessoryPairVerify(accessory: state.identity)
            connection.controller = nil
        }
        guard var verify = connection.verify else {
            return .response(.tlv8(AccessoryPairVerify.Answer.failure(.unknown, state: 2).body), secureWith: nil)
        }
        let pairings = state.pairings
        let answer = verify.handle(body) { identifier in pairings.first { $0.identifier == identifier } }
        connection.verify = verify
        var keys: SessionKeys?
        switch answer.outcome {
        case nil: break
        case .verified(let controller, let sessionKeys):
            connection.verify = nil
            connection.controller = controller.identifier
            keys = sessionKeys
        case .failed:
            connection.verify = nil
        }
        connections[id] = connection
        return .response(.tlv8(answer.body), secureWith: keys)
    }

    /// `/pairings`: add, remove and list, by an administrator.
    private func pairings(_ body: [UInt8], on id: Int) async -> HAPResponse {
        func failure(_ code: PairingError.Code) -> HAPResponse {
            .tlv8(AccessoryPairSetup.Answer.failure(code, state: 2).body)
        }
        guard let message = try? TLV8(decoding: body), message[.state] == [1], let method = message[.method] else {
            return failure(.unknown)
        }
        guard let caller = connections[id]?.controller,
            state.pairings.first(where: { $0.identifier == caller })?.isAdministrator == true
        else { return failure(.authentication) }
        switch method {
        case [PairingMethod.addPairing.rawValue]:
            guard let identifier = message[.identifier], let publicKey = message[.publicKey],
                let permissions = message[.permissions]
            else { return failure(.unknown) }
            let isAdministrator = permissions == [1]
            let before = state
            if let index = state.pairings.firstIndex(where: { $0.identifier == identifier }) {
                guard state.pairings[index].publicKey == publicKey else { return failure(.unknown) }
                state.pairings[index].isAdministrator = isAdministrator
                // The last administrator stays one: no one could manage the bridge otherwise.
                guard state.pairings.contains(where: \.isAdministrator) else {
                    state = before
                    return failure(.unknown)
                }
            } else {
                guard state.pairings.count < Self.maximumPairings else { return failure(.maxPeers) }
                state.pairings.append(
                    PairedController(identifier: identifier, publicKey: publicKey, isAdministrator: isAdministrator))
            }
            guard await persist("an added pairing") else {
                state = before
                return failure(.unknown)
            }
        case [PairingMethod.removePairing.rawValue]:
            guard let identifier = message[.identifier] else { return failure(.unknown) }
            let before = state
            state.pairings.removeAll { $0.identifier == identifier }
            // Without an administrator no one could manage the bridge: HAP removes every pairing.
            if !state.pairings.contains(where: \.isAdministrator) { state.pairings = [] }
            guard await persist("a removed pairing") else {
                state = before
                return failure(.unknown)
            }
            // The removed controllers' sessions end: the caller's after this answer (it is refused
            // from now on), the others' at once.
            let remaining = Set(state.pairings.map(\.identifier))
            for (other, connection) in connections {
                guard let controller = connection.controller, !remaining.contains(controller) else { continue }
                if other == id { connections[id]?.controller = nil } else { connection.close() }
            }
            if !state.isPaired { logger.notice("HomeKit bridge unpaired", metadata: ["home": "\(homeName)"]) }
            advertisementChanged()
        case [PairingMethod.listPairings.rawValue]:
            var list = TLV8([.init(.state, [2])])
            for (index, pairing) in state.pairings.enumerated() {
                if index > 0 { list.append(.separator, []) }
                list.append(.identifier, pairing.identifier)
                list.append(.publicKey, pairing.publicKey)
                list.append(.permissions, [pairing.isAdministrator ? 1 : 0])
            }
            return .tlv8(list.encoded())
        default:
            return failure(.unknown)
        }
        return .tlv8(TLV8([.init(.state, [2])]).encoded())
    }

    @discardableResult
    func persist(_ what: String) async -> Bool {
        do {
            try await store.store(state, home: homeID)
            return true
        } catch {
            logger.error(
                "HomeKit bridge: cannot store \(what)", metadata: ["home": "\(homeName)", "error": "\(error)"])
            return false
        }
    }
}
