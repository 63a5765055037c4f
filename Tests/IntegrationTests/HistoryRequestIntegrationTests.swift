import Foundation
import Gateway
import JSON
import MQTT
import TestSupport
import Testing

/// `history` over MQTT, through the gateway on a real mosquitto, with the recorder running: a value
/// changed by a command is in the history its home's members ask for, and in no one else's.
@Suite("History on a real mosquitto", .timeLimit(.minutes(3)))
struct HistoryRequestIntegrationTests {
    static let lamp = "homegate/Main House/Living Room/Floor Lamp"

    @Test(
        "a brightness set over MQTT is in the history of the owner and of a guest; a stranger and a reversed span are refused"
    )
    func historyOverMQTT() async throws {
        try await withGateway(history: true) { gateway in
            let owner = try await Account.connect("owner", to: gateway.broker)
            let guest = try await Account.connect("guest", to: gateway.broker)
            let stranger = try await Account.connect("stranger", to: gateway.broker)
            let before = Date().addingTimeInterval(-1)
            let set = try await owner.command("\(Self.lamp)/Lightbulb/Brightness/set/owner", "37")
            #expect(set.isOK, "\(set.serialized)")

            func body(from: Date, to: Date) -> String {
                #"{"home":"Main House","accessory":"Floor Lamp","service":"Lightbulb","characteristic":"Brightness","from":"\#(WireTime.text(from))","to":"\#(WireTime.text(to))"}"#
            }
            func values(_ answer: JSON) -> [JSON] {
                guard case .array(let points) = answer["data"]?["points"] else { return [] }
                return points.compactMap { $0["value"] }
            }
            // The recorder writes a batch every 20 ms: ask until the point is there
            var answer = JSON.null
            try await eventually("the owner's history to hold 37") {
                answer = try await owner.request("history", body(from: before, to: Date().addingTimeInterval(1)))
                return values(answer).contains(.integer(37))
            }
            #expect(answer.isOK && answer["data"]?["resolution"] == .string("raw"), "\(answer.serialized)")

            let guests = try await guest.request("history", body(from: before, to: Date().addingTimeInterval(1)))
            #expect(guests.isOK && values(guests).contains(.integer(37)), "\(guests.serialized)")

            let strangers = try await stranger.request("history", body(from: before, to: Date().addingTimeInterval(1)))
            #expect(strangers.code == "notFound", "\(strangers.serialized)")
            #expect(strangers["message"] == .string("There is no home named 'Main House'."))
            #expect(strangers["data"] == nil)

            let reversed = try await owner.request("history", body(from: Date(), to: before))
            #expect(reversed.code == "reversedSpan", "\(reversed.serialized)")

            let timeline = try await guest.request(
                "timeline",
                #"{"home":"Main House","from":"\#(WireTime.text(before))","to":"\#(WireTime.text(Date().addingTimeInterval(1)))"}"#
            )
            #expect(timeline.isOK, "\(timeline.serialized)")
            for account in [owner, guest, stranger] { await account.disconnect() }
        }
    }
}
