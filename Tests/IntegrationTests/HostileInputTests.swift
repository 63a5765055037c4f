import Foundation
import Gateway
import HomeModel
import JSON
import MQTT
import TestSupport
import Testing

/// One bad command or request and the code its answer must carry.
struct HostileCase: Sendable, CustomStringConvertible {
    var what: String
    var account: String
    var topic: String
    var payload: [UInt8]
    var code: String

    init(_ what: String, as account: String = "guest", _ topic: String, _ payload: String = "", _ code: String) {
        self.init(what, as: account, topic, bytes: Array(payload.utf8), code)
    }

    init(_ what: String, as account: String = "guest", _ topic: String, bytes payload: [UInt8], _ code: String) {
        self.what = what
        self.account = account
        self.topic = topic
        self.payload = payload
        self.code = code
    }

    var description: String { what }
}

/// A corpus of hostile commands and requests (docs/reliability.md, scenario 4).
enum HostileCorpus {
    static let lamp = "homegate/Main House/Living Room/Floor Lamp"
    static let thermostat = "homegate/Main House/Hallway/Thermostat/Thermostat"

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    static let cases: [HostileCase] = [
        // Topic depths the command filters still deliver
        .init("too many levels after $set", "\(lamp)/$set/extra/set/guest", "{}", "invalidParameter"),
        .init(
            "too many levels after $run", "homegate/Main House/$actionsets/Good Night/$run/x/set/guest", "",
            "invalidParameter"),
        .init("a request topic too deep", "homegate/$request/guest/homes/x/y/set/guest", "{}", "invalidParameter"),
        .init("an empty service level", "\(lamp)//On/set/guest", "true", "invalidParameter"),
        // Unknown names
        .init("unknown accessory", "homegate/Main House/Living Room/Ghost/Lightbulb/On/set/guest", "true", "notFound"),
        .init("unknown service", "\(lamp)/Ghostbulb/On/set/guest", "true", "notFound"),
        .init("unknown characteristic", "\(lamp)/Lightbulb/Ghost/set/guest", "true", "notFound"),
        .init("unknown room", "homegate/Main House/Attic/Floor Lamp/Lightbulb/On/set/guest", "true", "notFound"),
        .init("unknown action set", "homegate/Main House/$actionsets/Bad Dream/$run/guest", "", "notFound"),
        .init("unknown operation", "homegate/$request/guest/teleport", "{}", "invalidParameter"),
        .init(
            "unknown home in a request", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Atlantis","name":"Hall"}"#, "notFound"),
        // Wildcards and control characters
        .init(
            "a wildcard in a new name", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Main House","name":"At+tic"}"#, "nameContainsProhibitedCharacters"),
        .init(
            "a # in a new name", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Main House","name":"Attic#"}"#, "nameContainsProhibitedCharacters"),
        .init(
            "a control character in a new name", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Main House","name":"At\u0007tic"}"#, "nameContainsProhibitedCharacters"),
        .init(
            "a wildcard in a home name", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Main+House","name":"Attic"}"#, "notFound"),
        .init(
            "a newline in a new account", as: "owner", "homegate/$request/owner/addUser",
            #"{"home":"Main House","account":"eve\ntopic readwrite #","name":"Eve"}"#, "invalidParameter"),
        .init(
            "a wildcard in a new account", as: "owner", "homegate/$request/owner/addUser",
            #"{"home":"Main House","account":"eve/#","name":"Eve"}"#, "invalidParameter"),
        // Invalid UTF-8
        .init(
            "invalid UTF-8 value", "\(lamp)/Lightbulb/Brightness/set/guest", bytes: [0x35, 0xFF, 0xFE],
            "invalidValueType"),
        .init(
            "invalid UTF-8 request body", as: "owner", "homegate/$request/owner/addRoom",
            bytes: Array(#"{"home":"Main House","name":"A"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8),
            "invalidParameter"),
        .init("invalid UTF-8 $set", "\(lamp)/$set/guest", bytes: [0x7B, 0xFF, 0x7D], "invalidParameter"),
        // Empty and oversized payloads
        .init("an empty value", "\(lamp)/Lightbulb/On/set/guest", "", "missingParameter"),
        .init("an empty $set", "\(lamp)/$set/guest", "", "invalidParameter"),
        .init(
            "an empty request that needs a body", as: "owner", "homegate/$request/owner/addRoom", "", "missingParameter"
        ),
        .init(
            "a value over 64 KiB", "\(lamp)/Lightbulb/Brightness/set/guest", String(repeating: "1", count: 65_537),
            "invalidParameter"),
        .init(
            "a request over 64 KiB", as: "owner", "homegate/$request/owner/homes",
            "{\"pad\":\"" + String(repeating: "x", count: 65_536) + "\"}", "invalidParameter"),
        // Deeply nested and huge JSON
        .init("$set nested 100 deep", "\(lamp)/$set/guest", nested(100), "invalidParameter"),
        .init(
            "a request nested 40 deep", as: "owner", "homegate/$request/owner/homes", #"{"x":"# + nested(40) + "}",
            "invalidParameter"),
        .init("a JSON value nested 10,000 deep", "\(lamp)/Lightbulb/On/set/guest", nested(10_000), "invalidValueType"),
        .init(
            "a huge $set: 4,000 unknown services after a valid one", "\(lamp)/$set/guest",
            #"{"Lightbulb":{"On":true},"# + (0..<4000).map { #""s\#($0)":{}"# }.joined(separator: ",") + "}", "notFound"
        ),
        .init("a $set that is a list", "\(lamp)/$set/guest", "[1,2,3]", "invalidParameter"),
        .init("a value that is an object", "\(lamp)/Lightbulb/On/set/guest", #"{"on":true}"#, "invalidValueType"),
        // NaN, Infinity and out-of-range numbers
        .init("NaN", "\(lamp)/Lightbulb/Brightness/set/guest", "NaN", "invalidValueType"),
        .init("Infinity", "\(lamp)/Lightbulb/Brightness/set/guest", "Infinity", "invalidValueType"),
        .init("-inf", "\(lamp)/Lightbulb/Brightness/set/guest", "-inf", "invalidValueType"),
        .init("1e999 overflows to infinity", "\(lamp)/Lightbulb/Brightness/set/guest", "1e999", "invalidValueType"),
        .init("NaN in $set", "\(lamp)/$set/guest", #"{"Lightbulb":{"Brightness":NaN}}"#, "invalidParameter"),
        .init("1e400 in $set", "\(lamp)/$set/guest", #"{"Lightbulb":{"Brightness":1e400}}"#, "invalidParameter"),
        .init("above the maximum", "\(lamp)/Lightbulb/Brightness/set/guest", "101", "valueHigherThanMaximum"),
        .init(
            "beyond Int64", "\(lamp)/Lightbulb/Brightness/set/guest", "9223372036854775808", "valueHigherThanMaximum"),
        .init(
            "far below Int64", "\(lamp)/Lightbulb/Brightness/set/guest", "-99999999999999999999",
            "valueLowerThanMinimum"),
        .init("above uint8", "\(thermostat)/TargetHeatingCoolingState/set/guest", "256", "valueHigherThanMaximum"),
        .init(
            "a fraction for an integer format", "\(thermostat)/TargetHeatingCoolingState/set/guest", "1.5",
            "invalidValueType"),
        .init("a hex number", "\(lamp)/Lightbulb/Brightness/set/guest", "0x10", "invalidValueType"),
        .init(
            "a read-only characteristic", "\(thermostat)/CurrentTemperature/set/guest", "20", "readOnlyCharacteristic"),
        // Strings over their maximum length
        .init(
            "a room name over 64 characters", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Main House","name":""# + String(repeating: "a", count: 65) + #""}"#, "invalidParameter"),
        .init(
            "a room name of 60,000 characters", as: "owner", "homegate/$request/owner/addRoom",
            #"{"home":"Main House","name":""# + String(repeating: "a", count: 60_000) + #""}"#, "invalidParameter"),
        .init(
            "a user name over 64 characters", as: "owner", "homegate/$request/owner/addUser",
            #"{"home":"Main House","account":"eve","name":""# + String(repeating: "e", count: 65) + #""}"#,
            "invalidParameter"),
        // Duplicated keys
        .init(
            "a duplicated characteristic in $set", "\(lamp)/$set/guest", #"{"Lightbulb":{"On":true,"On":false}}"#,
            "invalidParameter"),
        .init(
            "a duplicated key in a request", as: "owner", "homegate/$request/owner/renameRoom",
            #"{"home":"Main House","room":"Kitchen","name":"A","name":"B"}"#, "invalidParameter"),
        // Wrong types and roles
        .init(
            "a number for a name", as: "owner", "homegate/$request/owner/addRoom", #"{"home":"Main House","name":7}"#,
            "invalidParameter"),
        .init(
            "a request body that is a list", as: "owner", "homegate/$request/owner/addRoom", "[]", "invalidParameter"),
        .init(
            "a guest changing the layout", "homegate/$request/guest/removeRoom",
            #"{"home":"Main House","room":"Kitchen"}"#, "insufficientPrivileges"),
        .init(
            "a bridged accessory removed alone", as: "owner", "homegate/$request/owner/removeAccessory",
            #"{"home":"Main House","accessory":"Stair Light"}"#, "cannotRemoveNonBridgeAccessory"),
        .init(
            "the default room renamed", as: "owner", "homegate/$request/owner/renameRoom",
            #"{"home":"Main House","room":"$default","name":"Hall"}"#, "roomForHomeCannotBeUpdated"),
        .init("an unknown service with nothing in it", "\(lamp)/$set/guest", #"{"Ghost":{}}"#, "notFound"),
        .init("a $set with nothing to set", "\(lamp)/$set/guest", "{}", "missingParameter"),
    ]
}

@Suite("Hostile input: every bad command is answered with its code and changes nothing", .timeLimit(.minutes(3)))
struct HostileInputTests {
    @Test("the corpus: each case answered with its code, the home and the retained view unchanged")
    func corpus() async throws {
        try await withGateway { gateway in
            let accounts = [
                "guest": try await Account.connect("guest", to: gateway.broker),
                "owner": try await Account.connect("owner", to: gateway.broker),
            ]
            let state = await gateway.steadyState()
            let retained = try await gateway.retainedTopics()

            for hostile in HostileCorpus.cases {
                let account = try #require(accounts[hostile.account])
                let answer = try await account.command(hostile.topic, bytes: hostile.payload)
                #expect(answer["ok"] == .bool(false), "\(hostile): \(answer.serialized.prefix(300))")
                #expect(answer.code == hostile.code, "\(hostile): \(answer.serialized.prefix(300))")
                #expect(answer["message"]?.stringValue?.isEmpty == false, "\(hostile)")
            }

            // Nothing changed, and the gateway still serves at once
            #expect(await gateway.steadyState() == state)
            #expect(try await gateway.retainedTopics() == retained)
            let guest = try #require(accounts["guest"])
            #expect(try await guest.command("\(HostileCorpus.lamp)/Lightbulb/Brightness/set/guest", "42").isOK)
            for account in accounts.values { await account.disconnect() }
        }
    }

    @Test("a home the account is no member of is refused exactly like a home that does not exist")
    func nonMemberHomes() async throws {
        try await withGateway { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            let state = await gateway.steadyState()
            let foreign = try await guest.command(
                "homegate/Lake Cabin/Cabin Living Room/Cabin Heater/Switch/On/set/guest", "true")
            let missing = try await guest.command("homegate/Atlantis/Hall/Lamp/Lightbulb/On/set/guest", "true")
            let foreignRequest = try await guest.request("read", #"{"home":"Lake Cabin","accessory":"Cabin Heater"}"#)
            for answer in [foreign, missing, foreignRequest] {
                #expect(answer.code == "notFound", "\(answer.serialized)")
            }
            #expect(foreign["message"]?.stringValue == "There is no home named 'Lake Cabin'.")
            #expect(missing["message"]?.stringValue == "There is no home named 'Atlantis'.")
            #expect(await gateway.steadyState() == state)
            await guest.disconnect()
        }
    }

    @Test("a flood from one account is answered tooManyRequests; another account is not held up")
    func flood() async throws {
        // A bucket that refills slowly, so the counts do not depend on how fast the machine is
        let limit = RateLimit(perSecond: 1, burst: 100)
        try await withGateway(rateLimit: limit) { gateway in
            let guest = try await Account.connect("guest", to: gateway.broker)
            let owner = try await Account.connect("owner", to: gateway.broker)
            let flood = 400

            // When guest sends 400 requests as fast as it can
            let started = ContinuousClock.now
            for index in 0..<flood {
                try guest.client.send(
                    "homegate/$request/guest/homes", payload: Array(#"{"id":\#(index)}"#.utf8), qos: .atLeastOnce,
                    properties: MQTTProperties(responseTopic: guest.answers, correlationData: [0x46]))
            }
            // and owner sends one meanwhile
            let ownerAnswer = try await owner.request("homes")

            // Then every flood message is answered: the burst ok, the rest tooManyRequests
            var codes: [String: Int] = [:]
            for _ in 0..<flood {
                let answer = try JSON.parse(
                    try await guest.inbox.next("flood answer") {
                        $0.topic == guest.answers && $0.properties.correlationData == [0x46]
                    }
                    .payload)
                codes[answer.code ?? "ok", default: 0] += 1
            }
            // While the flood was handled, the bucket gained at most `perSecond` a second on top of its burst
            let refilled = Int(((ContinuousClock.now - started) / .seconds(1)) * limit.perSecond) + 1
            let ok = codes["ok", default: 0]
            #expect(codes.values.reduce(0, +) == flood)
            #expect(ok >= limit.burst && ok <= limit.burst + refilled, "\(codes), \(refilled) refilled")
            #expect(codes["tooManyRequests", default: 0] == flood - ok, "\(codes)")
            #expect(ownerAnswer.isOK, "owner is not limited by guest's flood: \(ownerAnswer.serialized)")

            // And once the bucket refilled, guest is served again (a refused request takes no token)
            let again = try await eventuallyValue("guest's request no longer refused") {
                let answer = try await guest.request("homes")
                return answer.code == "tooManyRequests" ? nil : answer
            }
            #expect(again.isOK, "\(again.serialized)")
            await guest.disconnect()
            await owner.disconnect()
        }
    }
}
