import Accessories
import Foundation
import HomeModel
import MQTT
import Testing

@testable import Gateway

@Suite("Command router without a broker")
struct CommandRouterTests {
    static let demoHome = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/demo-home.yml")
    static let lampOn = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On/set"

    private func router(defaultAccount: String?) async throws -> (CommandRouter, HomeManager) {
        let demo = try DemoHome.load(contentsOf: Self.demoHome)
        let manager = try HomeManager(database: .inMemory())
        try await manager.attach(demo.makeDriver())
        try await demo.seed(manager)
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

    @Test("without a default account such a command is refused, and answered where the client asked")
    func noDefaultAccount() async throws {
        let (router, manager) = try await router(defaultAccount: nil)
        let message = MQTTMessage(
            topic: Self.lampOn, payload: Array("true".utf8),
            properties: MQTTProperties(responseTopic: "client/answers", correlationData: [7]))
        let handling = await router.handle(message)
        #expect(handling.outcome == .failed(code: "insufficientPrivileges"))
        #expect(handling.answer?.topic == "client/answers")
        #expect(handling.answer?.correlationData == [7])
        #expect(try await lampValue(manager) == .bool(false))
        await manager.shutdown()
    }

    @Test("retained copies of commands are never run")
    func retainedCommandsIgnored() async throws {
        let (router, manager) = try await router(defaultAccount: "guest")
        let handling = await router.handle(MQTTMessage(topic: Self.lampOn, payload: Array("true".utf8), retain: true))
        #expect(handling == .ignored)
        #expect(try await lampValue(manager) == .bool(false))
        await manager.shutdown()
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
        let demo = try DemoHome.load(contentsOf: Self.demoHome)
        let manager = try HomeManager(database: .inMemory())
        try await manager.attach(demo.makeDriver())
        try await demo.seed(manager)
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
}
