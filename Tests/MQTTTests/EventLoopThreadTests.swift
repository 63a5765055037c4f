import Dispatch
import Foundation
import MQTT
import Synchronization
import Testing

@Suite("EventLoopThread: actors on the connection's thread", .timeLimit(.minutes(5)))
struct EventLoopThreadTests {
    /// An actor that runs on the loop, as the gateway's manager and publisher do.
    actor OnLoop {
        let loop: EventLoopThread
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
        var count = 0
        let log = Log()

        init(_ loop: EventLoopThread) { self.loop = loop }

        func increment() -> Bool {
            count += 1
            return loop.isCurrent
        }

        /// On the loop, awake and after sleeping, and in another actor on the loop.
        func step(_ other: OnLoop) async -> [Bool] {
            let before = loop.isCurrent
            try? await Task.sleep(for: .milliseconds(1))
            return [before, loop.isCurrent, await other.increment()]
        }

        /// Holds the loop until `release`, after queueing an ordinary task and then an urgent one.
        func queueBehind(_ blocked: DispatchSemaphore, release: DispatchSemaphore) -> [Task<Void, Never>] {
            let ordinary = Task(priority: .medium) { self.log.append("ordinary") }
            let urgent = Task(priority: .high) { self.log.append("urgent") }
            blocked.signal()
            release.wait()
            return [ordinary, urgent]
        }

        func afterNextPass() async -> Bool {
            await loop.nextPass()
            return loop.isCurrent
        }
    }

    @Test("an actor on the loop runs on its thread, also after it suspends, and calls another one there")
    func actorsRunOnTheLoop() async {
        let loop = EventLoopThread(name: "test-loop")
        defer { loop.stop() }
        let first = OnLoop(loop)
        let second = OnLoop(loop)

        // Given tasks on the global executor, which are not on the loop
        #expect(!loop.isCurrent)

        // When many tasks call the first actor, which sleeps and calls the second
        let onLoop = await withTaskGroup(of: [Bool].self) { group in
            for _ in 0..<50 { group.addTask { await first.step(second) } }
            return await group.reduce(into: [Bool]()) { $0 += $1 }
        }

        // Then every step ran on the loop's thread, and none was lost
        #expect(onLoop.count == 150)
        #expect(onLoop.allSatisfy { $0 })
        #expect(await second.count == 50)
    }

    @Test("after stop, an actor on the loop still runs, off its thread, one job at a time")
    func stoppedLoopHandsOver() async {
        let loop = EventLoopThread(name: "test-loop")
        let actor = OnLoop(loop)
        let ranBefore = await actor.increment()

        loop.stop()
        let ranAfter = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 { group.addTask { await actor.increment() } }
            return await group.reduce(false) { $0 || $1 }
        }

        #expect(ranBefore)
        #expect(!ranAfter)
        #expect(await actor.count == 21)
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
        let actor = OnLoop(loop)
        let blocked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        // Given the loop busy with a job that queued an ordinary task and then an urgent one
        let busy = Task { await actor.queueBehind(blocked, release: release) }
        blocked.wait()

        // When the busy job ends
        release.signal()
        for task in await busy.value { await task.value }

        // Then the urgent one ran first, though it was queued last
        #expect(actor.log.entries == ["urgent", "ordinary"])
    }

    @Test("nextPass returns on the loop, serving or not, and at once after stop")
    func nextPassReturns() async {
        let loop = EventLoopThread(name: "test-loop")
        let onLoop = await OnLoop(loop).afterNextPass()
        loop.stop()
        await loop.nextPass()
        #expect(onLoop)
    }

    @Test("the loop comes to rest once after work: a whole quiet timeout while it serves a connection")
    func restsOnceAfterWork() async {
        let (rests, rest) = AsyncStream.makeStream(of: Int.self)
        let (passes, pass) = AsyncStream.makeStream(of: Int.self)
        let restCount = Atomic(0)
        let passCount = Atomic(0)
        let stopping = Atomic(false)
        let loop = EventLoopThread(name: "test-loop") {
            rest.yield(restCount.add(1, ordering: .relaxed).newValue)
        }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        // A connection with nothing to say: the loop polls it with its timeout.
        let quiet = EventLoopThread.Source(
            descriptor: ends[0], wantsToWrite: { false }, read: { 0 }, write: { 0 },
            tick: {
                pass.yield(passCount.add(1, ordering: .relaxed).newValue)
                return stopping.load(ordering: .relaxed) ? 1 : 0
            })
        var restsSeen = rests.makeAsyncIterator()
        var passesSeen = passes.makeAsyncIterator()

        // Given a loop serving a connection that has worked (run a job) and then was quiet
        #expect(loop.attach(quiet) { _ in })
        #expect(await OnLoop(loop).increment())
        #expect(await restsSeen.next() == 1)

        // When it stays quiet for two more whole timeouts
        let passesAtRest = passCount.load(ordering: .relaxed)
        while let seen = await passesSeen.next(), seen < passesAtRest + 3 {}

        // Then it did not come to rest again
        #expect(restCount.load(ordering: .relaxed) == 1)

        // When a job runs on it, it comes to rest once more after it
        #expect(await OnLoop(loop).increment())
        #expect(await restsSeen.next() == 2)

        stopping.store(true, ordering: .relaxed)
        _ = write(ends[1], [UInt8(1)], 1)
        loop.stop()
        for end in ends { close(end) }
    }
}
