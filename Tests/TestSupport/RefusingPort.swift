import Broker
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

/// A port on 127.0.0.1 that accepts connections (the kernel completes them; nothing reads) until
/// ``stop()``: something listening where a driver looks for an accessory.
package final class ListeningPort: Sendable {
    package let port: Int
    private let fd: Mutex<Int32?>

    package init() throws {
        let (socket, port) = try LoopbackPort.bound()
        guard listen(socket, 16) == 0 else {
            close(socket)
            throw ListenFailed(errno: errno)
        }
        self.port = port
        fd = Mutex(socket)
    }

    /// Stops listening: connections are refused from now on.
    package func stop() {
        fd.withLock { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    deinit { stop() }

    private struct ListenFailed: Error {
        let errno: Int32
    }
}
