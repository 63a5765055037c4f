import Foundation
import HomeModel
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("Crash safety")
struct CrashTests {
    /// The crash-writer executable, built next to the test bundle.
    static func crashWriter() -> URL? {
        let candidates =
            [
                URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
                Bundle.main.bundleURL,
                Bundle.main.bundleURL.deletingLastPathComponent(),
                Bundle.main.executableURL?.deletingLastPathComponent(),
            ] + Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for directory in candidates.compactMap({ $0 }) {
            for up in [
                directory, directory.deletingLastPathComponent(),
                directory.deletingLastPathComponent().deletingLastPathComponent(),
            ] {
                let url = up.appendingPathComponent("crash-writer")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// What the writer acknowledged, parsed from its output lines.
    struct Acknowledged {
        var rooms: Set<Int> = []
        var renamed: Set<Int> = []
        var lastValue = 0
        /// The highest room acknowledged: the writer writes value n only after room n's
        /// acknowledgement, so no value above it can have been written (value n itself may be
        /// durable unacknowledged, in this run or an earlier one).
        var highestRoom = 0
        /// The last value acknowledged before a later layout change of the same run was: that change's
        /// commit wrote it too, so it is durable whatever the value commit window.
        var lastValueBeforeLayout = 0
        /// The last value the running writer acknowledged (a killed one's may be lost).
        var lastValueThisRun: Int?

        /// A new writer starts: what the last one acknowledged only in memory is gone with it.
        mutating func startRun() { lastValueThisRun = nil }

        mutating func read(_ line: Substring) {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let n = Int(parts[1]) else { return }
            switch parts[0] {
            case "room":
                rooms.insert(n)
                highestRoom = max(highestRoom, n)
                if let value = lastValueThisRun { lastValueBeforeLayout = value }
            case "rename":
                renamed.insert(n)
                if let value = lastValueThisRun { lastValueBeforeLayout = value }
            case "value":
                lastValue = max(lastValue, n)
                lastValueThisRun = n
            default: break
            }
        }
    }

    /// Runs the writer on `path`, kills it once it acknowledged `killAfter` changes, and returns the
    /// lines it printed, whether it was killed and how it ended. The blocking reads and the wait run on
    /// a thread of their own: on one of the cooperative pool's threads (two on a 2-core machine) they
    /// would hold it for the whole test and starve every other test in the process.
    static func runWriter(_ writer: URL, path: String, killAfter: Int, window: Int? = nil) async throws
        -> (lines: [String], killed: Bool, reason: Process.TerminationReason)
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = writer
                        process.arguments = [path] + (window.map { ["\($0)"] } ?? [])
                        let output = Pipe()
                        process.standardOutput = output
                        try process.run()
                        var lines: [String] = []
                        var pending = ""
                        var killed = false
                        while true {
                            let data = output.fileHandleForReading.availableData
                            if data.isEmpty { break }
                            pending += String(decoding: data, as: UTF8.self)
                            while let newline = pending.firstIndex(of: "\n") {
                                lines.append(String(pending[..<newline]))
                                pending.removeSubrange(...newline)
                            }
                            if !killed && lines.count >= killAfter {
                                kill(process.processIdentifier, SIGKILL)
                                killed = true
                            }
                        }
                        process.waitUntilExit()
                        return (lines, killed, process.terminationReason)
                    })
            }.start()
        }
    }

    @Test(
        "The database survives SIGKILL at any moment with every acknowledged change",
        .timeLimit(.minutes(5)), arguments: [0, 100])
    func sigkill(valueCommitWindow window: Int) async throws {
        let writer = try #require(Self.crashWriter(), "crash-writer was not built next to the tests")
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            var acknowledged = Acknowledged()
            var generator = SystemRandomNumberGenerator()
            for round in 0..<20 {
                // Given a writer changing the database as fast as it can, when it is killed after a
                // random number of acknowledged changes
                let killAfter = Int.random(in: 1...60, using: &generator)
                let (lines, killed, reason) = try await Self.runWriter(
                    writer, path: path, killAfter: killAfter, window: window)
                acknowledged.startRun()
                for line in lines { acknowledged.read(line[...]) }
                #expect(killed, "round \(round): the writer stopped before it was killed")
                #expect(reason == .uncaughtSignal)

                // Then the file is sound and holds every change acknowledged before the kill
                let database = try HomeDatabase.open(atPath: path)
                #expect(try database.integrityCheck() == ["ok"], "round \(round)")
                let manager = try HomeManager(database: database)
                let home = try await manager.home("Crash Home", account: "writer")
                let names = Set(home.rooms.map(\.name))
                for n in acknowledged.rooms {
                    let expected = acknowledged.renamed.contains(n) ? ["Renamed \(n)"] : ["Room \(n)", "Renamed \(n)"]
                    #expect(expected.contains { names.contains($0) }, "round \(round): room \(n) is missing")
                }
                // Values: with no window each is durable before it is acknowledged; with a window
                // (group commit) the last ones may be lost, never one a later layout change saw.
                let counter = home.accessory("counter")?.services.first?.characteristic("Counter")?.value?.intValue ?? 0
                let durable = window == 0 ? acknowledged.lastValue : acknowledged.lastValueBeforeLayout
                #expect(counter >= durable, "round \(round): counter \(counter), durable \(durable)")
                #expect(counter <= acknowledged.highestRoom, "round \(round): counter \(counter) was never written")
            }
            #expect(acknowledged.rooms.count >= 20)
        }
    }
}
