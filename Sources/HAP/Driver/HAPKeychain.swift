import Crypto
import Foundation
import HAPProtocol
import HomeModel
import JSON

/// The controller's identity and the accessories' pairings, kept in the home database's driver
/// secrets (never on a topic, in a log or in a layout).
struct HAPKeychain: Sendable {
    /// What the controller remembers of one paired accessory.
    struct Pairing: Sendable, Equatable {
        var accessory: AccessoryPairing
        var host: String
        var port: Int
    }

    let secrets: DriverSecrets

    /// The controller's pairing identifier and Ed25519 key, made on first use.
    func controller() throws -> ControllerIdentity {
        if let identifier = try secrets.value("controller.id"), let key = try secrets.value("controller.key"),
            let signingKey = try? Curve25519.Signing.PrivateKey(rawRepresentation: key)
        {
            return ControllerIdentity(identifier: String(decoding: identifier, as: UTF8.self), signingKey: signingKey)
        }
        let identity = ControllerIdentity(
            identifier: UUID().uuidString.uppercased(), signingKey: Curve25519.Signing.PrivateKey())
        try secrets.set("controller.key", Array(identity.signingKey.rawRepresentation))
        try secrets.set("controller.id", Array(identity.identifier.utf8))
        return identity
    }

    func pairings() throws -> [Pairing] {
        try secrets.all().compactMap { key, value in
            guard key.hasPrefix("pairing.") else { return nil }
            return Self.pairing(from: value)
        }.sorted { $0.accessory.identifier < $1.accessory.identifier }
    }

    func save(_ pairing: Pairing) throws {
        let json = JSON.object([
            ("id", .string(pairing.accessory.identifier)),
            ("ltpk", .string(Data(pairing.accessory.publicKey).base64EncodedString())),
            ("host", .string(pairing.host)), ("port", .integer(pairing.port)),
        ])
        try secrets.set("pairing.\(pairing.accessory.identifier)", json.bytes)
    }

    func remove(_ identifier: String) throws {
        try secrets.remove("pairing.\(identifier)")
    }

    private static func pairing(from bytes: [UInt8]) -> Pairing? {
        guard let json = try? JSON.parse(bytes), let id = json["id"]?.stringValue,
            let publicKey = json["ltpk"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
            let host = json["host"]?.stringValue, case .integer(let port)? = json["port"]
        else { return nil }
        return Pairing(accessory: AccessoryPairing(identifier: id, publicKey: Array(publicKey)), host: host, port: port)
    }
}
