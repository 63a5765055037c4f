import Foundation
import Testing

@testable import History

/// The history's writes run on a thread of their own at the lowest priority, and only that thread is
/// lowered: the gateway's loop and the rest of the process keep theirs.
@Suite("The history's writer thread")
struct WriterThreadTests {
    /// The nice value of the thread `id` of this process, from `/proc` (field 19 of its `stat`).
    static func niceValue(ofThread id: String) throws -> Int? {
        let stat = try String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8)
        // The name, in parentheses, may hold spaces: the fields are counted after it.
        guard let end = stat.range(of: ")", options: .backwards) else { return nil }
        let fields = stat[end.upperBound...].split(separator: " ")
        return Int(fields[16])
    }

    /// The process's threads by name.
    static func threads(named name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").filter { id in
            let comm = try String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
            return comm.trimmingCharacters(in: .newlines) == name
        }
    }

    @Test("a store on file writes at nice 19 on its own thread; the process's main thread keeps its priority")
    func lowPriorityOnItsOwnThread() async throws {
        let before = try #require(try Self.niceValue(ofThread: "\(getpid())"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Given the gateway's store on file
        let store = try HistoryStore.open(atPath: directory.appendingPathComponent(HistoryStore.fileName).path)

        // Then its thread is at nice 19, named for top and perf, and a write is done there
        #expect(store.thread.niceValue == 19)
        let ids = try Self.threads(named: "homegate-histor")
        #expect(!ids.isEmpty)
        #expect(try ids.contains { try Self.niceValue(ofThread: $0) == 19 })
        let writtenOn = try await store.thread.run {
            try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        }
        #expect(writtenOn.trimmingCharacters(in: .newlines) == "homegate-histor")

        // And the process (its main thread) and the caller's thread are as they were
        #expect(try Self.niceValue(ofThread: "\(getpid())") == before)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
    }

    @Test("a store asked for normal priority does not lower its thread")
    func normalPriority() throws {
        let store = try HistoryStore.inMemory()
        #expect(store.thread.niceValue == getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
    }
}
