import Execution
import Foundation
import HAPModel
import HAPProtocol
import HomeModel
import JSON
import Logging

/// Where an accessory listens: from mDNS, from `accessories.hap.accessories`, or remembered with its pairing.
package struct HAPEndpoint: Sendable, Hashable {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// homegate as a HomeKit controller: accessories and bridges that speak HAP over IP become
/// accessories of the home. Unpaired ones wait in the browser until an administrator pairs one with
/// its setup code (``pair(_:setupCode:)``); paired ones are reached on every start with pair verify,
/// their `/accessories` database becomes services and characteristics, their events become values.
/// A connection that fails makes its accessories unreachable and is tried again with backoff; when it
/// comes back, every value is read again.
package actor HAPDriver: PairingDriver {
    package nonisolated let name = "hap"
    package nonisolated let updates: AsyncStream<DriverUpdate>
    let sink: AsyncStream<DriverUpdate>.Continuation
    private let keychain: HAPKeychain
    private let logger: Logger
    private let configured: [HAPEndpoint]
    /// How often a fixed address without a pairing is checked for something listening.
    private let probeInterval: Duration
    /// What the driver's timers run on: request timeouts, probes, reconnect backoff.
    private nonisolated let deadlines: DeadlineTimer<AnyClock>
    private nonisolated var clock: AnyClock { deadlines.clock }
    private let browser: HAPBrowser?
    /// The mDNS instance name of each discovered device, for its removal.
    private var instances: [String: String] = [:]
    /// Where mDNS found accessories paired with another controller, by pairing identifier: a fixed
    /// address among them is not offered either.
    private var pairedElsewhere: [String: HAPEndpoint] = [:]
    private var controller: ControllerIdentity?

    /// One accessory device (an accessory or a bridge) and what is known of it.
    private struct Device {
        /// Its pairing identifier once paired; `host:port` before.
        var id: String
        var endpoint: HAPEndpoint
        var pairing: AccessoryPairing?
        var database: HAPAccessoryDatabase?
        var connection: HAPConnection?
        var task: Task<Void, Never>?
        var isReachable = false
        /// What mDNS said of it last (name, category, configuration number), when it was seen there.
        var discovered: DiscoveredHAPAccessory?
        /// Until when the accessory asked not to be tried again (kTLVError_Backoff's retry delay).
        var retryAfter: AnyClock.Instant?
        /// The last thing that went wrong, logged once until something else goes wrong.
        var lastProblem: String?

        /// The accessories of its database, reachable as it is.
        var accessories: [Accessory] {
            (database?.accessories ?? []).map { accessory in
                var accessory = accessory
                accessory.isReachable = isReachable
                return accessory
            }
        }
    }

    private var devices: [String: Device] = [:]

    /// - Parameters:
    ///   - endpoints: accessories at fixed addresses (`accessories.hap.accessories`).
    ///   - browser: mDNS discovery (`accessories.hap.discovery`); nil finds only `endpoints`.
    ///   - probeInterval: how often an unpaired fixed address is checked for something listening.
    ///   - clock: what the driver's timers run on.
    package init(
        endpoints: [HAPEndpoint], browser: HAPBrowser? = nil, secrets: DriverSecrets,
        probeInterval: Duration = .seconds(10), clock: some Clock<Duration> = ContinuousClock(), logger: Logger
    ) {
        configured = endpoints
        self.probeInterval = probeInterval
        deadlines = DeadlineTimer(clock: AnyClock(clock))
        self.browser = browser
        keychain = HAPKeychain(secrets: secrets)
        var logger = logger
        logger[metadataKey: "driver"] = "hap"
        self.logger = logger
        (updates, sink) = AsyncStream.makeStream(of: DriverUpdate.self)
    }

    package func start() async throws {
        controller = try keychain.controller()
        for pairing in try keychain.pairings() {
            let id = pairing.accessory.identifier
            devices[id] = Device(
                id: id, endpoint: HAPEndpoint(host: pairing.host, port: pairing.port), pairing: pairing.accessory)
            follow(id)
        }
    }

    /// Offers the unpaired fixed addresses where something listens, and browses for accessories over
    /// mDNS (when it has a browser) and takes what it finds, until cancelled.
    package func run() async {
        await withDiscardingTaskGroup { group in
            if !configured.isEmpty {
                group.addTask { [weak self] in await self?.watchConfigured() }
            }
            if let browser {
                group.addTask { await browser.run() }
                group.addTask { [weak self] in
                    for await event in browser.events { await self?.discovered(event) }
                }
            }
            await untilCancelled()
            browser?.stop()
        }
    }

    /// An unpaired fixed address is offered while something accepts a connection there, checked now
    /// and every `probeInterval`: an address where nothing listens is not an accessory to pair.
    private func watchConfigured() async {
        await checkConfigured()
        await clock.every(probeInterval) { await checkConfigured() }
    }

    private func checkConfigured() async {
        for endpoint in configured {
            let id = Self.unpairedID(endpoint)
            // Paired, found over mDNS at that address, or paired with another controller: not ours to offer.
            func followedOtherwise() -> Bool {
                devices.values.contains { $0.endpoint == endpoint && $0.id != id }
                    || pairedElsewhere.values.contains(endpoint)
            }
            guard !followedOtherwise() else { continue }
            let listening = await HAPConnection.isListening(host: endpoint.host, port: endpoint.port, timer: deadlines)
            guard !followedOtherwise() else { continue }
            if listening, devices[id] == nil {
                devices[id] = Device(id: id, endpoint: endpoint, isReachable: true)
                sink.yield(.found(Self.unpairedAccessory(devices[id]!)))
            } else if !listening, devices.removeValue(forKey: id) != nil {
                logger.info("nothing listens at \(endpoint.host):\(endpoint.port) any more; not offered")
                sink.yield(.lost(AccessoryID(id)))
            }
        }
    }

    /// What mDNS reports: an unpairable accessory waits in the browser; a paired one's new address is
    /// kept; a new configuration number (the accessory database changed) makes the driver connect
    /// again and read `/accessories` anew.
    func discovered(_ event: HAPBrowserEvent) async {
        switch event {
        case .found(let seen):
            instances[seen.name] = seen.id
            let endpoint = HAPEndpoint(host: seen.host, port: seen.port)
            if var device = devices[seen.id], let pairing = device.pairing {
                let reload = device.discovered.map { $0.configuration != seen.configuration } ?? false
                device.discovered = seen
                if device.endpoint != endpoint {
                    device.endpoint = endpoint
                    try? keychain.save(HAPKeychain.Pairing(accessory: pairing, host: seen.host, port: seen.port))
                }
                devices[seen.id] = device
                if reload, let connection = device.connection {
                    logger.info("HAP accessory \(seen.id): configuration \(seen.configuration); reading it again")
                    await connection.close()
                } else if !device.isReachable && device.connection == nil {
                    // Announced again while the driver waits out its backoff: try now.
                    follow(seen.id)
                }
                return
            }
            // The same accessory listed at a fixed address gives way to its mDNS entry.
            let manual = Self.unpairedID(endpoint)
            if devices.removeValue(forKey: manual) != nil { sink.yield(.lost(AccessoryID(manual))) }
            guard seen.isPairable else {
                // Paired with another controller: nothing to offer here, at its fixed address neither.
                pairedElsewhere[seen.id] = endpoint
                if devices[seen.id]?.pairing == nil, devices.removeValue(forKey: seen.id) != nil {
                    sink.yield(.lost(AccessoryID(seen.id)))
                }
                return
            }
            pairedElsewhere[seen.id] = nil
            var device = devices[seen.id] ?? Device(id: seen.id, endpoint: endpoint, isReachable: true)
            device.endpoint = endpoint
            device.discovered = seen
            devices[seen.id] = device
            sink.yield(.found(Self.unpairedAccessory(device)))
        case .removed(let name):
            guard let id = instances.removeValue(forKey: name) else { return }
            pairedElsewhere[id] = nil
            guard let device = devices[id], device.pairing == nil else { return }
            devices[id] = nil
            sink.yield(.lost(AccessoryID(id)))
        }
    }

    package func stop() async {
        browser?.stop()
        for device in devices.values {
            device.task?.cancel()
            await device.connection?.close()
        }
        for device in devices.values { await device.task?.value }
        sink.finish()
    }

    package func accessories() async -> [Accessory] {
        devices.values.sorted { $0.id < $1.id }.flatMap { device -> [Accessory] in
            device.pairing == nil ? [Self.unpairedAccessory(device)] : device.accessories
        }
    }

    // MARK: Pairing

    package func pair(_ id: AccessoryID, setupCode: String) async throws -> [Accessory] {
        guard let device = devices[id.rawValue], device.pairing == nil else {
            throw HomeError(.notFound, "There is no unpaired HAP accessory '\(id)'.")
        }
        guard let controller else { throw HomeError(.unexpectedError, "The HAP driver has not started.") }
        if let retryAfter = device.retryAfter, retryAfter > clock.now {
            let seconds = Int(clock.now.duration(to: retryAfter).components.seconds) + 1
            throw HomeError(
                .authenticationFailed,
                "'\(id)' refuses pairing attempts for now; try again in \(seconds) seconds, as it asked.")
        }
        do {
            try PairSetup.validate(setupCode: setupCode)
        } catch {
            throw HomeError(.invalidParameter, "A setup code is written XXX-XX-XXX (eight digits).")
        }
        let pairing: AccessoryPairing
        do {
            let connection = try await HAPConnection.open(
                host: device.endpoint.host, port: device.endpoint.port, timer: deadlines)
            do {
                pairing = try await connection.pairSetup(setupCode: setupCode, controller: controller)
                await connection.close()
            } catch {
                await connection.close()
                throw error
            }
        } catch let error as PairingError {
            if error.code == .backoff, let delay = error.retryDelay {
                devices[id.rawValue]?.retryAfter = clock.now.advanced(by: .seconds(Int64(min(delay, 86_400))))
            }
            throw Self.homeError(error, accessory: id.rawValue)
        } catch {
            throw HomeError(.communicationFailure, "Pairing with '\(id)' failed: \(error).")
        }
        let saved = HAPKeychain.Pairing(accessory: pairing, host: device.endpoint.host, port: device.endpoint.port)
        do {
            try keychain.save(saved)
        } catch {
            throw HomeError(.unexpectedError, "The pairing could not be saved: \(error).")
        }
        devices[id.rawValue] = nil
        let newID = pairing.identifier
        // A discovered accessory keeps its id (its pairing identifier); one at a fixed address gets it now.
        if newID != id.rawValue { sink.yield(.lost(id)) }
        devices[newID] = Device(id: newID, endpoint: device.endpoint, pairing: pairing, discovered: device.discovered)
        logger.notice("paired with the HAP accessory \(newID) at \(device.endpoint.host):\(device.endpoint.port)")
        try await connect(newID)
        follow(newID)
        return await accessories().filter { $0.id.rawValue == newID || $0.id.rawValue.hasPrefix(newID + ":") }
    }

    package func unpair(_ id: AccessoryID) async throws {
        let deviceID = Self.deviceID(of: id)
        guard let device = devices[deviceID], let controller, device.pairing != nil else {
            throw HomeError(.notFound, "'\(id)' is not a paired HAP accessory.")
        }
        guard let connection = device.connection, await connection.isOpen else {
            throw HomeError(.accessoryNotReachable, "'\(id)' cannot be reached to remove the pairing.")
        }
        try await pairingsRequest(
            PairingsRequest.remove(identifier: controller.identifier), id, read: PairingsRequest.readResult)
        try? keychain.remove(deviceID)
        device.task?.cancel()
        await connection.close()
        for accessory in device.database?.accessories ?? [] { sink.yield(.lost(accessory.id)) }
        devices[deviceID] = nil
        if configured.contains(device.endpoint) {
            let unpaired = Self.unpairedID(device.endpoint)
            devices[unpaired] = Device(id: unpaired, endpoint: device.endpoint, isReachable: true)
            sink.yield(.found(Self.unpairedAccessory(devices[unpaired]!)))
        }
        logger.notice("removed the pairing with the HAP accessory \(deviceID)")
    }

    package func pairings(of id: AccessoryID) async throws -> [ControllerPairing] {
        let own = controller?.identifier
        return try await pairingsRequest(PairingsRequest.list(), id, read: PairingsRequest.readList).map {
            ControllerPairing(
                identifier: $0.identifier, isAdministrator: $0.isAdmin, isThisGateway: $0.identifier == own)
        }
    }

    package func addPairing(_ pairing: ControllerPairing, publicKey: [UInt8], to id: AccessoryID) async throws {
        guard publicKey.count == 32 else {
            throw HomeError(.invalidParameter, "A controller's public key is 32 bytes (Ed25519).")
        }
        let entry = PairingEntry(identifier: pairing.identifier, publicKey: publicKey, isAdmin: pairing.isAdministrator)
        try await pairingsRequest(PairingsRequest.add(entry), id, read: PairingsRequest.readResult)
    }

    package func removePairing(controller identifier: String, from id: AccessoryID) async throws {
        guard identifier != controller?.identifier else {
            throw HomeError(.invalidParameter, "That is this gateway's own pairing: use unpairAccessory.")
        }
        try await pairingsRequest(PairingsRequest.remove(identifier: identifier), id, read: PairingsRequest.readResult)
    }

    /// A /pairings exchange with the device of `id`: its answer as `read` reads it, and the
    /// accessory's kTLVError as the model's error.
    private func pairingsRequest<Answer>(
        _ body: [UInt8], _ id: AccessoryID, read: ([UInt8]) throws -> Answer
    ) async throws -> Answer {
        let (connection, _) = try session(for: id)
        let answer = try await request(connection, .pairing("/pairings", body), id)
        do {
            return try read(answer.body)
        } catch let error as PairingError {
            throw Self.homeError(error, accessory: Self.deviceID(of: id))
        }
    }

    // MARK: Sessions

    /// Keeps a paired device connected: pair verify, the accessory database, events; on failure the
    /// accessories go unreachable and the connection is tried again with backoff.
    private func follow(_ id: String) {
        devices[id]?.task?.cancel()
        // One worker per paired device, for as long as it stays paired (cancelled on unpair and stop).
        devices[id]?.task = Task { [weak self] in
            var delay = Duration.milliseconds(500)
            while !Task.isCancelled {
                guard let self else { return }
                do {
                    if await self.connection(of: id) == nil { try await self.connect(id) }
                    delay = .milliseconds(500)
                    await self.listen(id)
                } catch {
                    await self.problem(id, "\(error)")
                }
                await self.lostConnection(id)
                try? await self.clock.sleep(until: self.clock.now.advanced(by: delay))
                delay = min(delay * 2, .seconds(60))
            }
        }
    }

    private func connection(of id: String) -> HAPConnection? { devices[id]?.connection }

    /// Connects, verifies, reads the accessory database, subscribes to events and reports it all.
    private func connect(_ id: String) async throws {
        guard let device = devices[id], let pairing = device.pairing, let controller else { return }
        let connection = try await HAPConnection.open(
            host: device.endpoint.host, port: device.endpoint.port, timer: deadlines)
        do {
            try await connection.pairVerify(controller: controller, accessory: pairing)
            let listing = try await connection.send(.get("/accessories"))
            guard listing.statusCode == 200 else {
                throw HAPError(.unexpectedMessage, "/accessories answered HTTP \(listing.statusCode)")
            }
            let database = try HAPAccessoryDatabase(json: listing.body, deviceID: id)
            let subscriptions = database.eventAddresses.map {
                JSON.object([("aid", .integer($0.aid)), ("iid", .integer($0.iid)), ("ev", .bool(true))])
            }
            if !subscriptions.isEmpty {
                let body = JSON.object([("characteristics", .array(subscriptions))])
                let answer = try await connection.send(.putJSON("/characteristics", body.bytes))
                if answer.statusCode != 204 && answer.statusCode != 207 {
                    logger.warning("\(id) refused event subscriptions: HTTP \(answer.statusCode)")
                }
            }
            // What the bridge no longer lists is gone (an accessory the home has may then be removed alone).
            let listed = Set(database.accessories.map(\.id))
            let gone = (devices[id]?.database?.accessories ?? []).filter { !listed.contains($0.id) }
            devices[id]?.connection = connection
            devices[id]?.database = database
            for accessory in gone { sink.yield(.lost(accessory.id)) }
            devices[id]?.isReachable = true
            devices[id]?.lastProblem = nil
            for accessory in devices[id]?.accessories ?? [] { sink.yield(.found(accessory)) }
        } catch {
            await connection.close()
            throw error
        }
    }

    private func listen(_ id: String) async {
        guard let connection = devices[id]?.connection else { return }
        for await event in connection.events {
            guard let database = devices[id]?.database else { continue }
            for (_, entry, value) in database.values(in: event.body) {
                sink.yield(.value(entry.accessory, service: entry.service, characteristic: entry.type, value))
            }
        }
    }

    private func lostConnection(_ id: String) async {
        guard var device = devices[id] else { return }
        await device.connection?.close()
        device.connection = nil
        if device.isReachable {
            device.isReachable = false
            for accessory in device.database?.accessories ?? [] {
                sink.yield(.reachability(accessory.id, isReachable: false))
            }
        }
        devices[id] = device
    }

    private func problem(_ id: String, _ text: String) {
        guard devices[id]?.lastProblem != text else { return }
        devices[id]?.lastProblem = text
        logger.warning("HAP accessory \(id): \(text); trying again")
    }

    /// The connection and accessory database of the device that serves `accessory`.
    func session(for accessory: AccessoryID) throws -> (HAPConnection, HAPAccessoryDatabase) {
        let id = Self.deviceID(of: accessory)
        guard let device = devices[id], let database = device.database else {
            throw HomeError(.notFound, "The HAP driver does not know '\(accessory)'.")
        }
        guard let connection = device.connection else {
            throw HomeError(.accessoryNotReachable, "'\(accessory)' is not connected.")
        }
        return (connection, database)
    }

    // MARK: Naming

    private static func unpairedAccessory(_ device: Device) -> Accessory {
        let name =
            device.discovered?.name ?? "HomeKit accessory at \(device.endpoint.host) port \(device.endpoint.port)"
        var accessory = Accessory(
            id: AccessoryID(device.id), name: name, category: category(device.discovered?.category),
            manufacturer: "", model: device.discovered?.model ?? "unpaired HomeKit accessory", services: [],
            isReachable: true)
        accessory.needsPairing = true
        return accessory
    }
}
