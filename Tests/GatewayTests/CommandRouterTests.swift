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
}
