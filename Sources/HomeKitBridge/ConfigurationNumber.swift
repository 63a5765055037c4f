import Crypto
import Foundation
import JSON

/// A bridge's configuration number, `c#` in its mDNS record: controllers read the accessory database
/// again when it changes. It changes only when the database's content does (a hash of it is kept
/// beside it), persists with the home, and after 65535 comes 1.
struct ConfigurationNumber: Sendable, Equatable {
    private(set) var value = 1
    private var contentHash: [UInt8] = []

    init() {}

    /// Takes the accessory database as served now; returns whether the number moved.
    mutating func update(content: [UInt8]) -> Bool {
        let hash = Array(SHA256.hash(data: content))
        guard hash != contentHash else { return false }
        // The first content seen is the database the first number stands for.
        let first = contentHash.isEmpty
        contentHash = hash
        guard !first else { return false }
        value = value == 65535 ? 1 : value + 1
        return true
    }

    /// The number and its content's hash as the bridge's stored state keeps them.
    var json: JSON {
        .object([("value", .integer(value)), ("hash", .string(Data(contentHash).base64EncodedString()))])
    }

    /// Reads what ``json`` wrote; nil when it is not that.
    init?(json: JSON) {
        guard let value = json["value"]?.integerValue, (1...65535).contains(value),
            let hash = json["hash"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
        else { return nil }
        self.value = value
        contentHash = Array(hash)
    }
}
