import AsyncMailbox
import Foundation
import HomeModel
import JSON
import MQTT
import Testing

@testable import Gateway

/// A request with an `id` runs at most once within the window (issue 52): QoS 1 is "at least once",
/// and a copy resent across a bridge is a new message to the hub.
@Suite("Requests run once", .timeLimit(.minutes(5)))
struct RequestLedgerTests {
    static func request(_ operation: String, _ body: String, account: String = "owner") -> MQTTMessage {
        MQTTMessage(topic: "homegate/$request/\(account)/\(operation)", payload: Array(body.utf8))
    }

    @Test("a repeat within the window gets the first answer; after it, or with another payload, it runs again")
    func window() async {
        let ledger = RequestLedger(window: .seconds(600))
        let start = ContinuousClock.now
        let key = RequestLedger.Key(Self.request("addRoom", #"{"id":1}"#))
        let first = Handling(outcome: .succeeded, answer: nil)
        // A failure is not kept: sent again, it is tried again
        #expect(await ledger.admit(key, at: start) == nil)
        ledger.finish(key, with: Handling(outcome: .failed(code: "operationTimedOut"), answer: nil), at: start)
        #expect(ledger.kept == 0)
        #expect(await ledger.admit(key, at: start) == nil)
        ledger.finish(key, with: first, at: start)
        #expect(await ledger.admit(key, at: start + .seconds(599)) == first)
        #expect(await ledger.admit(RequestLedger.Key(Self.request("addRoom", #"{"id":2}"#)), at: start) == nil)
        // Ten minutes on, the same request is a new one
        #expect(await ledger.admit(key, at: start + .seconds(600)) == nil)
        #expect(ledger.kept == 0)
    }

    @Test("a repeat that comes while the first runs waits for the first's answer")
    func repeatWhileRunning() async {
        let ledger = RequestLedger()
        let key = RequestLedger.Key(Self.request("pairAccessory", #"{"id":"p"}"#))
        #expect(await ledger.admit(key) == nil)
        let repeated = Task { await ledger.admit(key) }
        let answer = Handling(outcome: .failed(code: "operationTimedOut"), answer: nil)
        // The repeat is waiting once the ledger holds its continuation; finishing answers it
        while !(await ledger.isWaited(key)) { await Task.yield() }
        ledger.finish(key, with: answer)
        #expect(await repeated.value == answer)
    }

    @Test("no more than its capacity is kept: the oldest answers are forgotten first")
    func capacity() async {
        let ledger = RequestLedger(capacity: 3)
        let keys = (1...5).map { RequestLedger.Key(Self.request("addRoom", #"{"id":\#($0)}"#)) }
        let done = Handling(outcome: .succeeded, answer: nil)
        for key in keys {
            #expect(await ledger.admit(key) == nil)
            ledger.finish(key, with: done)
        }
        #expect(ledger.kept == 3)
        #expect(await ledger.admit(keys[0]) == nil, "the oldest was forgotten, so it runs")
        #expect(await ledger.admit(keys[4]) == done)
    }

    @Test("no more bytes than its budget are kept: a big request pushes out the oldest")
    func byteBudget() async {
        let ledger = RequestLedger(byteBudget: 960)
        let small = RequestLedger.Key(Self.request("addRoom", #"{"id":1}"#))
        let padding = String(repeating: "x", count: 900)
        let big = RequestLedger.Key(Self.request("addRoom", #"{"id":2,"name":"\#(padding)"}"#))
        let done = Handling(outcome: .succeeded, answer: nil)
        for key in [small, big] {
            #expect(await ledger.admit(key) == nil)
            ledger.finish(key, with: done)
        }
        #expect(ledger.kept == 1)
        #expect(await ledger.admit(big) == done)
        #expect(await ledger.admit(small) == nil, "the older one was forgotten to make room")
    }

    @Test(
        "the router runs addRoom, pairing-like edits and a $run with an id once, answering each copy alike; reads run again"
    )
    func router() async throws {
        let manager = try await DemoFixture.seeded().manager
        let router = CommandRouter(manager: manager, topics: Topics(), defaultAccount: nil)
        var events = await manager.events().makeAsyncIterator()

        // addRoom twice with one id: one room, the same answer twice (not "already exists")
        let attic = Self.request("addRoom", #"{"id":7,"home":"Main House","name":"Attic"}"#)
        let first = await router.handle(attic)
        let second = await router.handle(attic)
        #expect(first.outcome == .succeeded)
        #expect(second == first)
        #expect(second.answer?.payload["id"] == .integer(7))
        let rooms = try await manager.home("Main House", account: "owner").rooms.filter { $0.name == "Attic" }
        #expect(rooms.count == 1)
        // The same body with another id is another request, refused as such
        let again = await router.handle(Self.request("addRoom", #"{"id":8,"home":"Main House","name":"Attic"}"#))
        #expect(again.outcome != .succeeded, "\(again)")
        #expect(again.answer?.payload["id"] == .integer(8))
        // A failure is not kept: the same copy again is tried again (and fails again)
        #expect(await router.handle(Self.request("addRoom", #"{"id":8,"home":"Main House","name":"Attic"}"#)) == again)
        // Without an id nothing is kept: each copy runs
        let noID = Self.request("addRoom", #"{"home":"Main House","name":"Loft"}"#)
        #expect(await router.handle(noID).outcome == .succeeded)
        #expect(await router.handle(noID).outcome != .succeeded)

        // A $run with an id runs the action set once and is answered with the id, twice alike
        let run = MQTTMessage(
            topic: "homegate/Main House/$actionsets/Good Night/$run/owner", payload: Array(#"{"id":"night-1"}"#.utf8))
        let ran = await router.handle(run)
        #expect(ran.outcome == .succeeded, "\(ran)")
        #expect(ran.answer?.payload["id"] == .string("night-1"))
        #expect(await router.handle(run) == ran)
        // Every event of the runs is on the stream before a room added after them
        _ = await router.handle(Self.request("addRoom", #"{"home":"Main House","name":"Marker"}"#))
        var executions = 0
        while let event = await events.next() {
            if case .didExecuteActionSet = event { executions += 1 }
            if case .didAddRoom(_, _, "Marker") = event { break }
        }
        #expect(executions == 1)

        // A read with the same id is read again, fresh
        let read = Self.request(
            "read", #"{"id":9,"home":"Main House","accessory":"Floor Lamp","characteristic":"On"}"#, account: "guest")
        #expect(await router.handle(read).outcome == .succeeded)
        #expect(router.requestLedger.kept == 2, "addRoom 7 and the run; not the refused addRoom 8, nor the read")
        await manager.shutdown()
    }
}
