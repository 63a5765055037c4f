import Synchronization
import Testing

@testable import Gateway

@Suite("PublishingProgress: answers wait for what they changed to be published", .timeLimit(.minutes(1)))
struct PublishingProgressTests {
    @Test("a mark already published returns at once; a later one once enough events are published")
    func releasedAtItsMark() async throws {
        let progress = PublishingProgress()
        progress.start(at: 5)
        await progress.wait(until: 5)  // already published: returns at once
        let waiter = Task {
            await progress.wait(until: 7)
            return true
        }
        progress.advance()
        progress.advance()
        #expect(await waiter.value)
    }

    @Test("a waiter whose mark is not reached yet stays waiting")
    func staysWaiting() async throws {
        let progress = PublishingProgress()
        progress.start(at: 0)
        let released = Flag()
        let waiter = Task {
            await progress.wait(until: 2)
            released.set()
        }
        progress.advance()
        try await Task.sleep(for: .milliseconds(100))
        #expect(!released.isSet)
        progress.advance()
        await waiter.value
        #expect(released.isSet)
    }

    @Test("when publishing stops, every waiter is released, and later ones return at once")
    func finishReleasesAll() async {
        let progress = PublishingProgress()
        let waiters = (0..<10).map { index in Task { await progress.wait(until: 100 + index) } }
        progress.finish()
        for waiter in waiters { await waiter.value }
        await progress.wait(until: 1_000)
    }
}

private final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
