import Foundation

/// Runs a helper program (openssl, mosquitto_passwd, mosquitto_ctrl) to completion and returns what
/// it printed; a non-zero exit becomes a `BrokerError` that carries that output.
package enum Command {
    @discardableResult
    package static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locate(executable))
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BrokerError("could not start \(executable): \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw BrokerError(
                "\(executable) \(arguments.joined(separator: " ")) failed (exit \(process.terminationStatus)): \(text)")
        }
        return text
    }

    /// Finds a program on PATH, then in the sbin folders that Debian uses for daemons.
    static func locate(_ name: String) throws -> String {
        if name.hasPrefix("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders =
            path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin"]
        for folder in folders {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BrokerError("\(name) is not installed (on Debian: apt-get install -y mosquitto mosquitto-clients)")
    }
}

/// A failure to prepare, start or talk to the private broker, with what the tools said.
package struct BrokerError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
