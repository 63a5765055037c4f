#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Loopback port helpers: find a free port, and tell whether something listens on one.
package enum LoopbackPort {
    /// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel picks it).
    package static func free() throws -> Int {
        let (fd, port) = try bound()
        close(fd)
        return port
    }

    /// A socket bound to a port on 127.0.0.1 and the port (the kernel picks it).
    package static func bound() throws -> (fd: Int32, port: Int) {
        let fd = try socket(port: 0, bind, "bind() failed")
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// True when a TCP connection to 127.0.0.1:`port` succeeds.
    package static func isListening(_ port: Int) -> Bool {
        guard let fd = try? connect(port) else { return false }
        close(fd)
        return true
    }

    /// A blocking TCP socket connected to 127.0.0.1:`port`, for a test's raw client.
    package static func connect(_ port: Int) throws -> Int32 {
        try socket(port: port, Glibc.connect, "cannot connect to 127.0.0.1:\(port)")
    }

    /// A TCP socket that `call` (`bind` or `connect`) gave the address 127.0.0.1:`port`; if the call
    /// fails, the socket is closed and the error starts with `failure`.
    private static func socket(
        port: Int, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ failure: String
    ) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("\(failure): \(problem)")
        }
        return fd
    }
}
