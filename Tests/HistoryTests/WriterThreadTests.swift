import Foundation
import Testing

@testable import History

/// The history's writes run on a thread of their own at the lowest priority, and only that thread is
/// lowered: the gateway's loop and the rest of the process keep theirs.
@Suite("The history's writer thread")
struct WriterThreadTests {
    /// Field `number` (as proc(5) counts them) of the `stat` of the thread `id` of this process.
    static func statField(_ number: Int, ofThread id: String) throws -> Int? {
        let stat = try String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8)
        // The name, in parentheses, may hold spaces: the fields are counted after it, from the third.
        guard let end = stat.range(of: ")", options: .backwards) else { return nil }
        let fields = stat[end.upperBound...].split(separator: " ")
        return Int(fields[number - 3])
    }

    static func niceValue(ofThread id: String) throws -> Int? { try statField(19, ofThread: id) }

    static func policy(ofThread id: String) throws -> Int? { try statField(41, ofThread: id) }

    /// The process's threads by name. A thread that ended after the listing (the other suites start
    /// and end threads meanwhile) has no `comm` left to read and is not one of them.
    static func threads(named name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").filter { id in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .newlines) == name
        }
    }

    @Test(
        "a store on file writes at SCHED_IDLE and nice 19 on its own thread; the process's main thread keeps its priority"
    )
    func lowPriorityOnItsOwnThread() async throws {
        let before = try #require(try Self.niceValue(ofThread: "\(getpid())"))
        let policyBefore = try #require(try Self.policy(ofThread: "\(getpid())"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Given the gateway's store on file
        let store = try HistoryStore.open(atPath: directory.appendingPathComponent(HistoryStore.fileName).path)

        // Then its thread is idle-scheduled at nice 19, named for top and perf, and a write is done there
        #expect(store.thread.niceValue == 19)
        #expect(store.thread.policy == WriterThread.idlePolicy)
        let ids = try Self.threads(named: "homegate-histor")
        #expect(!ids.isEmpty)
        // (Other suites' stores have threads of that name too, which may end meanwhile.)
        #expect(
            ids.contains {
                (try? Self.niceValue(ofThread: $0)) == 19
                    && (try? Self.policy(ofThread: $0)) == Int(WriterThread.idlePolicy)
            })
        let writtenOn = try await store.thread.run {
            try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        }
        #expect(writtenOn.trimmingCharacters(in: .newlines) == "homegate-histor")

        // And the process (its main thread) and the caller's thread are as they were
        #expect(try Self.niceValue(ofThread: "\(getpid())") == before)
        #expect(try Self.policy(ofThread: "\(getpid())") == policyBefore)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
        #expect(sched_getscheduler(0) == Int32(policyBefore))
    }

    @Test("a store asked for normal priority does not lower its thread")
    func normalPriority() throws {
        let store = try HistoryStore.inMemory()
        #expect(store.thread.niceValue == getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        #expect(store.thread.policy == sched_getscheduler(0))
    }
}
