import Broker
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` while `process` runs, then stops `process` with SIGTERM and waits for it to exit.
///
/// After a `body` that returned, the exit status must be 0, as a graceful stop gives; after one that
/// threw, the stop only keeps the process from outliving the test, and the error goes on.
func stopGracefully<Result>(
    _ process: ChildProcess, sourceLocation: SourceLocation = #_sourceLocation,
    after body: () async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        process.send(SIGTERM)
        await process.waitForExit()
        throw error
    }
    process.send(SIGTERM)
    #expect(await process.waitForExit() == 0, sourceLocation: sourceLocation)
    return result
}
