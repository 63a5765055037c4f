import Broker
import Foundation

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
package final class ListeningPort: Sendable {
    package let port: Int
    private let fd: Int32

    package init() throws {
        let (socket, port) = try LoopbackPort.bound()
        guard listen(socket, 64) == 0 else {
            let problem = errno
            close(socket)
            throw ListenFailed(errno: problem)
        }
        self.port = port
        fd = socket
        Thread.detachNewThread {
            while true {
                let connection = accept(socket, nil, nil)
                if connection >= 0 {
                    close(connection)
                } else if errno != EINTR {
                    close(socket)  // stopped: the thread owns the socket until here
                    return
                }
            }
        }
    }

    /// Stops listening: connections are refused from now on, and the accepting thread closes the
    /// socket as it ends.
    package func stop() { shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { stop() }

    private struct ListenFailed: Error {
        let errno: Int32
    }
}
