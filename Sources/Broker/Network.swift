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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("bind() failed: \(problem)")
        }
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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("cannot connect to 127.0.0.1:\(port): \(problem)")
        }
        return fd
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
