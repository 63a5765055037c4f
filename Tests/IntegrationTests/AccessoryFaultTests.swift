import Accessories
import Foundation
import Gateway
import HomeModel
import MQTT
import Testing

/// Devices that answer slowly, fail their writes or stop answering (docs/reliability.md, scenario 3).
/// The fixture's manager gives a device 2 s to answer.
@Suite("Accessory faults on a real broker", .timeLimit(.minutes(3)))
struct AccessoryFaultTests {
    static let lamp = "homegate/Main House/Living Room/Floor Lamp"
    static let counter = "homegate/Main House/Kitchen/Counter Lights"
    static let thermostat = "homegate/Main House/Hallway/Thermostat"

    @Test("a device slower than the timeout: operationTimedOut, no value published, others served meanwhile")
    func slowDevice() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            await gateway.driver.setWriteDelay(.seconds(30), "living-lamp")
            let before = try await guest.retained("\(Self.lamp)/Lightbulb/On")

            // When guest sends five commands to the slow lamp, and then commands to two other accessories
            let started = ContinuousClock.now
            let slow = (0..<5).map { index in
                Task { try await guest.command("\(Self.lamp)/Lightbulb/Brightness/set/guest", "\(10 + index)") }
            }
            try await Task.sleep(for: .milliseconds(100))
            var others: [Duration] = []
            for (topic, payload) in [
                ("\(Self.counter)/Switch/On/set/guest", "true"),
                ("\(Self.thermostat)/Thermostat/TargetTemperature/set/guest", "22"),
                ("\(Self.counter)/Switch/On/set/guest", "false"),
            ] {
                let sent = ContinuousClock.now
                let answer = try await guest.command(topic, payload)
                #expect(answer.isOK, "\(answer.serialized)")
                others.append(ContinuousClock.now - sent)
            }

            // Then the others were answered at once, and every slow one timed out after about 2 s
            #expect(others.allSatisfy { $0 < .seconds(1) }, "other accessories waited \(others)")
            for task in slow {
                let answer = try await task.value
                #expect(answer.code == "operationTimedOut", "\(answer.serialized)")
            }
            let waited = ContinuousClock.now - started
            #expect(waited >= .seconds(2) && waited < .seconds(6), "the slow commands took \(waited)")
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/On") == before)
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/Brightness") == "100")

            // And once the device is quick again, it is served
            await gateway.driver.setWriteDelay(.zero, "living-lamp")
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/Brightness/set/guest", "55").isOK)
            await guest.disconnect()
        }
    }

    @Test("a device whose writes fail: communicationFailure, nothing published, the next write after repair works")
    func failingWrites() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            await gateway.driver.setFailureRate(1, "kitchen-switch")
            for value in ["true", "false", "true"] {
                let answer = try await guest.command("\(Self.counter)/Switch/On/set/guest", value)
                #expect(answer.code == "communicationFailure", "\(answer.serialized)")
            }
            let run = try await guest.command("homegate/Main House/$actionsets/Good Morning/$run/guest")
            #expect(run.isOK, "an action set that does not touch the failing device: \(run.serialized)")
            #expect(try await guest.retained("\(Self.counter)/Switch/On") == "false")

            await gateway.driver.setFailureRate(0, "kitchen-switch")
            #expect(try await guest.command("\(Self.counter)/Switch/On/set/guest", "true").isOK)
            #expect(try await guest.retained("\(Self.counter)/Switch/On") == "true")
            await guest.disconnect()
        }
    }

    @Test(
        "a device that stops answering: commands time out; once its driver reports it gone, $reachable is false and commands fail at once"
    )
    func deviceStopsAnswering() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            try await guest.client.subscribe(to: ["\(Self.lamp)/$reachable"])
            _ = try await guest.inbox.next { $0.topic == "\(Self.lamp)/$reachable" && $0.payloadString == "true" }

            // A device that hangs
            await gateway.driver.setWriteDelay(.seconds(3600), "living-lamp")
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").code == "operationTimedOut")

            // Its driver gives up on it: the retained topic says so and commands fail without waiting
            await gateway.driver.setReachable(false, "living-lamp")
            _ = try await guest.inbox.next { $0.topic == "\(Self.lamp)/$reachable" && $0.payloadString == "false" }
            let started = ContinuousClock.now
            let refused = try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true")
            #expect(refused.code == "accessoryNotReachable")
            #expect(ContinuousClock.now - started < .seconds(1))
            #expect(try await guest.command("\(Self.counter)/Switch/On/set/guest", "true").isOK)
            let layout = try JSON.parse(try #require(try await guest.retained("homegate/Main House/$layout")))
            guard case .array(let accessories) = layout["accessories"] else { throw TimedOut("no accessories") }
            #expect(accessories.first { $0["name"] == .string("Floor Lamp") }?["reachable"] == .bool(false))

            // And when it is back, so is the topic and the service
            await gateway.driver.setWriteDelay(.zero, "living-lamp")
            await gateway.driver.setReachable(true, "living-lamp")
            _ = try await guest.inbox.next { $0.topic == "\(Self.lamp)/$reachable" && $0.payloadString == "true" }
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").isOK)
            await guest.disconnect()
        }
    }
}
