import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program started with `posix_spawn`, with an empty signal mask and default signal handlers.
///
/// Foundation's `Process` starts children from a libdispatch thread, whose blocked signals they
/// inherit: such a mosquitto or homegate never sees SIGTERM or SIGINT. This one can be stopped
/// gracefully. Its output goes to a file; its exit is awaited without blocking the cooperative pool.
package final class ChildProcess: Sendable {
    package let pid: pid_t
    /// Where its output goes, if anywhere: for what a test says when the process misbehaves.
    package let outputFile: String?
    private let status = Mutex<Int32?>(nil)
    private let exitGroup = DispatchGroup()

    /// Starts `executable` (a path, or a name looked up on PATH and in the sbin folders).
    /// - Parameters:
    ///   - environment: extra variables on top of this process's environment.
    ///   - outputFile: where stdout and stderr go (appended); nil discards them.
    ///   - ownProcessGroup: start it in a process group of its own, out of reach of the terminal's
    ///     Ctrl-C (its parent stops it).
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], outputFile: String? = nil,
        ownProcessGroup: Bool = false
    ) throws {
        let path = try Command.locate(executable)
        self.outputFile = outputFile

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process: a pipe or socket some other thread has open at this moment
        // (Foundation's are not close-on-exec) would otherwise live as long as this child, and a
        // reader waiting for that pipe's end (Command.run) would wait until the child exits.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, new in new }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw BrokerError("could not start \(path): \(String(cString: strerror(rc)))")
        }
        self.pid = pid

        exitGroup.enter()
        let reaper = Thread { [self] in
            var code: Int32 = 0
            while waitpid(self.pid, &code, 0) == -1 && errno == EINTR {}
            self.status.withLock { $0 = code }
            self.exitGroup.leave()
        }
        reaper.name = "wait-\(pid)"
        reaper.start()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare; nil where the C library lacks it.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        let name = "posix_spawn_file_actions_addclosefrom_np"
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// True until the process has exited (and been reaped).
    package var isRunning: Bool { status.withLock { $0 == nil } }

    /// The raw wait status once the process has exited.
    package var exitStatus: Int32? { status.withLock { $0 } }

    /// Sends `signal` (SIGTERM, SIGINT, SIGKILL, ...) unless the process has already exited.
    package func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits until the process has exited; returns its raw wait status.
    @discardableResult
    package func waitForExit() async -> Int32 {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            exitGroup.notify(queue: .global()) { done.resume() }
        }
        return exitStatus ?? 0
    }
}
