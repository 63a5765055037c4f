import Synchronization
import Testing

@testable import AsyncMailbox

@Suite("Mailbox: an unbounded queue from senders to one task", .timeLimit(.minutes(5)))
struct MailboxTests {
    @Test("values come out in the order they were sent, those queued before the consumer came too")
    func order() async {
        let (mailbox, sender) = Mailbox.make(of: Int.self)
        for value in 0..<100 { sender.yield(value) }
        let consumer = Task {
            var received: [Int] = []
            for await value in mailbox {
                received.append(value)
                if received.count == 3_000 { break }
            }
            return received
        }
        // The rest while the consumer runs (and waits), from another task.
        await Task.detached { for value in 100..<3_000 { sender.yield(value) } }.value
        #expect(await consumer.value == Array(0..<3_000))
    }

    @Test("finish: the consumer gets what is queued, then nil; later values are dropped")
    func finishDrains() async {
        let (mailbox, sender) = Mailbox.make(of: String.self)
        sender.yield("a")
        sender.yield("b")
        sender.finish()
        sender.yield("after")
        var received: [String] = []
        for await value in mailbox { received.append(value) }
        #expect(received == ["a", "b"])
    }

    @Test("finish wakes a consumer waiting for a value, and runs onTermination once")
    func finishWakesTheWaiter() async {
        let (mailbox, sender) = Mailbox.make(of: Int.self)
        let terminations = Mutex(0)
        sender.onTermination = { terminations.withLock { $0 += 1 } }
        let consumer = Task {
            var iterator = mailbox.makeAsyncIterator()
            return await iterator.next()
        }
        await Self.untilWaiting(mailbox)
        sender.finish()
        sender.finish()
        #expect(await consumer.value == nil)
        #expect(terminations.withLock { $0 } == 1)
    }

    @Test("cancelling a waiting consumer ends the mailbox: nil at once, the sender told, later values dropped")
    func cancellation() async {
        let (mailbox, sender) = Mailbox.make(of: Int.self)
        let (terminated, terminate) = AsyncStream.makeStream(of: Void.self)
        sender.onTermination = { terminate.yield() }
        let consumer = Task {
            var received: [Int] = []
            for await value in mailbox { received.append(value) }
            return received
        }
        await Self.untilWaiting(mailbox)
        consumer.cancel()
        var ended = terminated.makeAsyncIterator()
        await ended.next()
        sender.yield(2)
        let received = await consumer.value
        #expect(received == [])
    }

    @Test("when the last copy of the mailbox is gone, the sender is told (onTermination)")
    func droppedMailbox() async {
        let terminated = Mutex(false)
        var sender: Mailbox<Int>.Sender?
        do {
            let made = Mailbox.make(of: Int.self)
            sender = made.sender
            made.sender.onTermination = { terminated.withLock { $0 = true } }
            made.sender.yield(1)
        }
        #expect(terminated.withLock { $0 })
        // Setting a handler after the end runs it at once.
        let late = Mutex(false)
        sender?.onTermination = { late.withLock { $0 = true } }
        #expect(late.withLock { $0 })
    }

    /// Returns once the mailbox's consumer is suspended waiting for a value (a state, not a time).
    static func untilWaiting<Element>(_ mailbox: Mailbox<Element>) async {
        while !mailbox.receiver.storage.state.withLock({ $0.waiter != nil }) { await Task.yield() }
    }
}
