/// One pairing an accessory holds, as listed by /pairings.
package struct PairingEntry: Sendable, Equatable {
    /// The controller's pairing identifier.
    package let identifier: String
    /// The controller's Ed25519 long-term public key.
    package let publicKey: [UInt8]
    /// Whether the controller is an admin (may add and remove pairings).
    package let isAdmin: Bool

    package init(identifier: String, publicKey: [UInt8], isAdmin: Bool) {
        self.identifier = identifier
        self.publicKey = publicKey
        self.isAdmin = isAdmin
    }
}

/// The TLV8 bodies of /pairings (add, remove, list: methods 3, 4, 5) and the reading of their answers.
/// These go over the encrypted session, by an admin controller.
package enum PairingsRequest {
    /// Add pairing (method 3): lets another controller in.
    package static func add(_ pairing: PairingEntry) -> [UInt8] {
        let message: TLV8 = [
            (.state, [1]), (.method, [PairingMethod.addPairing.rawValue]),
            (.identifier, Array(pairing.identifier.utf8)),
            (.publicKey, pairing.publicKey), (.permissions, [pairing.isAdmin ? 1 : 0]),
        ]
        return message.encoded()
    }

    /// Remove pairing (method 4): removes a controller (the accessory answers success if it was not paired).
    package static func remove(identifier: String) -> [UInt8] {
        let message: TLV8 = [
            (.state, [1]), (.method, [PairingMethod.removePairing.rawValue]), (.identifier, Array(identifier.utf8)),
        ]
        return message.encoded()
    }

    /// List pairings (method 5).
    package static func list() -> [UInt8] {
        let message: TLV8 = [(.state, [1]), (.method, [PairingMethod.listPairings.rawValue])]
        return message.encoded()
    }

    /// Reads the answer to add or remove: M2 without an error.
    ///
    /// - Throws: `PairingError` for an error item, `HAPError` for a malformed answer.
    package static func readResult(_ body: [UInt8]) throws {
        _ = try readPairingAnswer(body, expectedState: 2)
    }

    /// Reads the answer to list: the entries between separators.
    ///
    /// - Throws: `PairingError` for an error item, `HAPError` for a malformed answer or entry.
    package static func readList(_ body: [UInt8]) throws -> [PairingEntry] {
        let message = try readPairingAnswer(body, expectedState: 2)
        return try message.splitAtSeparators().compactMap { entry in
            let listed = TLV8(entry.items.filter { $0.type != .state })
            guard !listed.items.isEmpty else { return nil }
            let identifier = try requiredItem(.identifier, in: listed, "a listed pairing")
            guard let name = String(validating: identifier, as: UTF8.self) else {
                throw HAPError(.unexpectedMessage, "a listed pairing identifier is not UTF-8")
            }
            return PairingEntry(
                identifier: name, publicKey: try requiredItem(.publicKey, in: listed, "a listed pairing"),
                isAdmin: listed[.permissions] == [1])
        }
    }
}
