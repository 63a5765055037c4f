import Broker
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A port on 127.0.0.1 that refuses every connection for as long as this value lives: bound but not
/// listening. Unlike a port from ``LoopbackPort/free()``, no broker started meanwhile can take it,
/// and the kernel gives it to no outgoing connection (one that got it as its own source port would
/// connect to itself).
package final class RefusingPort: Sendable {
    package let port: Int
    private let fd: Int32

    package init() throws { (fd, port) = try LoopbackPort.bound() }

    deinit { close(fd) }
}

/// A port on 127.0.0.1 that accepts connections and closes each at once, until ``stop()``:
/// something listening where a driver looks for an accessory. Each one is taken off the queue (a
/// listener that never accepts looks dead once its backlog is full).
///
/// The socket is shut down once and closed once, under one lock: a second ``stop()`` (an explicit
/// one, then `deinit`'s) must not shut down a descriptor the accepting thread closed already, whose
/// number the process may have given to another socket since (a test's HTTP connection, then
/// closed under it: "I/O on closed channel" in a test running beside this one).
package final class ListeningPort: Sendable {
    package let port: Int
    private let fd: Int32
    private let control = Control()

    private final class Control: Sendable {
        struct State {
            var isStopped = false
            var isClosed = false
        }
        let state = Mutex(State())
    }

    package init() throws {
        let (socket, port) = try LoopbackPort.bound()
        guard listen(socket, 64) == 0 else {
            let problem = errno
            close(socket)
            throw ListenFailed(errno: problem)
        }
        self.port = port
        fd = socket
        let control = control
        Thread.detachNewThread {
            while true {
                let connection = accept(socket, nil, nil)
                if connection >= 0 {
                    close(connection)
                    continue
                }
                if errno == EINTR { continue }
                // Stopped: the thread owns the socket until here. Any other failure (EMFILE under
                // a full run's load) is passing: listen on.
                let stopped = control.state.withLock { state in
                    guard state.isStopped else { return false }
                    state.isClosed = true
                    close(socket)
                    return true
                }
                if stopped { return }
                usleep(10_000)
            }
        }
    }

    /// Stops listening: connections are refused from now on, and the accepting thread closes the
    /// socket as it ends. Only the first call does anything.
    package func stop() {
        control.state.withLock { state in
            guard !state.isStopped, !state.isClosed else { return }
            state.isStopped = true
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    deinit { stop() }

    private struct ListenFailed: Error {
        let errno: Int32
    }
}
