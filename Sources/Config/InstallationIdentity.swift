import Foundation
import Gateway

/// The gateway's MQTT client id when the configuration names none: `homegate-` and 8 random hex
/// digits, made once and kept in the data directory (`client-id`) beside the home database, so it
/// stays with the installation across restarts and upgrades, and two gateways on one broker (two
/// hubs, a copy of the config) never take each other's session.
package enum InstallationIdentity {
    /// The file in the data directory that holds the id.
    package static let fileName = "client-id"

    /// The installation's client id, read from `directory` or made and written there now. With
    /// `persistent` off (a database in memory) a new id is made each time and nothing is written.
    package static func clientID(inDirectory directory: String, persistent: Bool = true) throws -> String {
        guard persistent else { return makeID() }
        let path = (directory as NSString).appendingPathComponent(fileName)
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if isUsable(id) { return id }
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let id = makeID()
        // Written whole or not at all, so a power cut never leaves half an id.
        try Data("\(id)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return id
    }

    private static func makeID() -> String {
        String(format: "homegate-%08x", UInt32.random(in: .min ... .max))
    }

    /// An id a broker takes: printable ASCII without spaces, at most 64 bytes.
    private static func isUsable(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
