import Foundation
import HomeModel
import MQTT
import TestSupport
import Testing

@Suite("Every value reaches its topic, in order", .timeLimit(.minutes(3)))
struct PublishingOrderTests {
    /// Found by the README's lines (lamp on, then Good Night at once): the publisher rendered each
    /// value event from a later snapshot, so a value followed quickly by another never reached its
    /// topic, and a watcher saw the lamp neither go on nor off.
    @Test("values written back to back are each published, in the order they were written")
    func backToBack() async throws {
        try await withGateway { gateway in
            let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On"
            let watcher = try makeClient(gateway.broker, name: "watcher")
            try await withConnected(watcher) { inbox in
                try await watcher.subscribe(to: [lamp], qos: .atLeastOnce)
                _ = try await inbox.next("the retained value") { $0.topic == lamp && $0.payloadString == "false" }
                let target = CharacteristicReference(accessory: "Floor Lamp", service: "Lightbulb", characteristic: .on)
                // Written as fast as the model takes them: the publisher falls behind.
                let writes = 200
                for index in 0..<writes {
                    try await gateway.manager.writeValue(
                        .bool(index % 2 == 0), to: target, home: "Main House", account: "owner")
                }
                for index in 0..<writes {
                    let expected = index % 2 == 0 ? "true" : "false"
                    let message = try await inbox.next("value \(index)") { $0.topic == lamp }
                    #expect(message.payloadString == expected, "value \(index)")
                    if message.payloadString != expected { break }
                }
            }
        }
    }
}
