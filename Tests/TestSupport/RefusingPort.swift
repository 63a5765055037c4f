import Broker

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
