import Foundation
import HomeModel
import JSON
import MQTT
import Synchronization
import Testing
import VirtualDevices

@testable import Gateway

@Suite("Command router without a broker")
struct CommandRouterTests {
    static let lampOn = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On/set"

    private func router(defaultAccount: String?) async throws -> (CommandRouter, HomeManager) {
        let manager = try await DemoFixture.seeded().manager
        return (CommandRouter(manager: manager, topics: Topics(), defaultAccount: defaultAccount), manager)
    }

    private func lampValue(_ manager: HomeManager) async throws -> CharacteristicValue? {
        let home = try await manager.home("Main House", account: "owner")
        return home.accessories.first { $0.name == "Floor Lamp" }?.services.first?.characteristics
            .first { $0.type == .on }?.value
    }

    @Test("a command without an account acts as the default account")
    func defaultAccount() async throws {
        let (router, manager) = try await router(defaultAccount: "guest")
        let handling = await router.handle(MQTTMessage(topic: Self.lampOn, payload: Array("true".utf8)))
        #expect(handling.outcome == .succeeded)
        #expect(handling.answer == nil, "a successful command without a response topic is not answered")
        #expect(try await lampValue(manager) == .bool(true))
        await manager.shutdown()
    }

    @Test("without a default account such a command is refused, and not answered: no account owns a response topic")
    func noDefaultAccount() async throws {
        let (router, manager) = try await router(defaultAccount: nil)
        let message = MQTTMessage(
            topic: Self.lampOn, payload: Array("true".utf8),
            properties: MQTTProperties(responseTopic: "homegate/$response/guest", correlationData: [7]))
        let handling = await router.handle(message)
        #expect(handling.outcome == .failed(code: "insufficientPrivileges"))
        #expect(handling.answer == nil)
        #expect(try await lampValue(manager) == .bool(false))
        await manager.shutdown()
    }

    @Test("retained commands are never run: refused to their sender, and marked for clearing")
    func retainedCommandsRefused() async throws {
        let (router, manager) = try await router(defaultAccount: "guest")
        let message = MQTTMessage(topic: Self.lampOn + "/guest", payload: Array("true".utf8), retain: true)
        let handling = await router.handle(message)
        #expect(handling.outcome == .failed(code: "invalidParameter"))
        #expect(handling.answer?.topic == "homegate/$response/guest")
        #expect(router.retainedClutter(message)?.sender == "guest")
        #expect(try await lampValue(manager) == .bool(false))
        // An empty retained message is a clearing: nothing to refuse or clear
        let clearing = MQTTMessage(topic: Self.lampOn + "/guest", payload: [], retain: true)
        #expect(await router.handle(clearing) == .ignored)
        #expect(router.retainedClutter(clearing) == nil)
        // Retained answers are clutter too; the gateway's own value topics are not
        let answer = MQTTMessage(topic: "homegate/$response/owner", payload: Array("{}".utf8), retain: true)
        #expect(router.retainedClutter(answer)?.topic == "homegate/$response/owner")
        let value = MQTTMessage(
            topic: "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On", payload: Array("true".utf8), retain: true)
        #expect(router.retainedClutter(value) == nil)
        await manager.shutdown()
    }

    @Test(
        "a response topic that is not the account's own is refused unrun; the refusal goes to its own topic",
        arguments: [
            "client/answers", "homeassistant/switch/evil/x/config", "$CONTROL/dynamic-security/v1",
            "homegate/$response/owner", "homegate/$response/guestbook", "homegate/$response/guest/#", "homegate",
        ])
    func foreignResponseTopic(responseTopic: String) async throws {
        let (router, manager) = try await router(defaultAccount: nil)
        let message = MQTTMessage(
            topic: Self.lampOn + "/guest", payload: Array("true".utf8),
            properties: MQTTProperties(responseTopic: responseTopic, correlationData: [7]))
        let handling = await router.handle(message)
        #expect(handling.outcome == .failed(code: "invalidParameter"))
        #expect(handling.answer?.topic == "homegate/$response/guest")
        #expect(handling.answer?.correlationData == [7])
        #expect(try await lampValue(manager) == .bool(false))
        // while the account's own topic and below it are answered there
        for own in ["homegate/$response/guest", "homegate/$response/guest/app/1"] {
            let asked = MQTTMessage(
                topic: Self.lampOn + "/guest", payload: Array("true".utf8),
                properties: MQTTProperties(responseTopic: own, correlationData: [8]))
            #expect(await router.handle(asked).answer?.topic == own)
        }
        await manager.shutdown()
    }

    @Test(
        "RequestID reads only the top-level id, also from a body that is malformed after it",
        arguments: [
            (#"{"id":7}"#, JSON.integer(7)), (#" { "name" : "x", "id" : "a\"b" } "#, .string("a\"b")),
            (#"{"nested":{"id":1},"list":[{"id":2}],"id":3}"#, .integer(3)), (#"{"id":null}"#, .null),
            (#"{"id":4.5,"name": }"#, .number(4.5)),
            (#"{"id":{"k":[1,2]}}"#, .object([("k", .array([.integer(1), .integer(2)]))])),
        ])
    func requestID(body: String, id: JSON) {
        #expect(RequestID.read(Array(body.utf8)) == id)
    }

    @Test(
        "RequestID finds nothing where there is no readable id",
        arguments: ["", "[]", "{", #"{"name": ,"id":1}"#, #"{"ID":1}"#, "not json", #"{"i"d":1}"#])
    func noRequestID(body: String) {
        #expect(RequestID.read(Array(body.utf8)) == nil)
    }

    @Test("RequestID reads no further than the largest payload, and echoes no id longer than 256 bytes")
    func requestIDBounds() {
        let long = #"{"id":""# + String(repeating: "x", count: 300) + #""}"#
        #expect(RequestID.read(Array(long.utf8)) == nil)
        let late = #"{"pad":""# + String(repeating: "x", count: 70_000) + #"","id":1}"#
        #expect(RequestID.read(Array(late.utf8)) == nil)
        let early = #"{"id":2,"pad":""# + String(repeating: "x", count: 1_000_000) + #""}"#
        #expect(RequestID.read(Array(early.utf8)) == .integer(2))
    }

    @Test("payloads over the limit are refused unread")
    func oversizedPayload() async throws {
        let (router, manager) = try await router(defaultAccount: nil)
        let handling = await router.handle(
            MQTTMessage(topic: "\(Self.lampOn)/guest", payload: Array(repeating: 0x31, count: 65_537)))
        #expect(handling.outcome == .failed(code: "invalidParameter"))
        #expect(handling.answer?.topic == "homegate/$response/guest")
        await manager.shutdown()
    }

    @Test(
        "topics that MQTT brokers would not deliver are still refused: control characters, wildcards",
        arguments: [
            "homegate/Main House/Living Room/Floor\u{07}Lamp/Lightbulb/On/set/guest",
            "homegate/Main House/Living Room/Floor Lamp/Light\u{0}bulb/On/set/guest",
            "homegate/Main House/Living Room/Floor Lamp/Lightbulb/+/set/guest",
            "homegate/Main House/#/Floor Lamp/$identify/guest",
        ])
    func unspeakableTopics(topic: String) async throws {
        let (router, manager) = try await router(defaultAccount: nil)
        let handling = await router.handle(MQTTMessage(topic: topic, payload: Array("true".utf8)))
        #expect(handling.outcome == .failed(code: "invalidParameter"))
        #expect(handling.answer?.topic == "homegate/$response/guest")
        #expect(try await lampValue(manager) == .bool(false))
        await manager.shutdown()
    }

    @Test("a malformed command topic is answered to the account that ends it")
    func malformedTopicAnswered() async throws {
        let (router, manager) = try await router(defaultAccount: nil)
        let handling = await router.handle(
            MQTTMessage(topic: "homegate/Main House/Living Room/Floor Lamp/$set/x/set/guest", payload: Array("{}".utf8))
        )
        #expect(handling.outcome == .failed(code: "invalidParameter"))
        #expect(handling.answer?.topic == "homegate/$response/guest")
        #expect(handling.answer?.payload["message"]?.stringValue?.contains("too many") == true)
        await manager.shutdown()
    }

    @Test("an account over its rate is refused tooManyRequests; others are not")
    func rateLimited() async throws {
        let manager = try await DemoFixture.seeded().manager
        let router = CommandRouter(
            manager: manager, topics: Topics(), defaultAccount: nil, rateLimit: RateLimit(perSecond: 0.001, burst: 3))
        var outcomes: [Handling.Outcome] = []
        for _ in 0..<5 {
            outcomes.append(
                await router.handle(MQTTMessage(topic: "\(Self.lampOn)/guest", payload: Array("true".utf8))).outcome)
        }
        #expect(
            outcomes == [.succeeded, .succeeded, .succeeded]
                + Array(repeating: .failed(code: "tooManyRequests"), count: 2))
        let owner = await router.handle(MQTTMessage(topic: "\(Self.lampOn)/owner", payload: Array("false".utf8)))
        #expect(owner.outcome == .succeeded)
        #expect(try await lampValue(manager) == .bool(false), "the refused commands did nothing")
        await manager.shutdown()
    }
}

@Suite("Rate limiter")
struct RateLimiterTests {
    @Test("a bucket per account: burst at once, then the rate, refilled over time")
    func tokenBucket() {
        let limiter = RateLimiter(RateLimit(perSecond: 10, burst: 5))
        let start = ContinuousClock.now
        #expect((0..<5).allSatisfy { _ in limiter.admit("a", at: start) })
        #expect(!limiter.admit("a", at: start))
        #expect(limiter.admit("b", at: start), "another account has its own bucket")
        #expect(limiter.retryAfter("a", at: start) == .milliseconds(100))
        #expect(limiter.admit("a", at: start + .milliseconds(100)))
        #expect(!limiter.admit("a", at: start + .milliseconds(150)))
        #expect(
            (0..<5).allSatisfy { _ in limiter.admit("a", at: start + .seconds(10)) }, "refills to the burst, no more")
        #expect(!limiter.admit("a", at: start + .seconds(10)))
    }

    @Test("made-up account names do not grow memory without bound")
    func boundedAccounts() {
        let limiter = RateLimiter(RateLimit(perSecond: 1000, burst: 1), retainedAccounts: 100)
        let start = ContinuousClock.now
        for index in 0..<10_000 {
            _ = limiter.admit("account\(index)", at: start + .milliseconds(index))
        }
        #expect(limiter.knownAccounts <= 101)
    }

    @Test("$health carries the dynamic-security keeper's status once it has one: counts, never accounts")
    func healthReportsDynamicSecurity() {
        let statistics = GatewayStatistics()
        #expect(statistics.health(version: "1", residentBytes: nil)["dynamicSecurity"] == nil)
        var status = AccessKeeper.Status()
        status.inStep = false
        status.failedSyncs = 2
        status.missingAccounts = 1
        statistics.recordDynamicSecurity(status.json)
        let health = statistics.health(version: "1", residentBytes: nil)
        #expect(health["dynamicSecurity"]?["inStep"] == .bool(false))
        #expect(health["dynamicSecurity"]?["failedSyncs"] == .integer(2))
        #expect(health["dynamicSecurity"]?["missingAccounts"] == .integer(1))
    }
}

extension RateLimiter {
    /// How many accounts have a bucket now.
    var knownAccounts: Int { buckets.withLock { $0.count } }
}
