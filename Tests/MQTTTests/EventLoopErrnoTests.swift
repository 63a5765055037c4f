import Foundation
import Synchronization
import Testing

@testable import MQTT

/// A connection the loop serves ends with the `errno` of its call that failed, not the one the rest
/// of the pass left on the loop's thread (another connection's read, the jobs, the writes): the
/// reason a lost connection is logged and announced with.
@Suite(.timeLimit(.minutes(5)))
struct EventLoopErrnoTests {
    @Test func aFailedReadEndsWithItsOwnErrno() async throws {
        let loop = EventLoopThread(name: "errno-loop")
        var failingPipe: [Int32] = [-1, -1]
        var otherPipe: [Int32] = [-1, -1]
        #expect(pipe(&failingPipe) == 0 && pipe(&otherPipe) == 0)
        let otherEnds = Atomic(false)
        // Fails as libmosquitto does on a reset connection: MOSQ_ERR_ERRNO with ECONNRESET
        let failing = EventLoopThread.Source(
            descriptor: failingPipe[0], wantsToWrite: { false },
            read: {
                errno = ECONNRESET
                return 14
            }, write: { 0 }, tick: { 0 })
        // Served after it in every pass (its byte is never read, so it is always readable), and
        // leaves EAGAIN behind as a read of an empty socket does
        let other = EventLoopThread.Source(
            descriptor: otherPipe[0], wantsToWrite: { false },
            read: {
                errno = EAGAIN
                return 0
            }, write: { 0 }, tick: { otherEnds.load(ordering: .relaxed) ? 1 : 0 })
        var byte: UInt8 = 1
        let ended = await withCheckedContinuation { (done: CheckedContinuation<(Int32, Int32), Never>) in
            #expect(loop.attach(failing) { done.resume(returning: ($0, errno)) })
            #expect(loop.attach(other) { _ in })
            _ = write(otherPipe[1], &byte, 1)
            _ = write(failingPipe[1], &byte, 1)
        }
        otherEnds.store(true, ordering: .relaxed)
        #expect(ended.0 == 14)
        #expect(ended.1 == ECONNRESET, "errno \(String(cString: strerror(ended.1)))")
        loop.stop()
        for descriptor in failingPipe + otherPipe { close(descriptor) }
    }
}
