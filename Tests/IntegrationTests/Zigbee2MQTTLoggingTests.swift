import Foundation
import HomeModel
import Logging
import MQTT
import Synchronization
import TestSupport
import Testing
import Zigbee2MQTT
import Zigbee2MQTTStandIn

/// Bad input from the network is logged once per device and cause, however often it comes.
@Suite(.timeLimit(.minutes(5)))
struct Zigbee2MQTTLoggingTests {
    @Test func theSameBadPayloadIsLoggedOncePerDeviceAndCause() async throws {
        try await withBroker { broker in
            let lines = LogLines()
            let logger = Logger(label: "test.zigbee2mqtt") { _ in lines }
            let devices = zigbeeRecordings.devices(named: ["bulb"])
            let zigbee = Zigbee2MQTTStandIn(
                client: try makeClient(broker, name: "zigbee2mqtt"), devices: devices,
                states: zigbeeRecordings.firstStates(of: devices),
                logger: Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() })
            try await zigbee.start()
            let manager = try HomeManager(database: .inMemory())
            try await manager.attach(Zigbee2MQTTDriver(client: try makeClient(broker, name: "driver"), logger: logger))
            // The bulb is found: its recorded state says brightness 50 of 254
            try await eventually("the bulb found, at brightness 20") {
                await manager.discoveredAccessories().first?.characteristic("light", .brightness)?.value == .int(20)
            }

            // When the same broken payload and the same out-of-range value come three times each
            let outOfRange = try #require(
                zigbeeRecordings.states(of: "bulb").first { $0.contains(#""color_temp":548"#) })
            for _ in 0..<3 {
                try await zigbee.publishState("bulb", Array("not json {".utf8))
                try await zigbee.publishState("bulb", Array(outOfRange.utf8))
            }
            // (a marker after them: once it shows, all of them were handled)
            try await zigbee.publishState("bulb", Array(#"{"brightness":254,"state":"ON"}"#.utf8))
            try await eventually("the marker handled, at brightness 100") {
                await manager.discoveredAccessories().first?.characteristic("light", .brightness)?.value == .int(100)
            }

            // Then each cause is in the log once
            let warnings = lines.all.filter { $0.level == .warning }.map(\.message)
            #expect(warnings.filter { $0.contains("not a JSON object") }.count == 1, "\(warnings)")
            #expect(warnings.filter { $0.contains("color_temp") }.count == 1, "\(warnings)")
            await manager.shutdown()
            await zigbee.stop()
        }
    }
}
