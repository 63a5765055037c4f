import Broker
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import TestSupport
import Testing
import VirtualDevices

/// A reload of the model after the publisher synchronized (`homeManagerDidUpdateHomes`: a batch or a
/// save that failed and was rolled back) brings the broker in step with the model as it is, and
/// leaves alone what the new view keeps: a subscriber sees no topic cleared that is then sent again.
@Suite(.timeLimit(.minutes(5)))
struct ReloadAfterSyncTests {
    @Test func aReloadAfterTheSyncBringsTheBrokerInStepWithoutClearingKeptTopics() async throws {
        try await withDemoPublisher { broker, manager, publisher, topics in
            await publisher.synchronize { await HomeSnapshot(of: manager) }
            // The model changes without the publisher hearing of it (as a rolled-back batch): two
            // accessories of one room swap their names, a room is renamed
            for edit: HomeEdit in [
                .renameAccessory(home: "Main House", accessory: "Counter Lights", name: "Tmp"),
                .renameAccessory(home: "Main House", accessory: "Coffee Maker", name: "Counter Lights"),
                .renameAccessory(home: "Main House", accessory: "Tmp", name: "Coffee Maker"),
                .renameRoom(home: "Main House", room: "Bedroom", name: "Sleeping Room"),
                .removeAccessory(home: "Main House", accessory: "Ceiling Fan"),
                .removeHome(home: "Lake Cabin"),
            ] {
                _ = try await manager.edit(edit, account: "owner")
            }
            // A watcher of every message under the base topic from now on
            let watcher = try makeClient(broker, name: "watcher")
            try await withConnected(watcher) { inbox in
                let marker = "watch-marker/\(UUID().uuidString)"
                _ = try await watcher.subscribe(to: ["\(topics.base)/#", marker], qos: .atLeastOnce)
                try await watcher.publish(marker, payload: [1], qos: .atLeastOnce)
                while try await inbox.next().topic != marker {}
                let after = await HomeSnapshot(of: manager)
                await publisher.update(.homeManagerDidUpdateHomes, after)
                try await watcher.publish(marker, payload: [2], qos: .atLeastOnce)
                var seen: [(topic: String, payload: [UInt8])] = []
                while true {
                    let message = try await inbox.next()
                    if message.topic == marker { break }
                    seen.append((message.topic, message.payload))
                }
                let full = RetainedView(homes: after.homes, discovered: after.discovered, topics: topics)
                let clearedButKept = seen.filter { $0.payload.isEmpty && full[$0.topic] != nil }.map(\.topic)
                #expect(
                    clearedButKept.isEmpty, "topics the new view keeps were cleared on the way: \(clearedButKept)")
                // And the broker holds exactly the new view
                let reader = try makeClient(broker, name: "reader")
                let held: [String: [UInt8]] = try await withConnected(reader) { readerInbox in
                    let end = "reader-marker/\(UUID().uuidString)"
                    _ = try await reader.subscribe(to: ["\(topics.base)/#", end], qos: .atLeastOnce)
                    try await reader.publish(end, payload: [1], qos: .atLeastOnce)
                    var held: [String: [UInt8]] = [:]
                    while true {
                        let message = try await readerInbox.next()
                        if message.topic == end { return held }
                        if message.retain && !message.payload.isEmpty { held[message.topic] = message.payload }
                    }
                }
                let difference = Set(held.keys).union(full.topics).filter { held[$0] != full[$0] }.sorted()
                #expect(difference.isEmpty, "the broker differs from the new view at \(difference)")
            }
        }
    }
}
