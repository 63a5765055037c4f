import MQTT
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
}
