import Broker
import Execution
import Foundation
import HomeKitBridge
import HomeModel
import Logging
import ServiceLifecycle
import TestSupport
import Testing

/// scripts/homekit-controller.py: aiohomekit, Home Assistant's HomeKit controller library, talking
/// to a bridge on 127.0.0.1:`port`; its pairing is kept in a file between commands.
struct HomeKitController: Sendable {
    static let python = repositoryRoot.appendingPathComponent(".build/venv/bin/python").path
    static let script = repositoryRoot.appendingPathComponent("scripts/homekit-controller.py").path

    let port: Int
    let folder: String
    var pairingFile: String { "\(folder)/pairing.json" }

    /// Runs one command to its end; its JSON lines, and whether it succeeded.
    func run(_ arguments: String...) async throws -> (succeeded: Bool, lines: [[String: Any]]) {
        let process = try start(arguments)
        let status = await process.process.waitForExit()
        return (status == 0, process.lines())
    }

    /// Runs one command that must succeed; its last line.
    func expect(_ arguments: String...) async throws -> [String: Any] {
        let process = try start(arguments)
        let status = await process.process.waitForExit()
        let lines = process.lines()
        #expect(status == 0, "homekit-controller.py \(arguments.joined(separator: " ")): \(lines)")
        return lines.last ?? [:]
    }

    /// Starts a command that runs on (a `watch`).
    func start(_ arguments: [String]) throws -> RunningCommand {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw TimedOut("aiohomekit is not installed: run `make test` (scripts/install-python-tools.sh)")
        }
        let output = "\(folder)/controller-\(UUID().uuidString.prefix(8)).log"
        let process = try ChildProcess(
            Self.python,
            [Self.script, "--port", "\(port)", "--pairing-file", pairingFile] + arguments, outputFile: output)
        return RunningCommand(process: process, output: output)
    }

    struct RunningCommand: Sendable {
        let process: ChildProcess
        let output: String

        func lines() -> [[String: Any]] {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        /// Waits until the command printed a line with this `event`.
        func line(_ event: String, within timeout: Duration = .seconds(60)) async throws -> [String: Any] {
            try await eventuallyValue("a '\(event)' line of homekit-controller.py: \(lines())", timeout: timeout) {
                lines().last { $0["event"] as? String == event }
            }
        }
    }
}

/// A HomeKit bridge of `home` served on a free loopback port while `body` runs, on `manager`.
func withHomeKitBridge<T>(
    home: String = "Main House", account: String = "owner", manager: HomeManager,
    clock: AnyClock = AnyClock(ContinuousClock()), _ body: (HomeBridge, Int) async throws -> T
) async throws -> T {
    var logger = Logger(label: "test.homekit")
    logger.logLevel = .critical
    let (started, continuation) = AsyncStream.makeStream(of: (HomeBridge, Int).self)
    let service = HomeKitBridgeService(
        bridges: [.init(.init(home: home, account: account, port: 0), host: "127.0.0.1")], manager: manager,
        loop: nil, logger: logger, clock: clock, firmware: "test"
    ) { bridge, listener in continuation.yield((bridge, listener.port)) }
    let running = Task { try await service.run() }
    defer { running.cancel() }
    var iterator = started.makeAsyncIterator()
    guard let (bridge, port) = await iterator.next() else { throw TimedOut("the bridge did not start") }
    let result = try await body(bridge, port)
    running.cancel()
    _ = await running.result
    return result
}
