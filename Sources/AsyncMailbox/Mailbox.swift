import DequeModule
import Synchronization

/// An unbounded queue from any number of senders to one consuming task: what `AsyncStream` with
/// `.unbounded` buffering does, but compiled for its element in the module that uses it.
///
/// `AsyncStream`'s code lives in the runtime and is not specialised: every `yield` and `next` looks
/// up generic metadata and witness tables and goes through value witnesses. On the command path
/// (a command from the socket to its task, a change from the model to the publisher) that was about
/// 9 µs of a write's 60 on the loop at 1,000 writes/s (docs/benchmarks.md). Everything here is
/// `@inlinable`, so a `Mailbox<MQTTMessage>` is as cheap as a queue written for `MQTTMessage`.
///
/// Semantics, as `AsyncStream.makeStream(bufferingPolicy: .unbounded)`:
/// - values come out in the order they were sent; after ``Sender/finish()`` the consumer gets what
///   is queued, then nil, and later sends are dropped;
/// - one task consumes at a time (a second waiting consumer is a programming error and traps);
/// - cancelling the consuming task ends the mailbox: `next()` returns nil, what is queued is
///   dropped, and ``Sender/onTermination`` runs, as it does when the last copy of the mailbox and
///   its iterators is gone.
public struct Mailbox<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    /// The consumer's hold on the storage: when the last copy of the mailbox and its iterators
    /// is gone, nobody can receive any more, so the mailbox ends (and its sender learns it).
    @usableFromInline
    final class Receiver: Sendable {
        @usableFromInline let storage: Storage
        @inlinable init(_ storage: Storage) { self.storage = storage }
        deinit { storage.terminate(dropping: true) }
    }

    @usableFromInline let receiver: Receiver

    /// A new mailbox and the sender that fills it.
    @inlinable
    public static func make(of _: Element.Type = Element.self) -> (mailbox: Mailbox, sender: Sender) {
        let storage = Storage()
        return (Mailbox(receiver: Receiver(storage)), Sender(storage: storage))
    }

    @inlinable init(receiver: Receiver) { self.receiver = receiver }

    @inlinable public func makeAsyncIterator() -> Iterator { Iterator(receiver: receiver) }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Failure = Never
        @usableFromInline let receiver: Receiver

        @inlinable init(receiver: Receiver) { self.receiver = receiver }

        /// The next value, waiting for one; nil once the mailbox has ended.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Element? {
            await receiver.storage.next(isolation: actor)
        }

        @inlinable public mutating func next() async -> Element? { await receiver.storage.next(isolation: nil) }

        /// The next value if one is queued, without waiting: for a consumer that takes what
        /// gathered in one go rather than being woken for each. nil when nothing is queued or the
        /// mailbox has ended (``next()`` tells which).
        @inlinable public mutating func nextQueued() -> Element? {
            if case .element(let element) = receiver.storage.state.withLock({ $0.take() }) { return element }
            return nil
        }
    }

    /// Puts values into the mailbox, from any thread or task.
    public struct Sender: Sendable {
        @usableFromInline let storage: Storage

        @inlinable init(storage: Storage) { self.storage = storage }

        /// Queues `element` for the consumer, or hands it straight to the consumer waiting for one.
        /// Dropped once the mailbox has ended.
        @inlinable public func yield(_ element: Element) { storage.yield(element) }

        /// Ends the mailbox: the consumer gets what is queued, then nil.
        @inlinable public func finish() { storage.terminate(dropping: false) }

        /// Runs once when the mailbox ends, whichever way (at once if it has ended already).
        public var onTermination: (@Sendable () -> Void)? {
            get { storage.state.withLock { $0.onTermination } }
            nonmutating set { storage.setOnTermination(newValue) }
        }
    }

    @usableFromInline
    struct State {
        @usableFromInline var queue = Deque<Element>()
        @usableFromInline var waiter: UnsafeContinuation<Element?, Never>?
        @usableFromInline var hasEnded = false
        @usableFromInline var onTermination: (@Sendable () -> Void)?

        @inlinable init() {}

        /// The first queued value; otherwise whether the mailbox has ended, or registers `waiter`
        /// (when given) to be resumed with the next value or the end.
        @inlinable
        mutating func take(orWait waiter: UnsafeContinuation<Element?, Never>? = nil) -> Taken {
            if let element = queue.popFirst() { return .element(element) }
            if hasEnded { return .ended }
            if let waiter {
                precondition(self.waiter == nil, "two tasks wait on one Mailbox")
                self.waiter = waiter
            }
            return .waiting
        }
    }

    @usableFromInline
    enum Taken {
        case element(Element)
        case ended
        case waiting
    }

    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let state = Mutex(State())

        @inlinable init() {}

        @inlinable
        func yield(_ element: Element) {
            let waiter: UnsafeContinuation<Element?, Never>? = state.withLock { state in
                guard !state.hasEnded else { return nil }
                guard let waiter = state.waiter else {
                    state.queue.append(element)
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: element)
        }

        @inlinable
        func next(isolation actor: isolated (any Actor)?) async -> Element? {
            // Most often something is queued already: no suspension, no continuation.
            switch state.withLock({ $0.take() }) {
            case .element(let element): return element
            case .ended: return nil
            case .waiting: break
            }
            return await withTaskCancellationHandler {
                await withUnsafeContinuation(isolation: actor) { (continuation: UnsafeContinuation<Element?, Never>) in
                    switch state.withLock({ $0.take(orWait: continuation) }) {
                    case .element(let element): continuation.resume(returning: element)
                    case .ended: continuation.resume(returning: nil)
                    case .waiting: break
                    }
                }
            } onCancel: {
                terminate(dropping: true)
            }
        }

        /// Ends the mailbox once: wakes a waiting consumer with nil and runs `onTermination`.
        @usableFromInline
        func terminate(dropping: Bool) {
            let (waiter, onTermination): (UnsafeContinuation<Element?, Never>?, (@Sendable () -> Void)?) =
                state.withLock { state in
                    if dropping { state.queue = Deque() }
                    guard !state.hasEnded else { return (nil, nil) }
                    state.hasEnded = true
                    // With values still queued the consumer is not waiting; it gets them, then nil.
                    defer { (state.waiter, state.onTermination) = (nil, nil) }
                    return (state.waiter, state.onTermination)
                }
            waiter?.resume(returning: nil)
            onTermination?()
        }

        @usableFromInline
        func setOnTermination(_ handler: (@Sendable () -> Void)?) {
            let runNow = state.withLock { state in
                guard state.hasEnded else {
                    state.onTermination = handler
                    return false
                }
                return true
            }
            if runNow { handler?() }
        }
    }
}
