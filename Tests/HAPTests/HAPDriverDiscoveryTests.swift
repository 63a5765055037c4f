import Broker
import Foundation
import HomeModel
import Logging
import TestSupport
import Testing

@testable import HAP

@Suite("What the HAP driver makes of mDNS")
struct HAPDriverDiscoveryTests {
    static func seen(configuration: Int = 1, pairable: Bool = true, port: Int = 51826) -> DiscoveredHAPAccessory {
        DiscoveredHAPAccessory(
            name: "Hall Bridge", id: "11:22:33:44:55:66", category: 2, isPairable: pairable,
            configuration: configuration, model: "Bridge", host: "127.0.0.1", port: port)
    }

    private func driver(endpoints: [HAPEndpoint] = []) async throws -> HAPDriver {
        let driver = HAPDriver(
            endpoints: endpoints, secrets: try HomeDatabase.inMemory().secrets(for: "hap"),
            probeInterval: .milliseconds(50), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        try await driver.start()
        return driver
    }

    @Test("an unpaired accessory waits in the browser under its pairing identifier, needing pairing")
    func unpaired() async throws {
        let driver = try await driver()
        await driver.discovered(.found(Self.seen()))
        let accessories = await driver.accessories()
        #expect(accessories.map(\.id) == ["11:22:33:44:55:66"])
        #expect(accessories.first?.needsPairing == true)
        #expect(accessories.first?.name == "Hall Bridge" && accessories.first?.category == .bridge)
        await driver.discovered(.removed(name: "Hall Bridge"))
        #expect(await driver.accessories().isEmpty)
        await driver.stop()
    }

    @Test("an accessory paired with another controller is not offered; one listed at a fixed address gives way to mDNS")
    func pairedElsewhereAndManual() async throws {
        let listening = try ListeningPort()
        let driver = try await driver(endpoints: [HAPEndpoint(host: "127.0.0.1", port: listening.port)])
        let running = Task { await driver.run() }
        try await eventually("the fixed address offered") {
            await driver.accessories().map(\.id.rawValue) == ["hap@127.0.0.1:\(listening.port)"]
        }
        await driver.discovered(.found(Self.seen(port: listening.port)))
        #expect(await driver.accessories().map(\.id) == ["11:22:33:44:55:66"])
        await driver.discovered(.found(Self.seen(configuration: 2, pairable: false, port: listening.port)))
        #expect(await driver.accessories().isEmpty)
        running.cancel()
        await running.value
        await driver.stop()
    }

    @Test(
        "a fixed address is offered while something listens there: never where nothing does, and no longer once it stops"
    )
    func fixedAddressesWhileListening() async throws {
        let listening = try ListeningPort()
        let refusing = try RefusingPort()
        // The listener stays alive however often it is tried (one that never accepted looked dead
        // once its backlog was full: the probes every 50 ms filled it within a second)
        #expect((0..<200).allSatisfy { _ in LoopbackPort.isListening(listening.port) })
        let driver = try await driver(endpoints: [
            HAPEndpoint(host: "127.0.0.1", port: refusing.port), HAPEndpoint(host: "127.0.0.1", port: listening.port),
        ])
        let running = Task { await driver.run() }
        // The refusing address is tried first in each round: once the listening one is offered, it was tried
        try await eventually("the listening address offered") {
            await driver.accessories().map(\.id.rawValue) == ["hap@127.0.0.1:\(listening.port)"]
        }
        listening.stop()
        try await eventually("no longer offered once nothing listens") { await driver.accessories().isEmpty }
        running.cancel()
        await running.value
        await driver.stop()
    }

    @Test("TXT records: the fields read, and a record without id, c# or sf refused with the reason")
    func txt() {
        let good = DiscoveredHAPAccessory.read(
            name: "Lamp", host: "10.0.0.2", port: 80,
            txt: ["id": "aa:bb:cc:dd:ee:ff", "c#": "7", "sf": "0", "ci": "5", "md": "A19", "pv": "1.1"])
        #expect(
            (try? good.get())
                == DiscoveredHAPAccessory(
                    name: "Lamp", id: "AA:BB:CC:DD:EE:FF", category: 5, isPairable: false, configuration: 7,
                    model: "A19", host: "10.0.0.2", port: 80))
        for (txt, reason) in [
            (["c#": "1", "sf": "1"], "pairing identifier"),
            (["id": "1:2", "c#": "1", "sf": "1"], "pairing identifier"),
            (["id": "11:22:33:44:55:66", "sf": "1"], "configuration"),
            (["id": "11:22:33:44:55:66", "c#": "x", "sf": "1"], "configuration"),
            (["id": "11:22:33:44:55:66", "c#": "1"], "status flags"),
        ] {
            guard case .failure(let problem) = DiscoveredHAPAccessory.read(name: "X", host: "h", port: 1, txt: txt)
            else {
                Issue.record("\(txt) was taken")
                continue
            }
            #expect(problem.description.contains(reason), "\(txt)")
        }
    }
}
