/// Runs `body`, then awaits `cleanup` whether the body returned or threw, and returns or rethrows
/// what the body did. What `defer` cannot do for async work: a `defer { Task { await x.stop() } }`
/// leaves the stop running after the test, racing the next one; here the test ends only once its
/// clients are disconnected and its processes stopped.
package func withCleanup<Result>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result,
    cleanup: () async -> Void
) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}

extension AsyncIteratorProtocol {
    /// The next element that `matches`, skipping the others (nil once the sequence ends): an event
    /// assertion waits for the event it is about, since another may come first.
    package mutating func next(
        isolation actor: isolated (any Actor)? = #isolation, where matches: (Element) -> Bool
    ) async throws(Failure) -> Element? {
        while let element = try await next(isolation: actor) {
            if matches(element) { return element }
        }
        return nil
    }
}
