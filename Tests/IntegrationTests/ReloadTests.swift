import AsyncMailbox
import Broker
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import Synchronization
import TestSupport
import Testing
import VirtualDevices

/// A full reload (after every connect) takes one snapshot of the model; changes committed while it
/// publishes must still reach the broker, and those the snapshot holds must not be applied twice.
@Suite(.timeLimit(.minutes(3)))
struct ReloadTests {
    @Test func aChangeCommittedWhileTheHomeIsPublishedReachesTheBroker() async throws {
        try await withDemoPublisher { broker, manager, publisher, topics in
            // The versions of the changes the publisher has taken in, to know one came during the reload.
            let (taken, takenContinuation) = AsyncStream<UInt64>.makeStream()
            let following = Task {
                await publisher.follow(await manager.changes()) { takenContinuation.yield($0.version) }
            }
            defer { following.cancel() }
            /// Writes the lamp's brightness and waits until the model holds it; returns the model's version.
            @Sendable func setBrightness(_ value: Int) async throws -> UInt64 {
                let request = ActionRequest(
                    CharacteristicReference(
                        accessory: "Floor Lamp", service: "Lightbulb", characteristic: .brightness),
                    .int(value))
                try await manager.writeValues([request], home: "Main House", account: "owner")
                return try await eventuallyValue("the model's brightness \(value)") {
                    let state = await manager.state()
                    let lamp = state.homes.first { $0.name == "Main House" }.flatMap {
                        try? $0.accessory(named: "Floor Lamp")
                    }
                    return lamp?.services.first?.characteristic(.brightness)?.value == .int(value)
                        ? state.version : nil
                }
            }
            // One change before the snapshot (the snapshot holds it) and one after it (only the
            // change does), both taken in by the publisher while the reload runs.
            await publisher.synchronize {
                let snapshot = await HomeSnapshot(of: manager)
                do {
                    let later = try await setBrightness(77)
                    for await version in taken where version >= later { break }
                } catch {
                    Issue.record("setting the brightness: \(error)")
                }
                return snapshot
            }
            try await expectBrokerHolds(await HomeSnapshot(of: manager), topics: topics, broker, containing: "77")
        }
    }

    @Test("a reachability change that comes while a late $layout reads the model is rendered too")
    func aFlapDuringALateLayoutIsNotLost() async throws {
        try await withBroker { broker in
            let demo = try DemoHome.load(contentsOf: demoHomeFile)
            let manager = try HomeManager(database: .inMemory())
            let driver = VirtualDriver(devices: demo.devices, tick: .seconds(86_400))
            try await manager.attach(driver)
            try await demo.seed(manager)
            let topics = Topics()
            var logger = Logger(label: "test.late-layout")
            logger.logLevel = .critical
            let client = try makeClient(broker, name: "gateway")
            let home = try await manager.home("Main House", account: "owner")
            let lamp = try home.accessory(named: "Floor Lamp").id
            /// The model once the lamp's driver says it is `reachable`.
            @Sendable func model(reachable: Bool) async throws -> HomeSnapshot {
                await driver.setReachable(reachable, lamp)
                return try await eventuallyValue("the lamp \(reachable ? "back" : "gone")") {
                    let snapshot = await HomeSnapshot(of: manager)
                    let now = snapshot.homes.first { $0.id == home.id }?.accessory(lamp)?.isReachable
                    return now == reachable ? snapshot : nil
                }
            }
            let gone = try await model(reachable: false)
            let back = try await model(reachable: true)
            let publisherBox = Mutex<RetainedPublisher?>(nil)
            let lateReads = Mutex(0)
            try await withConnected(client) { _ in
                // The first late $layout reads the model with the lamp gone; while it reads, the lamp
                // comes back, a change the publisher takes in before the read ends.
                let publisher = RetainedPublisher(
                    client: client, topics: topics, logger: logger, layoutDelay: .milliseconds(20),
                    layoutState: {
                        guard
                            lateReads.withLock({
                                $0 += 1; return $0
                            }) == 1
                        else { return back }
                        let publisher = publisherBox.withLock { $0 }!
                        await publisher.update(
                            .accessoryDidUpdateReachability(home: home.id, accessory: lamp, isReachable: true), back)
                        return gone
                    }
                ) { [] }
                publisherBox.withLock { $0 = publisher }
                await publisher.synchronize { back }
                await publisher.update(
                    .accessoryDidUpdateReachability(home: home.id, accessory: lamp, isReachable: false), gone)
                let layout = "\(topics.base)/Main House/$layout"
                try await eventually("$layout showing the lamp reachable again, after two late readings") {
                    let held = try await retainedPayloads(under: layout, at: broker)
                    let lampReachable = held[layout].map { String(decoding: $0, as: UTF8.self) }?.contains(
                        #""name":"Floor Lamp","room":"Living Room","category":"lightbulb","manufacturer":"Lumen","model":"Hue A19","reachable":true"#
                    )
                    return lateReads.withLock { $0 } >= 2 && lampReachable == true
                }
            }
        }
    }

    /// Waits until the broker's retained payloads under the base topic are the full view of
    /// `snapshot` (and the lamp's brightness topic holds `value`), or throws with the difference.
    private func expectBrokerHolds(
        _ snapshot: HomeSnapshot, topics: Topics, _ broker: MosquittoBroker, containing value: String
    ) async throws {
        let full = RetainedView(homes: snapshot.homes, discovered: snapshot.discovered, topics: topics)
        let brightness = try #require(full.topics.first { $0.hasSuffix("/Floor Lamp/Lightbulb/Brightness") })
        #expect(full[brightness].map { String(decoding: $0, as: UTF8.self) } == value)
        var difference: [String] = []
        try await eventually("the broker to match the model (it differs at \(difference.prefix(10)))") {
            let held = try await retainedPayloads(under: "\(topics.base)/#", at: broker)
            difference = Set(held.keys).union(full.topics).filter { held[$0] != full[$0] }.sorted()
            return difference.isEmpty
        }
    }

    /// The retained payloads under `filter`: a new subscriber's retained copies, up to a marker
    /// published after subscribing.
    private func retainedPayloads(under filter: String, at broker: MosquittoBroker) async throws -> [String: [UInt8]] {
        let reader = try makeClient(broker, name: "reader")
        return try await withConnected(reader) { inbox in
            let marker = "reader-marker/\(UUID().uuidString)"
            _ = try await reader.subscribe(to: [filter, marker], qos: .atLeastOnce)
            try await reader.publish(marker, payload: [1], qos: .atLeastOnce)
            var held: [String: [UInt8]] = [:]
            while true {
                let message = try await inbox.next()
                if message.topic == marker { return held }
                if message.retain && !message.payload.isEmpty { held[message.topic] = message.payload }
            }
        }
    }
}

/// The demo home in a manager whose simulated time stands still (no value drifts while the broker is
/// compared with the model), and a publisher of it connected to a broker of its own.
func withDemoPublisher(
    _ body: (MosquittoBroker, HomeManager, RetainedPublisher, Topics) async throws -> Void
) async throws {
    try await withBroker { broker in
        let demo = try DemoHome.load(contentsOf: demoHomeFile)
        let manager = try HomeManager(database: .inMemory())
        try await manager.attach(VirtualDriver(devices: demo.devices, tick: .seconds(86_400)))
        try await demo.seed(manager)
        let topics = Topics()
        var logger = Logger(label: "test.reload")
        logger.logLevel = .critical
        let client = try makeClient(broker, name: "gateway")
        try await withConnected(client) { _ in
            let publisher = RetainedPublisher(
                client: client, topics: topics, logger: logger, layoutState: { await HomeSnapshot(of: manager) }
            ) { [] }
            try await body(broker, manager, publisher, topics)
        }
    }
}
