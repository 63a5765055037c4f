import Testing

@testable import HAPProtocol

struct SetupInformationTests {
    /// Figures from HAP-python 5's `Accessory.xhm_uri` and `AccessoryDriver._setup_hash` (with the
    /// base-36 encoding it imports written out), for the same codes.
    @Test("the QR payload and the setup hash, as HAP-python computes them")
    func asHAPPython() throws {
        let bridge = try SetupInformation(setupCode: "031-45-154", setupID: "7OSX")
        #expect(bridge.payload(category: 2) == "X-HM://0023ISYWY7OSX")
        #expect(bridge.setupHash(deviceID: "1A:2B:3C:4D:5E:6F") == "fGnuZQ==")
        #expect(
            try SetupInformation(setupCode: "482-91-735", setupID: "HG01").payload(category: 5)
                == "X-HM://0052TCP7BHG01")
    }

    @Test("codes HAP forbids, codes of the wrong form and bad setup IDs are refused; random ones are allowed")
    func rules() throws {
        for code in ["000-00-000", "111-11-111", "999-99-999", "123-45-678", "876-54-321", "1234-5-678", "12a-45-678"] {
            #expect(throws: HAPError.self) { try SetupInformation(setupCode: code, setupID: "7OSX") }
        }
        for id in ["7os", "7osx", "7OSX1", "7-SX"] {
            #expect(throws: HAPError.self) { try SetupInformation(setupCode: "031-45-154", setupID: id) }
        }
        var generator = SystemRandomNumberGenerator()
        let drawn = (0..<200).map { _ in SetupInformation.random(using: &generator) }
        for setup in drawn {
            #expect((try? SetupInformation(setupCode: setup.setupCode, setupID: setup.setupID)) == setup)
        }
        #expect(Set(drawn.map(\.setupCode)).count > 190, "random codes, not one")
    }
}
