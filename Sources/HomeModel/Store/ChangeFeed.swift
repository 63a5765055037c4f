import AsyncMailbox
import Foundation

/// The model's change stream, the part of the home's store that tells: who listens (each with the
/// test it asked for), and the model's version, counted per event (``HomeChange/version``). The
/// manager renders each change; the feed hands it to those who want it.
struct ChangeFeed {
    /// The listeners in the order each change is handed out: those that asked to be first in line,
    /// then the others, each group in the order they came.
    private var subscribers: [(id: UUID, subscriber: Subscriber)] = []
    /// Counts the events published.
    private(set) var version: UInt64 = 0

    /// A listener: what it is handed of each change (into its mailbox), and how its mailbox ends.
    private struct Subscriber {
        let hand: (HomeChange) -> Void
        let finish: () -> Void
        let isFirstInLine: Bool
    }

    /// A new listener's mailbox of what `transform` makes of each change it does not answer nil to,
    /// starting with what it makes of `first`; `ended` is called with its id when the listener goes
    /// away, from wherever it went, to ``unsubscribe(_:)`` it. A listener `firstInLine` is handed
    /// each change before the others (see ``HomeManager/changes(where:firstInLine:)``).
    mutating func subscribe<Element: Sendable>(
        transform: @escaping @Sendable (HomeChange) -> Element?, firstInLine: Bool = false, first: HomeChange,
        ended: @escaping @Sendable (UUID) -> Void
    ) -> Mailbox<Element> {
        let (mailbox, sender) = Mailbox.make(of: Element.self)
        let id = UUID()
        let subscriber = Subscriber(
            hand: { change in if let element = transform(change) { sender.yield(element) } },
            finish: sender.finish, isFirstInLine: firstInLine)
        let place = firstInLine ? subscribers.firstIndex { !$0.subscriber.isFirstInLine } : nil
        subscribers.insert((id, subscriber), at: place ?? subscribers.endIndex)
        sender.onTermination = { ended(id) }
        subscriber.hand(first)
        return mailbox
    }

    mutating func unsubscribe(_ id: UUID) {
        subscribers.removeAll { $0.id == id }
    }

    /// Counts each event and hands what `render` makes of it (with the version it is) to every
    /// listener, through its transform; nothing is rendered while nobody listens. `render` must not touch the
    /// feed.
    mutating func publish(_ events: [HomeEvent], render: (HomeEvent, _ version: UInt64) -> HomeChange) {
        for event in events {
            version &+= 1
            guard !subscribers.isEmpty else { continue }
            let change = render(event, version)
            for (_, subscriber) in subscribers { subscriber.hand(change) }
        }
    }

    /// Ends every listener's stream (the manager shuts down).
    mutating func finish() {
        for (_, subscriber) in subscribers { subscriber.finish() }
        subscribers.removeAll()
    }
}
