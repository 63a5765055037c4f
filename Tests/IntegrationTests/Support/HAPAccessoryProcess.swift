import Broker
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// scripts/hap-accessory.py, a real HomeKit bridge (HAP-python) with a Lightbulb, a Switch and a
/// TemperatureSensor, on 127.0.0.1:`port` without mDNS; its JSON lines (ready, write, changed) are
/// read from its output file. Restarting it on the same state folder keeps its pairings.
final class HAPAccessoryProcess: Sendable {
    static let python = repositoryRoot.appendingPathComponent(".build/venv/bin/python").path
    static let script = repositoryRoot.appendingPathComponent("scripts/hap-accessory.py").path
    static let pairingID = "1A:2B:3C:4D:5E:6F"

    let port: Int
    let setupCode: String
    let stateFolder: String
    let output: String
    let process: ChildProcess

    /// Starts the bridge and waits for its readiness line. The port 0 would be the system's pick,
    /// but a restart needs the same one, so a free one is chosen.
    init(
        port: Int? = nil, setupCode: String, folder: String, run: Int = 0, doorbell: Bool = false,
        ownedNames: Bool = false, options: [String] = []
    ) async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw TimedOut("HAP-python is not installed: run `make test` (scripts/install-python-tools.sh)")
        }
        self.port = try port ?? LoopbackPort.free()
        self.setupCode = setupCode
        stateFolder = "\(folder)/hap-state"
        output = "\(folder)/hap-accessory-\(run).log"
        process = try ChildProcess(
            Self.python,
            [
                Self.script, "--name", "Test Bridge", "--port", "\(self.port)", "--setup-code", setupCode,
                "--state-dir", stateFolder, "--pairing-id", Self.pairingID,
            ] + (doorbell ? ["--doorbell"] : []) + (ownedNames ? ["--owned-names"] : []) + options,
            outputFile: output)
        _ = try await line("ready") { $0["event"] as? String == "ready" }
    }

    /// The JSON lines printed so far.
    func lines() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Waits for a line that matches (the bridge's own output: it is not a HomeKit event stream).
    func line(_ what: String, within timeout: Duration = .seconds(60), _ matches: ([String: Any]) -> Bool)
        async throws -> [String: Any]
    {
        try await eventuallyValue(
            "hap-accessory.py's \(what) line:\n\((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")",
            timeout: timeout
        ) {
            if let found = lines().first(where: matches) { return found }
            guard process.isRunning else {
                let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                throw TimedOut("hap-accessory.py exited without printing \(what):\n\(text)")
            }
            return nil
        }
    }

    /// Warms the sensor by 0.5 °C (SIGUSR1): an event for subscribed controllers.
    func warm() { process.send(SIGUSR1) }

    /// Presses the doorbell once (SIGUSR2; started with `doorbell`).
    func ring() { process.send(SIGUSR2) }

    func stop() async {
        process.send(SIGKILL)
        await process.waitForExit()
    }
}
