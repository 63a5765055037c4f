import Dispatch
import MQTT
import Synchronization
import Testing

@Suite("EventLoopThread: tasks on the connection's thread", .timeLimit(.minutes(1)))
struct EventLoopThreadTests {
    /// A default actor: it runs wherever the task calling it prefers.
    actor Counter {
        var count = 0
        func increment(checking loop: EventLoopThread) -> Bool {
            count += 1
            return loop.isCurrent
        }
    }

    @Test("a task that prefers the loop runs on its thread, and so do the actors it calls")
    func tasksRunOnTheLoop() async {
        let loop = EventLoopThread(name: "test-loop")
        defer { loop.stop() }
        let counter = Counter()

        // Given tasks on the global executor, which are not on the loop
        #expect(!loop.isCurrent)

        // When a task prefers the loop, with child tasks that call an actor, awake and after sleeping
        let onLoop = await withTaskExecutorPreference(loop) {
            await withTaskGroup(of: [Bool].self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let before = await counter.increment(checking: loop)
                        try? await Task.sleep(for: .milliseconds(1))
                        return [loop.isCurrent, before, await counter.increment(checking: loop)]
                    }
                }
                return await group.reduce(into: [Bool]()) { $0 += $1 }
            }
        }

        // Then every step ran on the loop's thread, and none was lost
        #expect(onLoop.count == 150)
        #expect(onLoop.allSatisfy { $0 })
        #expect(await counter.count == 100)
    }

    @Test("after stop, tasks that prefer the loop still run, on the global executor")
    func stoppedLoopHandsOver() async {
        let loop = EventLoopThread(name: "test-loop")
        let ranBefore = await withTaskExecutorPreference(loop) { loop.isCurrent }

        loop.stop()
        let ranAfter = await withTaskExecutorPreference(loop) { () async -> Bool in
            await Task.yield()
            return loop.isCurrent
        }

        #expect(ranBefore)
        #expect(!ranAfter)
    }

    /// What ran, in order, from any thread.
    final class Log: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ entry: String) { storage.withLock { $0.append(entry) } }
        var entries: [String] { storage.withLock { $0 } }
    }

    @Test("a job above medium priority runs before ordinary jobs queued earlier")
    func urgentJobsGoFirst() async {
        let loop = EventLoopThread(name: "test-loop")
        defer { loop.stop() }
        let order = Log()
        let blocked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        // Given the loop busy with a job that waits until both tasks below are queued
        let busy = Task(executorPreference: loop) {
            blocked.signal()
            release.wait()
        }
        blocked.wait()
        let ordinary = Task(executorPreference: loop, priority: .medium) { order.append("ordinary") }
        let urgent = Task(executorPreference: loop, priority: .high) { order.append("urgent") }

        // When the busy job ends
        release.signal()
        await busy.value
        await ordinary.value
        await urgent.value

        // Then the urgent one ran first, though it was queued last
        #expect(order.entries == ["urgent", "ordinary"])
    }

    @Test("nextPass returns on the loop, serving or not, and at once after stop")
    func nextPassReturns() async {
        let loop = EventLoopThread(name: "test-loop")
        let onLoop = await withTaskExecutorPreference(loop) { () async -> Bool in
            await loop.nextPass()
            return loop.isCurrent
        }
        loop.stop()
        await loop.nextPass()
        #expect(onLoop)
    }
}
