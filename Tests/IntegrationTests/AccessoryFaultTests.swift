import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing
import VirtualDevices

/// Devices that answer slowly, fail their writes or stop answering (docs/reliability.md, scenario 3).
/// The silent-device test gives a device 2 s to answer, the slow-device test 15 s (so that a stall of
/// the loaded machine cannot pass for the timeout), the others the fixture's 10 s; a silent device is
/// tried again every second. No test bounds how fast an answer comes: the machine may stall for
/// seconds under a full test run.
@Suite("Accessory faults on a real broker", .timeLimit(.minutes(3)))
struct AccessoryFaultTests {
    static let lamp = "homegate/Main House/Living Room/Floor Lamp"
    static let counter = "homegate/Main House/Kitchen/Counter Lights"
    static let thermostat = "homegate/Main House/Hallway/Thermostat"
    static let lampReachable = "\(lamp)/$reachable"

    /// Waits until the model shows accessory `id` reachable.
    static func waitUntilReachable(
        _ id: AccessoryID, in gateway: RunningGateway, within timeout: Duration = .seconds(60)
    ) async throws {
        try await eventually("\(id) reachable in the model", timeout: timeout) {
            await gateway.manager.allHomes().flatMap(\.accessories).first { $0.id == id }?.isReachable == true
        }
    }

    @Test(
        "a device slower than the timeout: operationTimedOut, no value published, others served meanwhile, shown unreachable until it answers"
    )
    func slowDevice() async throws {
        let timeout = Duration.seconds(15)
        try await withGateway(driverTimeout: timeout) { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            try await guest.client.subscribe(to: [Self.lampReachable])
            try await guest.receive("true", on: Self.lampReachable)
            await gateway.driver.setWriteDelay(.seconds(30), "living-lamp")
            let before = try await guest.retained("\(Self.lamp)/Lightbulb/On")

            // When guest sends five commands to the slow lamp, and then commands to two other accessories
            // (on one connection: the gateway receives them in this order)
            let started = ContinuousClock.now
            let slow = (0..<5).map { _ in Array(UUID().uuidString.utf8) }
            for (index, correlation) in slow.enumerated() {
                try await guest.client.publish(
                    "\(Self.lamp)/Lightbulb/Brightness/set/guest", payload: Array("\(10 + index)".utf8),
                    qos: .atLeastOnce,
                    properties: MQTTProperties(responseTopic: guest.answers, correlationData: correlation))
            }
            @Sendable func isSlowAnswer(_ message: MQTTMessage) -> Bool {
                message.topic == guest.answers && slow.contains { $0 == message.properties.correlationData }
            }
            var slowAnsweredFirst: [Int] = []
            for (topic, payload) in [
                ("\(Self.counter)/Switch/On/set/guest", "true"),
                ("\(Self.thermostat)/Thermostat/TargetTemperature/set/guest", "22"),
                ("\(Self.counter)/Switch/On/set/guest", "false"),
            ] {
                let answer = try await guest.command(topic, payload)
                #expect(answer.isOK, "\(answer.serialized)")
                // Answers reach guest in the order the gateway sent them
                slowAnsweredFirst.append(await guest.inbox.all.count(where: isSlowAnswer))
            }

            // Then the others were answered while the slow ones still waited for the lamp (were
            // commands handled one after another, they would come after the slow ones' timeouts; only
            // a stall of the whole machine longer than the 15 s timeout could reorder them), and every
            // slow one timed out, not before the timeout
            #expect(slowAnsweredFirst == [0, 0, 0], "other accessories waited for the slow lamp")
            for correlation in slow {
                let message = try await guest.inbox.next(within: .seconds(60), "answer to a slow command") {
                    $0.topic == guest.answers && $0.properties.correlationData == correlation
                }
                let answer = try JSON.parse(message.payload)
                #expect(answer.code == "operationTimedOut", "\(answer.serialized)")
            }
            let waited = ContinuousClock.now - started
            #expect(waited >= timeout, "the slow commands were answered after \(waited), before the timeout")
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/On") == before)
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/Brightness") == "100")

            // The timeouts showed it unreachable, and the probe (a read, which the slow writes do not
            // hold up) shows it reachable again
            try await guest.receive("false", on: Self.lampReachable)
            try await guest.receive("true", on: Self.lampReachable)
            // Every timeout happened before its answer came, so none can mark it unreachable after
            // this: wait until the model, which the next command consults, shows it reachable (a
            // timeout that came after the first probe marks it again, and a later probe undoes that)
            try await Self.waitUntilReachable("living-lamp", in: gateway)

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
            #expect(try await guest.retained("\(Self.counter)/Switch/On", becomes: "true"))
            await guest.disconnect()
        }
    }

    @Test(
        "a device that stops answering: the command times out, $reachable goes false, later commands fail at once; when it answers again it is reachable and served"
    )
    func deviceStopsAnswering() async throws {
        try await withGateway(driverTimeout: .seconds(2)) { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            try await guest.client.subscribe(to: [Self.lampReachable])
            try await guest.receive("true", on: Self.lampReachable)

            // A device that goes silent while its driver still calls it reachable
            await gateway.driver.setAnswering(false, "living-lamp")
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").code == "operationTimedOut")

            // The gateway noticed: the retained topic and the layout say so, commands fail without waiting
            try await guest.receive("false", on: Self.lampReachable)
            // (a command sent to the silent device would have timed out: accessoryNotReachable is the
            // gateway's refusal before asking it)
            let refused = try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true")
            #expect(refused.code == "accessoryNotReachable")
            #expect(try await guest.command("\(Self.counter)/Switch/On/set/guest", "true").isOK)
            // ($layout follows reachability a moment after $reachable: flaps are gathered.)
            _ = try await guest.retainedJSON("homegate/Main House/$layout") { layout in
                guard case .array(let accessories) = layout["accessories"] else { return false }
                return accessories.first { $0["name"] == .string("Floor Lamp") }?["reachable"] == .bool(false)
            }

            // Probes keep failing while it is silent: it stays unreachable over several probe intervals
            let wronglyBack: Void? = try? await guest.receive("true", on: Self.lampReachable, within: .seconds(4))
            #expect(wronglyBack == nil, "a silent device was shown reachable again")

            // When it answers again, a probe finds it: the topic and the service are back
            await gateway.driver.setAnswering(true, "living-lamp")
            try await guest.receive("true", on: Self.lampReachable)
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").isOK)
            #expect(try await guest.retained("\(Self.lamp)/Lightbulb/On", becomes: "true"))
            await guest.disconnect()
        }
    }

    @Test(
        "a driver that reports a device gone: $reachable false at once, commands fail without waiting, back when reported"
    )
    func driverReportsDeviceGone() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            try await guest.client.subscribe(to: [Self.lampReachable])
            try await guest.receive("true", on: Self.lampReachable)

            await gateway.driver.setReachable(false, "living-lamp")
            try await guest.receive("false", on: Self.lampReachable)
            // Refused, not timed out: nobody waited for the device
            #expect(
                try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").code == "accessoryNotReachable")

            await gateway.driver.setReachable(true, "living-lamp")
            try await guest.receive("true", on: Self.lampReachable)
            #expect(try await guest.command("\(Self.lamp)/Lightbulb/On/set/guest", "true").isOK)
            await guest.disconnect()
        }
    }
}
