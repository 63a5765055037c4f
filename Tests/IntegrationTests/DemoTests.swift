import Broker
import Foundation
import Gateway
import HTTPTypes
import HummingbirdTesting
import JSON
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `homegate demo` as a whole: its broker enforces the access rules generated from the demo home.
@Suite("homegate demo with access rules", .timeLimit(.minutes(5)))
struct DemoTests {
    /// Runs `homegate demo` on a free port until `body` is done, then stops it gracefully.
    private func withDemo(_ body: (_ port: Int) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let (demo, port) = try await startDemoOnAFreePort(directory: directory)
            try await stopGracefully(demo) { try await body(port) }
        }
    }

    /// Starts the demo on a free port; another process may take the port between its choice and
    /// mosquitto's bind, so a start that failed with "Address already in use" is tried again on
    /// another (as `MosquittoBroker.start` does).
    private func startDemoOnAFreePort(directory: String, asTerminalGroup: Bool = false) async throws -> (
        ChildProcess, Int
    ) {
        var attempt = 1
        while true {
            let port = try LoopbackPort.free()
            do {
                return (try await startDemo(directory: directory, port: port, asTerminalGroup: asTerminalGroup), port)
            } catch let error as TimedOut where attempt < 5 && error.description.contains("Address already in use") {
                attempt += 1
            }
        }
    }

    /// Starts `homegate demo` on `port` with its files in `directory`, and returns once it printed
    /// its instructions (its broker listens) and its gateway says `online`. Each start logs to a
    /// file of its own (`demo-<n>.log`), so an earlier run's words are not taken for this one's.
    /// `asTerminalGroup`: the demo leads a process group of its own, as a shell's foreground job.
    private func startDemo(directory: String, port: Int, asTerminalGroup: Bool = false) async throws -> ChildProcess {
        let runs = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasPrefix("demo-") }
        let log = "\(directory)/demo-\(runs?.count ?? 0).log"
        let demo = try ChildProcess(
            try homegateExecutable(),
            [
                "demo", "--port", "\(port)", "--web-port", "0", "--data", directory, "--home", demoHomeFile.path,
                "--log-level",
                "warning",
            ],
            outputFile: log, ownProcessGroup: asTerminalGroup)
        do {
            let ready = "mosquitto listens on 127.0.0.1:\(port) "
            func output() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            try await eventually("the demo starting its broker on \(port): \(output())") {
                guard demo.isRunning else { throw TimedOut("the demo exited: \(output())") }
                return output().contains(ready)
            }
            let watcher = try await Account.connect("owner", port: port)
            try await watcher.client.subscribe(to: ["homegate/$status"])
            _ = try await watcher.inbox.next("online") { $0.payloadString == "online" }
            await watcher.disconnect()
            return demo
        } catch {
            demo.send(SIGTERM)
            await demo.waitForExit()
            throw error
        }
    }

    @Test(
        "the demo's Zigbee lamps sit in rooms of Main House; guest dims one; only the gateway may command zigbee2mqtt")
    func zigbeeLamps() async throws {
        try await withDemo { port in
            let lamp = "homegate/Main House/Kitchen/Kitchen Ceiling/Light"
            let guest = try await Account.connect("guest", port: port)
            #expect(try await guest.retained("\(lamp)/Brightness", becomes: "20", within: .seconds(60)))
            #expect(try await guest.command("\(lamp)/Brightness/set/guest", "60").isOK)
            #expect(try await guest.retained("\(lamp)/Brightness", becomes: "60"))
            let zigbee = try await Account.connect("zigbee2mqtt", port: port)
            #expect(try await zigbee.retained("zigbee2mqtt/bulb")?.contains(#""brightness":152"#) == true)
            // The owner of the home may not go around it to zigbee2mqtt; nor may a stranger read it.
            let owner = try await Account.connect("owner", port: port)
            await #expect(throws: MQTTError.self) {
                try await owner.client.publish("zigbee2mqtt/bulb/set", #"{"state":"OFF"}"#, qos: .atLeastOnce)
            }
            let stranger = try await Account.connect("stranger", port: port)
            #expect(try await stranger.retainedMessages(under: "zigbee2mqtt/#").isEmpty)
            #expect(try await zigbee.retained("zigbee2mqtt/bulb")?.contains(#""state":"ON""#) == true)
            for account in [guest, zigbee, owner, stranger] { await account.disconnect() }
        }
    }

    @Test(
        "Ctrl-C (SIGINT to the demo's whole process group) stops the gateway first: offline is said, then the broker stops"
    )
    func controlC() async throws {
        try await withTemporaryDirectory { directory in
            let (demo, port) = try await startDemoOnAFreePort(directory: directory, asTerminalGroup: true)
            let watcher = try await Account.connect("owner", port: port)
            try await watcher.client.subscribe(to: ["homegate/$status"])
            _ = try await watcher.inbox.next("online") { $0.payloadString == "online" }
            // The broker is out of the demo's group, so the signal below does not reach it (in the
            // group it died with the gateway, which then logged reconnects and no goodbye, or not,
            // as the race went)
            let brokerPID = try #require(
                (try? String(contentsOfFile: "\(directory)/broker/mosquitto.pid", encoding: .utf8))
                    .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            #expect(getpgid(brokerPID) != demo.pid)
            // As a terminal does: the signal goes to every process of the foreground group
            kill(-demo.pid, SIGINT)
            _ = try await watcher.inbox.next("offline, said while the broker still runs") {
                $0.payloadString == "offline"
            }
            let status = await demo.waitForExit()
            #expect(status == 0, "\(describe(status)) after Ctrl-C; its output:\n\(tail(of: demo))")
            #expect(!tail(of: demo).contains("could not publish offline"), "\(tail(of: demo))")
            #expect(
                !LoopbackPort.isListening(port), "the demo's broker stopped with it (its pid file: \(directory)/broker)"
            )
        }
    }

    @Test(
        "the demo prints its web page's address and its HomeKit setup code; guest logs in there; only owner sees the code"
    )
    func webPage() async throws {
        try await withTemporaryDirectory { directory in
            let (demo, _) = try await startDemoOnAFreePort(directory: directory)
            defer { demo.send(SIGTERM) }
            var webPort: Int?
            var setupCode: String?
            try await eventually("the web page's address and the HomeKit bridge's setup code") {
                // The last start's log: a start that found its port taken was retried with the next.
                let runs = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter {
                    $0.hasPrefix("demo-")
                }
                let log =
                    (try? String(contentsOfFile: "\(directory)/demo-\((runs?.count ?? 1) - 1).log", encoding: .utf8))
                    ?? ""
                webPort = log.firstMatch(of: /the web page is on http:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) }
                setupCode = log.firstMatch(of: /HomeKit bridge on 127\.0\.0\.1:\d+, setup code (\d{3}-\d{2}-\d{3})/).map
                {
                    String($0.1)
                }
                return webPort != nil && setupCode != nil
            }
            let port = try #require(webPort)
            let code = try #require(setupCode)
            try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                let guest = try await client.logIn("guest", port: port)
                let homes = try await client.get("/", headers: [.cookie: "homegate_session=\(guest.cookie)"])
                #expect(homes.text.contains("Main House") && !homes.text.contains("Lake Cabin"))
                // The bridge's setup code and QR code are for the home's administrator alone
                let guestHome = try await client.get(
                    "/home?name=Main%20House", headers: [.cookie: "homegate_session=\(guest.cookie)"])
                #expect(!guestHome.text.contains("Apple Home") && !guestHome.text.contains(code))
                let owner = try await client.logIn("owner", port: port)
                let ownerHome = try await client.get(
                    "/home?name=Main%20House", headers: [.cookie: "homegate_session=\(owner.cookie)"])
                #expect(ownerHome.text.contains("Apple Home") && ownerHome.text.contains(code))
                #expect(ownerHome.text.contains("aria-label=\"HomeKit setup code\""), "the QR code")
            }
            demo.send(SIGTERM)
            let status = await demo.waitForExit()
            #expect(status == 0, "\(describe(status)) after SIGTERM; its output:\n\(tail(of: demo))")
        }
    }

    @Test("The demo's virtual devices keep their values across a SIGTERM and a SIGKILL of homegate demo")
    func valuesSurviveRestarts() async throws {
        let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb"
        let read = #"{"home":"Main House","accessory":"Floor Lamp","characteristic":"Brightness"}"#
        try await withTemporaryDirectory { directory in
            // The first start picks the port; the restarts take the same one
            var (demo, port) = try await startDemoOnAFreePort(directory: directory)
            var expected = "100"
            for (index, (value, signal)) in [("37", SIGTERM), ("42", SIGKILL)].enumerated() {
                // Given the demo, started again on the same folder, with the value of the run before
                if index > 0 { demo = try await startDemo(directory: directory, port: port) }
                let guest = try await Account.connect("guest", port: port)
                #expect(readValue(try await guest.request("read", read)) == .integer(Int(expected)!))
                #expect(try await guest.retained("\(lamp)/Brightness", becomes: expected))
                // When guest sets the brightness and the demo is stopped (SIGKILL leaves its broker
                // running; the next start stops it)
                #expect(try await guest.command("\(lamp)/Brightness/set/guest", value).isOK)
                await guest.disconnect()
                if signal == SIGKILL {
                    // Device values are written in groups (a kill may lose the last 100 ms of them); a
                    // layout change is on disk before its answer and carries the values waiting.
                    let owner = try await Account.connect("owner", port: port)
                    #expect(try await owner.request("addRoom", #"{"home":"Main House","name":"Pantry"}"#).isOK)
                    await owner.disconnect()
                }
                demo.send(signal)
                await demo.waitForExit()
                expected = value
            }
            // Then the lamp's device and its retained topic still say 42
            demo = try await startDemo(directory: directory, port: port)
            let guest = try await Account.connect("guest", port: port)
            #expect(readValue(try await guest.request("read", read)) == .integer(42))
            #expect(try await guest.retained("\(lamp)/Brightness", becomes: "42"))
            await guest.disconnect()
            demo.send(SIGTERM)
            #expect(await demo.waitForExit() == 0)
        }
    }

    @Test("a member added while the demo runs can use the home at once: the demo renews its broker's rules")
    func addedMemberGetsAccess() async throws {
        try await withDemo { port in
            let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On"
            let stranger = try await Account.connect("stranger", port: port)
            #expect(try await stranger.retained(lamp) == nil, "stranger reads nothing of Main House yet")
            let refused = await #expect(throws: MQTTError.self) {
                try await stranger.client.publish("\(lamp)/set/stranger", "true", qos: .atLeastOnce)
            }
            #expect(refused?.code == .publishRefused)

            // When owner makes stranger a guest of Main House
            let owner = try await Account.connect("owner", port: port)
            #expect(
                try await owner.request("addUser", #"{"home":"Main House","account":"stranger","name":"Sam"}"#).isOK)

            // Then stranger reads the home and commands it, once mosquitto has read the new rules
            try await eventually("stranger reading Main House") { try await stranger.retained(lamp) != nil }
            #expect(try await stranger.command("\(lamp)/set/stranger", "true").isOK)
            await stranger.disconnect()
            await owner.disconnect()
        }
    }

    /// The one value a `read` request's answer carries.
    private func readValue(_ answer: JSON) -> JSON? {
        guard case .array(let reads) = answer["data"], reads.count == 1 else { return nil }
        return reads[0]["value"]
    }

    @Test("Home Assistant, behind the generated rules, reads the discovery configs and drives a light with them")
    func homeAssistant() async throws {
        try await withDemo { port in
            // (the configs may still be coming in: read them again until all are there, or it gives up
            // and the count below tells)
            var ha = try await HomeAssistantClient.connect(port: port)
            _ = try? await eventually("every discovery config", timeout: .seconds(10)) {
                guard ha.configs.count < 77 else { return true }
                await ha.disconnect()
                ha = try await HomeAssistantClient.connect(port: port)
                return ha.configs.count >= 77
            }
            #expect(
                ha.configs.count == 77,
                "41 entities and 21 identify buttons of the accessories (13 and 4 of them zigbee2mqtt's), 3 scenes, 12 press triggers of the zigfred's 4 buttons"
            )
            try await ha.send("living-lamp_main", #"{"state":"ON","brightness":255}"#)
            try await ha.waitForState("living-lamp_main", template: nil) {
                $0?["state"] == .string("ON") && $0?["brightness"] == .integer(255)
            }
            await ha.disconnect()

            // Other accounts see no discovery configs.
            let guest = try await Account.connect("guest", port: port)
            #expect(try await guest.retainedMessages(under: "homeassistant/#").isEmpty)
            await guest.disconnect()
        }
    }

    @Test("stranger reads no home; guest reads only its home; guest cannot command as owner")
    func accessRules() async throws {
        try await withDemo { port in
            let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb"

            // stranger subscribes to everything and sees only the gateway's status
            let stranger = try await Account.connect("stranger", port: port)
            try await stranger.client.subscribe(to: ["homegate/#"])
            let guest = try await Account.connect("guest", port: port)
            try await guest.client.subscribe(to: ["homegate/#"])
            _ = try await guest.inbox.next("guest's view of its home") { $0.topic == "\(lamp)/On" }
            // the marker: owner's retained-free publish that both may read
            let owner = try await Account.connect("owner", port: port)
            try await owner.client.subscribe(to: ["\(lamp)/Brightness"])
            _ = try await owner.inbox.next { $0.topic == "\(lamp)/Brightness" }

            // When guest publishes a command in owner's name (the broker must drop it), and then one in
            // its own name
            try? await guest.client.publish("\(lamp)/Brightness/set/owner", "10", qos: .atLeastOnce)
            #expect(try await guest.command("\(lamp)/Brightness/set/guest", "20").isOK)

            // Then only guest's own command took effect: owner saw 20 and never 10
            let change = try await owner.inbox.next("guest's change") { $0.topic == "\(lamp)/Brightness" }
            #expect(change.payloadString == "20")
            #expect(await owner.inbox.all.filter { $0.payloadString == "10" }.isEmpty)

            // stranger received nothing of the homes, only $status
            try await stranger.client.publish("homegate/$request/stranger/homes", "{}", qos: .atLeastOnce)
            try await stranger.client.subscribe(to: ["homegate/$response/stranger"])
            let answer = try await stranger.inbox.next("stranger's own answer") {
                $0.topic == "homegate/$response/stranger"
            }
            #expect(try JSON.parse(answer.payload)["data"] == .array([]))
            let seen = Set(await stranger.inbox.all.map(\.topic))
            #expect(seen.isSubset(of: ["homegate/$status", "homegate/$response/stranger"]), "\(seen.sorted())")

            // and guest saw Main House, nothing of Lake Cabin
            #expect(await guest.inbox.all.contains { $0.topic.hasPrefix("homegate/Lake Cabin/") } == false)

            await stranger.disconnect()
            await guest.disconnect()
            await owner.disconnect()
        }
    }
}
