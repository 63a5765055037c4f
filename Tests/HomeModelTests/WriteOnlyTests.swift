import HomeModel
import TestSupport
import Testing

/// A driver with one accessory whose Identify characteristic is write-only and whose Name is read-only.
struct DoorbellDriver: AccessoryDriver {
    let name = "doorbell"
    let updates = AsyncStream<DriverUpdate> { _ in }
    func start() async throws {}
    func stop() async {}
    func accessories() async -> [Accessory] {
        [
            Accessory(
                id: "bell", name: "Doorbell", category: .other,
                services: [
                    Service(
                        id: "info", type: "AccessoryInformation", name: "Information",
                        characteristics: [
                            .standard(.identify, nil), .standard(.name, .string("Doorbell")),
                        ])
                ])
        ]
    }
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        .string("Doorbell")
    }
    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {}
    func identify(_ accessory: AccessoryID) async throws {}
}

@Suite("Read-only and write-only characteristics")
struct WriteOnlyTests {
    @Test("A write-only characteristic cannot be read, a read-only one cannot be written")
    func permissions() async throws {
        // Given the doorbell in a home
        let m = try HomeManager(database: .inMemory())
        try await m.attach(DoorbellDriver())
        try await m.edit(.addHome(name: "Home"), account: "alice")
        try await m.edit(.addAccessory(home: "Home", id: "bell"), account: "alice")
        // When its write-only Identify is read, and its read-only Name written
        let readCode = await errorCode {
            _ = try await m.readValues(accessory: "Doorbell", characteristic: .identify, home: "Home", account: "alice")
        }
        let name = CharacteristicReference(accessory: "Doorbell", service: "Information", characteristic: .name)
        let writeCode = await errorCode {
            try await m.writeValue(.string("Bell"), to: name, home: "Home", account: "alice")
        }
        // Then both are refused with HomeKit's codes
        #expect(readCode == .writeOnlyCharacteristic)
        #expect(writeCode == .readOnlyCharacteristic)
        // And reading the whole accessory skips the write-only one
        let reads = try await m.readValues(accessory: "Doorbell", home: "Home", account: "alice")
        #expect(reads.map(\.characteristic) == [.name])
        // And the write-only one can be written
        let identify = CharacteristicReference(accessory: "Doorbell", service: "Information", characteristic: .identify)
        try await m.writeValue(.bool(true), to: identify, home: "Home", account: "alice")
    }
}
