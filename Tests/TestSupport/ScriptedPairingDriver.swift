import HomeModel

/// A pairing driver that knows one unpaired device `new-bridge`, takes the code 111-22-333, and then
/// is a bridge with one bridged lamp. Counts unpairings.
package actor ScriptedPairingDriver: PairingDriver {
    package nonisolated let name = "scripted"
    package nonisolated let updates: AsyncStream<DriverUpdate>
    private let sink: AsyncStream<DriverUpdate>.Continuation
    package private(set) var unpaired: [AccessoryID] = []
    private var paired = false

    package init() { (updates, sink) = AsyncStream.makeStream(of: DriverUpdate.self) }

    package static let lamp = Service(
        id: "light", type: .lightbulb, name: "Light", characteristics: [.standard(.on, .bool(false))])

    package func start() async throws {}
    package func stop() async { sink.finish() }
    package func accessories() async -> [Accessory] {
        paired
            ? Self.pairedAccessories : [Self.unpairedBridge]
    }

    /// What it is before pairing: a HomeKit accessory waiting for its setup code.
    package static let unpairedBridge: Accessory = {
        var accessory = Accessory(id: "new-bridge", name: "New Bridge", category: .other, services: [])
        accessory.needsPairing = true
        return accessory
    }()

    package static let pairedAccessories = [
        Accessory(
            id: "AA:BB", name: "Bridge", category: .bridge, bridgedAccessories: ["AA:BB:2"], services: []),
        Accessory(id: "AA:BB:2", name: "Lamp", category: .lightbulb, bridge: "AA:BB", services: [lamp]),
    ]

    package func pair(_ id: AccessoryID, setupCode: String) async throws -> [Accessory] {
        guard id == "new-bridge" else { throw HomeError(.notFound, "no \(id)") }
        guard setupCode == "111-22-333" else { throw HomeError(.authenticationFailed, "wrong code") }
        paired = true
        sink.yield(.lost(id))
        return Self.pairedAccessories
    }

    package func unpair(_ id: AccessoryID) async throws { unpaired.append(id) }
    package func pairings(of id: AccessoryID) async throws -> [ControllerPairing] {
        [ControllerPairing(identifier: "gateway", isAdministrator: true, isThisGateway: true)]
    }
    package func addPairing(_ pairing: ControllerPairing, publicKey: [UInt8], to id: AccessoryID) async throws {}
    package func removePairing(controller: String, from id: AccessoryID) async throws {}
    package func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    { .bool(false) }
    package func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {}
    package func identify(_ accessory: AccessoryID) async throws {}
}
