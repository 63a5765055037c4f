import HomeModel
import VirtualDevices

/// A test driver that is the fixture's virtual devices but for what it implements itself: every
/// request it leaves out goes to `inner`, so that a new driver requirement is forwarded here once,
/// not in each wrapper (a wrapper that missed `run()` left the virtual clock stopped).
///
/// ``AccessoryDriver/restore(_:)`` is not forwarded: a wrapper that hands the database's values on
/// to the virtual devices says so itself, as ``CountingDriver`` does.
protocol VirtualDriverWrapper: AccessoryDriver {
    /// The virtual devices that answer what the wrapper does not.
    var inner: VirtualDriver { get }
}

extension VirtualDriverWrapper {
    var updates: AsyncStream<DriverUpdate> { inner.updates }
    func start() async throws { try await inner.start() }
    func run() async { await inner.run() }
    func stop() async { await inner.stop() }
    func accessories() async -> [Accessory] { await inner.accessories() }
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        try await inner.read(accessory, service: service, characteristic: characteristic)
    }
    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        try await inner.write(accessory, values: values)
    }
    func identify(_ accessory: AccessoryID) async throws { try await inner.identify(accessory) }
}
