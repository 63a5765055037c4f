import Testing

/// What a wait that ran out (or a test helper that found something missing) throws: its description
/// says what was awaited, for how long, and where.
package struct TimedOut: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Waits until `condition` holds, looking again with a short backoff (5 ms, doubling up to 100 ms),
/// and throws ``TimedOut`` naming `what`, the timeout and the caller's line when `timeout` passes
/// first. The one way the tests wait for a state: never a fixed sleep, and never without a bound.
///
/// The default timeout is a minute: in a whole-suite run on two cores every test starts at once,
/// and a wait that takes milliseconds alone has been seen to take over 30 seconds. It gives up
/// only after a look that followed a pause begun past the deadline: when the process stalled
/// through the whole timeout, the work the test waits for was held up too, and gets that pause to
/// run before the last look. It throws rather than records an issue, so that a caller may take a
/// timeout as an answer (`try?`); a test that lets the error escape fails with it. `what` is
/// evaluated only on failure, so it can describe the state as it was then. An error the condition
/// throws ends the wait (write `(try? ...) == true` to look again after one).
package func eventually(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(60),
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    _ = try await eventuallyValue(what(), timeout: timeout, sourceLocation: sourceLocation) {
        try await condition() ? true : nil
    }
}

/// Waits until `value` returns something, and returns it; otherwise as ``eventually(_:timeout:isolation:sourceLocation:_:)``,
/// which waits for a condition: a short backoff, a last look after the deadline, ``TimedOut``
/// naming `what` when it runs out. A name of its own: as an overload of `eventually`, a condition's
/// `false` could be taken for a value found (`Bool?`), and the wait would end at once.
package func eventuallyValue<Value>(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(60),
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ value: () async throws -> Value?
) async throws -> Value {
    let deadline = ContinuousClock.now + timeout
    var pause = Duration.milliseconds(5)
    var pausedPastTheDeadline = false
    while true {
        if let found = try await value() { return found }
        if pausedPastTheDeadline { throw TimedOut("waited \(timeout) for \(what()) (\(sourceLocation))") }
        pausedPastTheDeadline = ContinuousClock.now >= deadline
        try await Task.sleep(for: pause)
        pause = min(pause * 2, .milliseconds(100))
    }
}
