import Crypto
import Foundation

/// What a person needs to pair an accessory (the hub's HomeKit bridge) in Apple's Home app: its
/// setup code, its setup ID, the `X-HM://` payload of its QR code, and the setup hash (`sh`) its
/// `_hap._tcp` record carries so that the Home app finds the accessory the code belongs to.
package struct SetupInformation: Sendable, Equatable {
    /// "XXX-XX-XXX", eight digits.
    package let setupCode: String
    /// Four characters of 0–9 and A–Z.
    package let setupID: String

    /// Codes HAP forbids: one digit repeated, and the two sequences.
    static let forbiddenCodes: Set<String> =
        Set((0...9).map { digit in String(repeating: "\(digit)", count: 8) }).union(["12345678", "87654321"])

    static let setupIDCharacters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// Takes a stored code and ID; throws `.invalidSetupCode` for a code of the wrong form, one HAP
    /// forbids, or a setup ID that is not four of 0–9 and A–Z.
    package init(setupCode: String, setupID: String) throws {
        try PairSetup.validate(setupCode: setupCode)
        guard !Self.forbiddenCodes.contains(setupCode.filter(\.isNumber)) else {
            throw HAPError(.invalidSetupCode, "HAP forbids the setup code \(setupCode)")
        }
        guard setupID.count == 4, setupID.allSatisfy(Self.setupIDCharacters.contains) else {
            throw HAPError(.invalidSetupCode, "a setup ID is four of 0-9 and A-Z")
        }
        self.setupCode = setupCode
        self.setupID = setupID
    }

    /// A random code HAP allows and a random setup ID, drawn from `generator`.
    package static func random(using generator: inout some RandomNumberGenerator) -> SetupInformation {
        while true {
            let digits = (0..<8).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            guard !forbiddenCodes.contains(digits) else { continue }
            let code = "\(digits.prefix(3))-\(digits.dropFirst(3).prefix(2))-\(digits.suffix(3))"
            let id = String((0..<4).map { _ in setupIDCharacters.randomElement(using: &generator)! })
            // Both are of the right form by construction.
            return try! SetupInformation(setupCode: code, setupID: id)
        }
    }

    /// The QR code's payload for an accessory of HAP category `category` over IP: version 0, the
    /// category, the IP flag and the code in 45 bits, in base 36 (nine characters), then the setup ID.
    package func payload(category: Int) -> String {
        let code = UInt64(setupCode.filter(\.isNumber))!
        let bits = UInt64(category & 0xFF) << 31 | 2 << 27 | code & 0x7FF_FFFF
        let text = String(bits, radix: 36, uppercase: true)
        return "X-HM://" + String(repeating: "0", count: max(0, 9 - text.count)) + text + setupID
    }

    /// The `sh` of the accessory's `_hap._tcp` record: the first four bytes of SHA-512 over the
    /// setup ID and the accessory's pairing identifier, in base 64.
    package func setupHash(deviceID: String) -> String {
        Data(SHA512.hash(data: Array((setupID + deviceID).utf8)).prefix(4)).base64EncodedString()
    }
}
