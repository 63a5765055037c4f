import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A private mosquitto on loopback, for tests and `homegate demo`: its config is written for the run
/// into its own folder, it listens on free 127.0.0.1 ports (or the ones asked for), `start` returns
/// once every listener accepts connections, and `stop` ends it. It can be stopped, killed and started
/// again on the same ports and folder, so persistence and reconnects can be exercised.
package final class MosquittoBroker: Sendable {
    /// What the broker should enforce. The defaults: anonymous clients allowed, no TLS, no persistence.
    package struct Configuration: Sendable {
        /// The plain MQTT port; nil picks a free one.
        package var port: Int?
        /// Allow clients without username (when neither passwords nor dynamic security say otherwise).
        package var allowAnonymous: Bool
        /// username → password; written to a mosquitto password file (hashed with mosquitto_passwd).
        package var passwords: [String: String]?
        /// The text of a mosquitto `acl_file`.
        package var accessRules: String?
        /// A TLS listener with these files, on a port of its own.
        package var tls: TLSListener?
        /// Load mosquitto's dynamic-security plugin with an admin account of this name and password.
        package var dynamicSecurity: DynamicSecurity?
        /// Keep retained messages and sessions on disk across restarts.
        package var persistence: Bool
        /// Extra mosquitto.conf lines, appended as they are.
        package var extraLines: [String]
        /// Lines for each listener itself (its settings, such as `max_qos`), after its `listener`
        /// line: before any listener they would open mosquitto's default one.
        package var listenerLines: [String]
        /// Start mosquitto in a process group of its own: a terminal's Ctrl-C then reaches only the
        /// parent, which stops the broker after its own goodbye (`homegate demo`). Tests leave it
        /// in theirs, so that a Ctrl-C of the test run stops their brokers too.
        package var ownProcessGroup = false

        package struct TLSListener: Sendable {
            package var port: Int?
            package var certificateFile: String
            package var keyFile: String
            package init(port: Int? = nil, certificateFile: String, keyFile: String) {
                self.port = port
                self.certificateFile = certificateFile
                self.keyFile = keyFile
            }
        }

        package struct DynamicSecurity: Sendable {
            package var adminUsername: String
            package var adminPassword: String
            package init(adminUsername: String = "admin", adminPassword: String) {
                self.adminUsername = adminUsername
                self.adminPassword = adminPassword
            }
        }

        package init(
            port: Int? = nil, allowAnonymous: Bool = true, passwords: [String: String]? = nil,
            accessRules: String? = nil, tls: TLSListener? = nil, dynamicSecurity: DynamicSecurity? = nil,
            persistence: Bool = false, extraLines: [String] = [], listenerLines: [String] = []
        ) {
            self.port = port
            self.allowAnonymous = allowAnonymous
            self.passwords = passwords
            self.accessRules = accessRules
            self.tls = tls
            self.dynamicSecurity = dynamicSecurity
            self.persistence = persistence
            self.extraLines = extraLines
            self.listenerLines = listenerLines
        }
    }

    package let configuration: Configuration
    /// The folder holding the config, password and ACL files, the log and the persistence file.
    package let directory: String
    package let port: Int
    package let tlsPort: Int?
    private let ownsDirectory: Bool
    let process = Mutex<ChildProcess?>(nil)

    /// Prepares the folder and files and starts the broker; returns once it accepts connections.
    /// Without `directory` a temporary folder is made, and removed again by `stop(removingFiles:)`.
    /// A free port is free only until someone takes it: when no port was asked for and another
    /// socket took the one picked before mosquitto could bind it, the start is tried again (up to
    /// 5 times) on new ports.
    package static func start(_ configuration: Configuration = Configuration(), directory: String? = nil) async throws
        -> MosquittoBroker
    {
        let picksPorts = configuration.port == nil && configuration.tls?.port == nil
        var attempt = 1
        while true {
            let broker = try MosquittoBroker(configuration: configuration, directory: directory)
            do {
                try await broker.start()
                return broker
            } catch is BrokerError
                where picksPorts && attempt < 5 && !broker.isRunning && broker.log.contains("Address already in use")
            {
                await broker.stop(removingFiles: true)
                attempt += 1
            }
        }
    }

    private init(configuration: Configuration, directory: String?) throws {
        self.configuration = configuration
        if let directory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.directory = directory
            ownsDirectory = false
        } else {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "homegate-broker-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            self.directory = folder.path
            ownsDirectory = true
        }
        port = try configuration.port ?? LoopbackPort.free()
        tlsPort = try configuration.tls.map { try $0.port ?? LoopbackPort.free() }
        try writeFiles()
    }

    package var configFile: String { "\(directory)/mosquitto.conf" }
    package var logFile: String { "\(directory)/mosquitto.log" }
    /// The running broker's process id, so that a broker left behind by a killed parent can be
    /// found and stopped (``stopLeftover(in:)``).
    private static func pidFile(in directory: String) -> String { "\(directory)/mosquitto.pid" }

    /// What the broker logged so far.
    package var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// True while the broker process runs.
    package var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    // MARK: Lifecycle

    /// Starts the broker process (again) and waits until every listener accepts connections.
    package func start() async throws {
        guard !isRunning else { return }
        let runningBefore = Self.runningLines(in: log)
        let running = try ChildProcess(
            "mosquitto", ["-c", configFile], outputFile: logFile, ownProcessGroup: configuration.ownProcessGroup)
        process.withLock { $0 = running }
        try? "\(running.pid)\n".write(toFile: Self.pidFile(in: directory), atomically: true, encoding: .utf8)
        let ports = [port] + (tlsPort.map { [$0] } ?? [])
        let deadline = ContinuousClock.now + .seconds(15)
        // Something else may listen on a port picked free a moment ago: the broker is up once it
        // logged that it runs (after binding its listeners; the log is appended to across restarts)
        // and its ports accept connections.
        func hasLoggedRunning() -> Bool { Self.runningLines(in: log) > runningBefore }
        while !(hasLoggedRunning() && ports.allSatisfy(LoopbackPort.isListening)) {
            guard running.isRunning else {
                throw BrokerError("mosquitto exited at start (wait status \(running.exitStatus ?? 0)):\n\(log)")
            }
            guard ContinuousClock.now < deadline else {
                await stop()
                throw BrokerError("mosquitto did not listen on \(ports) within 15 s:\n\(log)")
            }
            // Polled: mosquitto says it is ready only in its log and by listening, no event to wait on.
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// How many times the log says a broker started running ("mosquitto version 2.0.11 running").
    private static func runningLines(in log: String) -> Int {
        log.split(separator: "\n").count { $0.contains("mosquitto version ") && $0.hasSuffix(" running") }
    }

    /// Stops the broker with SIGTERM (it saves its persistence file) or kills it with SIGKILL, as a
    /// crash would, and waits until it has exited.
    package func stop(with signal: Int32 = SIGTERM) async {
        guard let running = process.withLock({ $0 }) else { return }
        running.send(signal)
        await running.waitForExit()
        process.withLock { $0 = nil }
        try? FileManager.default.removeItem(atPath: Self.pidFile(in: directory))
    }

    /// Stops the broker and removes its folder if this object made it.
    package func stop(removingFiles: Bool) async {
        await stop()
        if removingFiles && ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Stops a broker that an earlier run left running in `directory`: its parent was killed
    /// (SIGKILL gives it no chance to stop its child), so the broker still holds the port and the
    /// persistence file. Only a mosquitto process started with this folder's config is stopped.
    /// Returns whether there was one.
    package static func stopLeftover(in directory: String) async -> Bool {
        guard let text = try? String(contentsOfFile: pidFile(in: directory), encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0
        else { return false }
        defer { try? FileManager.default.removeItem(atPath: pidFile(in: directory)) }
        func isOurs() -> Bool {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.first?.hasSuffix("mosquitto") == true && arguments.contains("\(directory)/mosquitto.conf")
        }
        guard isOurs() else { return false }
        Glibc.kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while isOurs() {
            if ContinuousClock.now >= deadline { Glibc.kill(pid, SIGKILL) }
            // Polled: another process's exit (not our child) gives no event to wait on.
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Writes new acl_file rules and makes the running broker read them (SIGHUP, as
    /// `systemctl reload mosquitto` does). Returns false when the rules were already these.
    package func reload(accessRules: String) throws -> Bool {
        let file = "\(directory)/acl"
        guard configuration.accessRules != nil else { throw BrokerError("this broker runs without an acl_file") }
        guard (try? String(contentsOfFile: file, encoding: .utf8)) != accessRules else { return false }
        try accessRules.write(toFile: file, atomically: true, encoding: .utf8)
        process.withLock { $0 }?.send(SIGHUP)
        return true
    }

    // MARK: Files

    private func writeFiles() throws {
        var lines = [
            "# Written by homegate for a private broker on loopback.",
            "per_listener_settings false",
            "set_tcp_nodelay true",
            // QoS 1 messages held for a client that has not taken them yet; past this mosquitto drops
            // them silently. With its default of 1,000, a gateway frozen for 3 s under 500 commands/s
            // lost about 480 of them (SoakTests.frozenGateway); see Config/mosquitto.conf.
            "max_queued_messages 20000",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
            // As root mosquitto would drop to the mosquitto user, which cannot read this folder.
            "user root",
            "allow_anonymous \(configuration.allowAnonymous)",
        ]
        if configuration.persistence {
            lines += ["persistence true", "persistence_location \(directory)/", "autosave_interval 1"]
        }
        if let passwords = configuration.passwords {
            let file = "\(directory)/passwords"
            let plain = passwords.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: "\n")
            try (plain + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            try Command.run("mosquitto_passwd", ["-U", file])
            lines.append("password_file \(file)")
        }
        if let rules = configuration.accessRules {
            let file = "\(directory)/acl"
            try rules.write(toFile: file, atomically: true, encoding: .utf8)
            lines.append("acl_file \(file)")
        }
        if let security = configuration.dynamicSecurity {
            let file = "\(directory)/dynamic-security.json"
            if !FileManager.default.fileExists(atPath: file) {
                try Command.run(
                    "mosquitto_ctrl", ["dynsec", "init", file, security.adminUsername, security.adminPassword])
            }
            lines += ["plugin \(try Self.dynamicSecurityPlugin())", "plugin_opt_config_file \(file)"]
        }
        lines += configuration.extraLines
        lines.append("listener \(port) 127.0.0.1")
        lines += configuration.listenerLines
        if let tls = configuration.tls, let tlsPort {
            lines += ["listener \(tlsPort) 127.0.0.1", "certfile \(tls.certificateFile)", "keyfile \(tls.keyFile)"]
            lines += configuration.listenerLines
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    /// Where Debian (any architecture) or a local build keeps mosquitto's dynamic-security plugin.
    static func dynamicSecurityPlugin() throws -> String {
        let name = "mosquitto_dynamic_security.so"
        var candidates = ["/usr/lib/\(name)", "/usr/local/lib/\(name)"]
        if let folders = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib") {
            candidates += folders.map { "/usr/lib/\($0)/\(name)" }
        }
        guard let found = candidates.first(where: FileManager.default.fileExists) else {
            throw BrokerError(
                "mosquitto's dynamic-security plugin (\(name)) is not installed (apt-get install -y mosquitto)")
        }
        return found
    }
}
