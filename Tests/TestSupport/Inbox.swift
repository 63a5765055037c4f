import Testing

/// Collects everything an `AsyncStream` yields, so a test can wait for the element it expects (with
/// a deadline, never a blind sleep) and look at what else arrived. One consumer task drains the stream.
package actor Inbox<Element: Sendable> {
    private var received: [Element] = []
    private var consumer: Task<Void, Never>?

    package init() {}

    package static func draining(_ stream: some AsyncSequence<Element, Never> & Sendable) async -> Inbox<Element> {
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
    package var all: [Element] { received }

    /// Takes the first element that matches, waiting for it (with `eventually`)
    /// until `timeout` passes; elements that do not match stay for later. Throws ``TimedOut`` with
    /// what arrived meanwhile.
    package func next(
        within timeout: Duration = .seconds(60), _ what: String = "element",
        sourceLocation: SourceLocation = #_sourceLocation,
        where matches: @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        try await eventuallyValue(
            "\(what); received meanwhile: \(received)", timeout: timeout, sourceLocation: sourceLocation
        ) {
            take(where: matches)
        }
    }

    /// Takes the first element received so far that matches, without waiting (nil if none has).
    package func take(where matches: (Element) -> Bool = { _ in true }) -> Element? {
        received.firstIndex(where: matches).map { received.remove(at: $0) }
    }
}
