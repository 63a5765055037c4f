import Broker
import Foundation
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
    let status = await process.waitForExit()
    #expect(
        status == 0, "\(describe(status)) after SIGTERM; its output:\n\(tail(of: process))",
        sourceLocation: sourceLocation)
    return result
}

/// A raw wait status in words: the exit code, or the signal that ended the process.
func describe(_ status: Int32) -> String {
    status & 0x7F == 0 ? "exit code \((status >> 8) & 0xFF)" : "killed by signal \(status & 0x7F)"
}

/// The last lines the process wrote to its output file.
func tail(of process: ChildProcess) -> String {
    guard let file = process.outputFile, let text = try? String(contentsOfFile: file, encoding: .utf8) else {
        return "(not kept)"
    }
    return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
}
