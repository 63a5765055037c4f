import Crypto
import Foundation
import HAPProtocol
import Testing

/// Pairing with a real accessory: HAP-python (scripts/hap-accessory.py) on a free loopback port.
@Suite(.serialized) struct HAPPythonTests {
    static let setupCode = "031-45-154"

    @Test(.timeLimit(.minutes(5)))
    func pairVerifyAndReadTheBridge() async throws {
        // Its pipe and sockets block: on a thread of its own, not one the other suites share (a task
        // inherits the test's task-local context, so the expectations stay this test's).
        try await Task(executorPreference: ThreadOfItsOwn.shared) { try pairVerifyAndRead() }.value
    }

    private func pairVerifyAndRead() throws {
        let bridge = try HAPPythonBridge(setupCode: Self.setupCode)
        defer { bridge.stop() }
        let controller = ControllerIdentity(
            identifier: UUID().uuidString.uppercased(), signingKey: Curve25519.Signing.PrivateKey())

        // Given a first attempt with a wrong setup code: the accessory answers M4 with the authentication error
        var connection = try HAPTestConnection(port: bridge.port)
        var wrong = try PairSetup(setupCode: "111-22-333", controller: controller)
        #expect {
            _ = try connection.pair("/pair-setup", start: { wrong.start() }, handle: { try wrong.handle($0) })
        } throws: { error in
            (error as? PairingError)?.code == .authentication && (error as? PairingError)?.state == 4
        }

        // When pairing with the right code
        var setup = try PairSetup(setupCode: Self.setupCode, controller: controller)
        let accessory = try connection.pair("/pair-setup", start: { setup.start() }, handle: { try setup.handle($0) })
        // Then the controller has the accessory's pairing id and a 32-byte LTPK
        #expect(accessory.identifier == "1A:2B:3C:4D:5E:6F")
        #expect(accessory.publicKey.count == 32)

        // When verifying on a new connection, as a controller does on every connection
        var session = try HAPTestConnection(port: bridge.port)
        var verify = PairVerify(controller: controller, accessory: accessory)
        let keys = try session.pair("/pair-verify", start: { verify.start() }, handle: { try verify.handle($0) })
        session.session = .controller(keys)

        // Then /accessories over the encrypted session lists the bridge and its three accessories
        let listing = try session.send(.get("/accessories"))
        #expect(listing.statusCode == 200)
        let json = try JSONSerialization.jsonObject(with: Data(listing.body)) as? [String: Any]
        let accessories = json?["accessories"] as? [[String: Any]] ?? []
        #expect(accessories.count == 4)
        let names = Set(accessories.compactMap { Self.characteristic("23", in: $0)?["value"] as? String })
        #expect(names == ["Test Bridge", "Light", "Switch", "Temperature"])

        // And a write reaches the accessory's own callback
        let light = try #require(
            accessories.first { Self.characteristic("23", in: $0)?["value"] as? String == "Light" })
        let on = try #require(Self.characteristic("25", in: light))
        let write: [String: Any] = ["characteristics": [["aid": light["aid"]!, "iid": on["iid"]!, "value": true]]]
        let answer = try session.send(
            .putJSON("/characteristics", Array(try JSONSerialization.data(withJSONObject: write))))
        #expect(answer.statusCode == 204)
        let seen = try bridge.nextEvent { $0["event"] as? String == "write" }
        #expect(seen["accessory"] as? String == "Light")
        #expect(seen["characteristic"] as? String == "On")
        #expect(seen["value"] as? Bool == true)

        // And /pairings lists this controller as the admin
        let pairings = try session.send(.pairing("/pairings", PairingsRequest.list()))
        let entries = try PairingsRequest.readList(pairings.body)
        #expect(
            entries == [PairingEntry(identifier: controller.identifier, publicKey: controller.publicKey, isAdmin: true)]
        )
    }

    /// The first characteristic of `type` (short form, "23" for Name) in an accessory of /accessories.
    static func characteristic(_ type: String, in accessory: [String: Any]) -> [String: Any]? {
        let services = accessory["services"] as? [[String: Any]] ?? []
        for service in services {
            for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                if let found = characteristic["type"] as? String, shortType(found) == type {
                    return characteristic
                }
            }
        }
        return nil
    }

    /// "00000023-0000-1000-8000-0026BB765291" and "23" are both "23".
    static func shortType(_ type: String) -> String {
        let head = type.split(separator: "-").first.map(String.init) ?? type
        let trimmed = head.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed).uppercased()
    }
}
