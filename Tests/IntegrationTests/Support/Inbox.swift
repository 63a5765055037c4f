import Foundation

/// Collects everything an `AsyncStream` yields, so a test can wait for the element it expects (with
/// a deadline, never a blind sleep) and look at what else arrived. One consumer task drains the stream.
actor Inbox<Element: Sendable> {
    private var received: [Element] = []
    private var consumer: Task<Void, Never>?

    init() {}

    static func draining(_ stream: some AsyncSequence<Element, Never> & Sendable) async -> Inbox<Element> {
        let inbox = Inbox()
        await inbox.start(stream)
        return inbox
    }

    private func start(_ stream: some AsyncSequence<Element, Never> & Sendable) {
        consumer = Task { [weak self] in
            for await element in stream { await self?.append(element) }
        }
    }

    private func append(_ element: Element) { received.append(element) }

    /// Everything received and not yet taken.
    var all: [Element] { received }

    /// Takes the first element that matches, waiting for it until the deadline passes.
    func next(
        within timeout: Duration = .seconds(15), _ what: String = "element",
        where matches: @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = received.firstIndex(where: matches) {
                return received.remove(at: index)
            }
            guard ContinuousClock.now < deadline else {
                throw TimedOut("no \(what) within \(timeout); received meanwhile: \(received)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
