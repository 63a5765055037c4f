import Broker
import Foundation
import JSON
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The repository's folder (for scripts/ and .build/venv).
let repositoryRoot = demoHomeFile.deletingLastPathComponent().deletingLastPathComponent()

@Suite("The web page in a real browser", .timeLimit(.minutes(3)))
struct WebBrowserTests {
    static let accounts = ["owner", "guest", "stranger", "homegate"]

    /// Runs scripts/web-browser-test.py (headless chromium through selenium, installed by `make
    /// test`) against `homegate run` with the demo home. HOMEGATE_SCREENSHOTS keeps the screenshots
    /// in that folder (docs/ holds the ones made so).
    @Test("owner and guest in chromium: log in, switch a lamp, see an MQTT change live, guest without layout controls")
    func browser() async throws {
        try await withPageInBrowser(clientID: "browser-gateway") { broker, webPort, runScript in
            let lampOff = try await withAccount("owner", to: broker) { owner in
                try await owner.retained("homegate/Main House/Living Room/Floor Lamp/Lightbulb/On", becomes: "false")
            }
            #expect(lampOff)
            try await runScript(
                "web-browser-test.py", ["--broker-port", "\(broker.port)"], "all browser checks passed")
        }
    }

    /// Runs scripts/history-browser-test.py against `homegate run` with the demo home, after the
    /// owner set the Floor Lamp's brightness to three values over MQTT: chromium opens the lamp's
    /// history as the guest and checks the plot is drawn from them, and the card's small line.
    @Test("a guest in chromium: the lamp's history plot draws the values set over MQTT, and its card the day's line")
    func historyPlot() async throws {
        try await withPageInBrowser(clientID: "history-browser-gateway") { broker, _, runScript in
            let values = [20, 80, 45]
            try await withAccount("owner", to: broker) { owner in
                for value in values {
                    let answer = try await owner.command(
                        "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness/set/owner", "\(value)")
                    #expect(answer.isOK, "\(answer.serialized)")
                }
            }
            try await runScript(
                "history-browser-test.py", ["--values", values.map(String.init).joined(separator: ",")],
                "all history browser checks passed")
        }
    }

    /// Runs a script of scripts/ with `.build/venv`'s python: its name, its own arguments (`--url`
    /// and `--screenshots` come first), and what it prints when every check passed.
    typealias ScriptRunner = (String, [String], String) async throws -> Void

    /// A real broker with password accounts and `homegate run` with the demo home and its page;
    /// `body` gets the broker, the page's port and a runner of browser scripts that expects the
    /// script to pass (printing what it saw, and the gateway's log when it failed). The gateway then
    /// stops cleanly. Records an issue when chromium or the venv is missing.
    private func withPageInBrowser(
        clientID: String, _ body: (MosquittoBroker, Int, ScriptRunner) async throws -> Void
    ) async throws {
        let python = repositoryRoot.appendingPathComponent(".build/venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python),
            FileManager.default.fileExists(atPath: "/usr/bin/chromedriver")
        else {
            Issue.record(
                "the browser tests need chromium and .build/venv: run `make test` (or scripts/install-browser.sh and scripts/install-python-tools.sh)"
            )
            return
        }
        let passwords = Dictionary(uniqueKeysWithValues: Self.accounts.map { ($0, $0) })
        try await withBroker(.init(allowAnonymous: false, passwords: passwords)) { broker in
            let (gateway, webPort) = try await startGatewayWithPage(broker, clientID: clientID)
            defer { gateway.send(SIGTERM) }
            let screenshots =
                ProcessInfo.processInfo.environment["HOMEGATE_SCREENSHOTS"] ?? "\(broker.directory)/screenshots"
            try await body(broker, webPort) { name, arguments, passed in
                let output = "\(broker.directory)/\(name).log"
                let script = try ChildProcess(
                    python,
                    [
                        repositoryRoot.appendingPathComponent("scripts/\(name)").path,
                        "--url", "http://127.0.0.1:\(webPort)", "--screenshots", screenshots,
                    ] + arguments, outputFile: output)
                let status = await script.waitForExit()
                let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                // What the browser saw, figures included (page lengths, how soon a value arrived).
                print(log)
                #expect(status == 0, "\(name) failed:\n\(log)")
                #expect(log.contains(passed))
                if status != 0 {
                    Issue.record(
                        "gateway log:\n\((try? String(contentsOfFile: "\(broker.directory)/homegate.log", encoding: .utf8)) ?? "")"
                    )
                }
            }
            gateway.send(SIGTERM)
            #expect(await gateway.waitForExit() == 0)
        }
    }
}
