import Broker
import Foundation
import Gateway
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The README's `mosquitto_sub`/`mosquitto_pub` lines, run as written against `homegate demo`. Only
/// the port changes: the test's demo listens on a free port instead of 1883.
@Suite("The README's MQTT lines", .timeLimit(.minutes(5)))
struct ReadmeTests {
    static let readme = demoHomeFile.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")

    /// Every line of a code block that starts with mosquitto_sub or mosquitto_pub, in order.
    static func commandLines() throws -> [String] {
        let text = try String(contentsOf: readme, encoding: .utf8)
        var inBlock = false
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock.toggle()
            } else if inBlock, line.hasPrefix("mosquitto_sub ") || line.hasPrefix("mosquitto_pub ") {
                lines.append(String(line))
            }
        }
        return lines
    }

    @Test("watching and commanding the demo works as the README says, a refused command included")
    func readmeLines() async throws {
        let lines = try Self.commandLines()
        #expect(lines.filter { $0.hasPrefix("mosquitto_sub") }.count == 2)
        #expect(lines.filter { $0.hasPrefix("mosquitto_pub") }.count == 3)
        #expect(lines.allSatisfy { $0.contains("-p 1883") })

        try await withTemporaryDirectory { directory in
            // Given the demo on a free port (another when mosquitto finds it taken: another process
            // may bind it between the choice and mosquitto's bind)
            var attempt = 1
            var started: (ChildProcess, Int)?
            while started == nil {
                let port = try LoopbackPort.free()
                let log = "\(directory)/demo.log"
                try? FileManager.default.removeItem(atPath: log)
                let demo = try ChildProcess(
                    try homegateExecutable(),
                    ["demo", "--port", "\(port)", "--web-port", "0", "--data", directory, "--home", demoHomeFile.path],
                    outputFile: log)
                try await waitFor("the demo's broker", log: log) { text in
                    text.contains("mosquitto listens on 127.0.0.1:\(port) ") || !demo.isRunning
                }
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if demo.isRunning || attempt == 5 || !text.contains("Address already in use") {
                    started = (demo, port)
                } else {
                    attempt += 1
                }
            }
            let (demo, port) = started!
            // A graceful stop also stops the demo's own broker.
            try await stopGracefully(demo) { try await runLines(lines, against: demo, port: port, in: directory) }
        }
    }

    private func runLines(_ lines: [String], against demo: ChildProcess, port: Int, in directory: String) async throws {
        do {
            let brokerLog = "\(directory)/broker/mosquitto.log"
            try await waitFor("the demo to come online", log: "\(directory)/demo.log") { _ in
                (try? String(contentsOfFile: brokerLog, encoding: .utf8))?.contains("u'homegate'") == true
            }

            // When the README's lines run: the watchers first, then the commands
            var watchers: [(process: ChildProcess, output: String)] = []
            for (index, line) in lines.enumerated() where line.hasPrefix("mosquitto_sub") {
                let output = "\(directory)/sub-\(index).txt"
                let process = try ChildProcess(
                    "/bin/sh", ["-c", "exec " + line.replacingOccurrences(of: "-p 1883", with: "-p \(port)")],
                    outputFile: output)
                watchers.append((process, output))
            }
            defer { watchers.forEach { $0.process.send(SIGTERM) } }
            try await waitFor("the watchers to connect", log: brokerLog) { log in
                log.components(separatedBy: "New client connected").count - 1 >= 2 + watchers.count
            }
            _ = try await waitForText("homegate/$homes", in: watchers[0].output)
            for line in lines where line.hasPrefix("mosquitto_pub") {
                let process = try ChildProcess(
                    "/bin/sh", ["-c", line.replacingOccurrences(of: "-p 1883", with: "-p \(port)")])
                #expect(await process.waitForExit() == 0, "\(line)")
            }

            // Then the owner sees the lamp go on (and off again with Good Night), and guest sees the refusal
            let lamp = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On"
            _ = try await waitForText("\(lamp) true", in: watchers[0].output)
            _ = try await waitForText("\(lamp) false\n", in: watchers[0].output, after: "\(lamp) true")
            let answers = try await waitForText("insufficientPrivileges", in: watchers[1].output)
            #expect(answers.contains(#"homegate/$response/guest {"id":1,"ok":false,"code":"insufficientPrivileges""#))
        }
    }

    private func waitFor(
        _ what: String, log: String, within timeout: Duration = .seconds(60), _ condition: (String) -> Bool
    ) async throws {
        try await eventually("\(what): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")", timeout: timeout)
        {
            condition((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        }
    }

    /// Waits until `file` contains `text` (after `marker`, when given); returns the file's text.
    private func waitForText(_ text: String, in file: String, after marker: String? = nil) async throws -> String {
        var content = ""
        try await waitFor("'\(text)' in \(file)", log: file) { log in
            content = log
            guard let marker, let range = log.range(of: marker) else { return marker == nil && log.contains(text) }
            return log[range.upperBound...].contains(text)
        }
        return content
    }
}
