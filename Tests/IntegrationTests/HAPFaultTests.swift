import Foundation
import HAP
import HomeModel
import Logging
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP server on 127.0.0.1:`port` that answers every connection with bytes that are not HTTP, then
/// closes it; counts the connections.
final class GarbageServer: Sendable {
    private let descriptor: Int32
    private let accepted = Mutex(0)
    private let stopped = Mutex(false)

    var connections: Int { accepted.withLock { $0 } }

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            close(descriptor)
            throw TimedOut("cannot listen on \(port): errno \(errno)")
        }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    private func serve() {
        while !stopped.withLock({ $0 }) {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { return }
            accepted.withLock { $0 += 1 }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            let garbage = Array("\u{1}\u{2}garbage that is no HTTP\r\n\r\n".utf8)
            _ = garbage.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(client)
        }
    }

    func stop() {
        stopped.withLock { $0 = true }
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }
}

@Suite("A HAP accessory that answers garbage", .serialized, .timeLimit(.minutes(3)))
struct HAPFaultTests {
    @Test("bytes that are not HAP drop the connection, are logged once, retried with backoff; nothing crashes")
    func garbage() async throws {
        try await withTemporaryDirectory { folder in
            var bridge = try await HAPAccessoryProcess(setupCode: "031-45-154", folder: folder)
            let port = bridge.port
            let lines = LogLines()
            let manager = try HomeManager(database: .inMemory())
            let database = try HomeDatabase.inMemory()
            try await manager.attach(
                HAPDriver(
                    endpoints: [HAPEndpoint(host: "127.0.0.1", port: port)], secrets: database.secrets(for: "hap"),
                    logger: Logger(label: "test.hap") { _ in lines }))
            try await manager.edit(.addHome(name: "Home", userName: "Alice"), account: "alice")
            try await eventually("the bridge offered") {
                await manager.discoveredAccessories().contains { $0.id.rawValue == "hap@127.0.0.1:\(port)" }
            }
            try await manager.pairAccessory(
                AccessoryID("hap@127.0.0.1:\(port)"), setupCode: "031-45-154", home: "Home", account: "alice")
            func reachable() async throws -> Bool {
                try await manager.home("Home", account: "alice").accessories.allSatisfy(\.isReachable)
            }
            #expect(try await reachable())

            // When the accessory goes and something that is not HAP answers on its port
            await bridge.stop()
            try await eventually("unreachable") { try await !reachable() }
            let garbage = try GarbageServer(port: port)
            try await eventually("three attempts on the garbage") { garbage.connections >= 3 }

            // Then the cause is logged once, however often it comes
            let warnings = lines.all.filter { $0.level == .warning && $0.message.contains("not an HTTP response") }
            #expect(warnings.count == 1, "\(lines.all.map(\.message))")
            #expect(try await !reachable())

            // And when the accessory is back, the driver finds it again
            garbage.stop()
            bridge = try await HAPAccessoryProcess(port: port, setupCode: "031-45-154", folder: folder, run: 1)
            try await eventually("reachable again", timeout: .seconds(90)) { try await reachable() }
            await bridge.stop()
            await manager.shutdown()
        }
    }
}
