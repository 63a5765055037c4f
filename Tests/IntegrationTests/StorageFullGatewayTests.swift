import Broker
import Foundation
import Gateway
import HomeModel
import JSON
import TestSupport
import Testing

/// The gateway on a full disk (SQLite's page cap stands in for a full tmpfs): layout changes are
/// refused with `storageFull` and change nothing, what needs no disk goes on working, and everything
/// works again once there is room.
@Suite("Gateway on a full disk", .timeLimit(.minutes(5)))
struct StorageFullGatewayTests {
    @Test("a full disk refuses changes with storageFull, keeps serving reads, and recovers when space returns")
    func fullDisk() async throws {
        try await withGateway { gateway in
            try await withAccount("owner", to: gateway.broker) { owner in
                let layoutTopic = "homegate/Main House/$layout"
                let layoutBefore = try await owner.retained(layoutTopic)
                try gateway.database.limitSize(toPages: try gateway.database.pageCount())

                // A layout change that needs room is refused with storageFull (the first or a later one:
                // the last page may still have space for a few rows)
                var refused: JSON?
                var added = 0
                for index in 0..<400 where refused == nil {
                    let name = "Room \(index) " + String(repeating: "x", count: 50)
                    let answer = try await owner.request("addRoom", #"{"home":"Main House","name":"\#(name)"}"#)
                    if answer.isOK { added += 1 } else { refused = answer }
                }
                #expect(refused?.code == "storageFull", "\(refused?.serialized ?? "never refused")")
                #expect(refused?["message"]?.stringValue?.contains("storage is full") == true)
                try await gateway.waitUntilPublished()
                let rooms = try await gateway.manager.home("Main House", account: "owner").rooms
                #expect(rooms.count == 7 + added, "nothing of the refused change is in the model")
                if added == 0 { #expect(try await owner.retained(layoutTopic) == layoutBefore) }

                // What needs no disk still works: the home list, a fresh read from a device, identify
                #expect(try await owner.request("homes").isOK)
                let read = try await owner.request("read", #"{"home":"Main House","accessory":"Floor Lamp"}"#)
                #expect(read.isOK, "\(read.serialized)")
                #expect(try await owner.command("homegate/Main House/Living Room/Floor Lamp/$identify/owner").isOK)

                // When space returns, the same kind of change succeeds and is published
                try gateway.database.limitSize(toPages: nil)
                #expect(try await owner.request("addRoom", #"{"home":"Main House","name":"Attic"}"#).isOK)
                try await gateway.waitUntilPublished()
                #expect(try await owner.retained(layoutTopic)?.contains("Attic") == true)
            }
        }
    }
}
