import Testing

@testable import MQTT

@Suite("libmosquitto served by the gateway's loop")
struct WakeupPairTests {
    /// Fails where libmosquitto's layout or its pair changed: the loop would still work, but pay a
    /// failing write per packet queued, and a read would end at a PUBACK that releases a held
    /// publish (docs/architecture.md).
    @Test("the socket pair libmosquitto wakes its own loop with is found and closed, once")
    func closesTheWakeupPair() throws {
        let engine = try Mosquitto(configuration: MQTTConfiguration(clientID: "wake-up-pair"))
        defer { engine.destroy() }
        // The pair is touched only for a release whose layout is known, asked at run time
        #expect(Mosquitto.knowsWakeupPairLayout, "libmosquitto \(Mosquitto.libraryVersion) is not 2.0 or 2.1")
        #expect(engine.closeWakeupPair())
        #expect(!engine.closeWakeupPair())
    }
}
