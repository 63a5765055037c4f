import Foundation
import HAPProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure of the test harness itself (socket, process), as opposed to a protocol error under test.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A blocking TCP connection to 127.0.0.1, with a receive timeout so a silent peer fails the test.
final class LoopbackSocket {
    private let descriptor: Int32

    init(port: UInt16, timeoutSeconds: Int = 30) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = Self.loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw HarnessError("connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit {
        close(descriptor)
    }

    func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard result > 0 else { throw HarnessError("send: errno \(errno)") }
            sent += result
        }
    }

    /// The next bytes the peer sent; throws at end of stream or timeout.
    func read() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw HarnessError(count == 0 ? "peer closed the connection" : "recv: errno \(errno)") }
        return Array(buffer[0..<count])
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A port that was free on 127.0.0.1 a moment ago (bound to 0 and released).
    static func freePort() throws -> UInt16 {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0
            }
        }
        guard bound else { throw HarnessError("no free port: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A HAP controller connection for tests: HTTP over a loopback socket, encrypted once a session is set.
struct HAPTestConnection {
    let socket: LoopbackSocket
    let host: String
    var parser = HTTPResponseParser()
    var session: SecureSession?

    init(port: UInt16) throws {
        socket = try LoopbackSocket(port: port)
        host = "127.0.0.1:\(port)"
    }

    /// Sends a request and returns its response (events in between are skipped).
    mutating func send(_ request: HTTPRequest) throws -> HTTPMessage {
        var bytes = request.encoded(host: host)
        if session != nil { bytes = try session!.encrypt(bytes) }
        try socket.write(bytes)
        while true {
            if let message = try parser.next() {
                if message.kind == .response { return message }
                continue
            }
            var received = try socket.read()
            if session != nil { received = try session!.decrypt(received) }
            parser.append(received)
        }
    }

    /// Runs a pairing exchange (pair setup or pair verify) to its end over `path`.
    mutating func pair<Result>(
        _ path: String, start: () -> [UInt8], handle: ([UInt8]) throws -> PairingStep<Result>
    ) throws -> Result {
        var body = start()
        while true {
            let response = try send(.pairing(path, body))
            switch try handle(response.body) {
            case .send(let next): body = next
            case .done(let result): return result
            }
        }
    }
}

/// scripts/hap-accessory.py (a HAP-python bridge) started on a free loopback port, and its JSON lines.
final class HAPPythonBridge {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let port: UInt16
    let stateFolder: URL
    private let process = Process()
    private let output: FileHandle
    private var pending: [UInt8] = []

    /// Makes the venv if needed (scripts/install-python-tools.sh), starts the bridge and waits for its
    /// readiness line.
    init(setupCode: String) throws {
        let install = Process()
        install.executableURL = Self.repositoryRoot.appendingPathComponent("scripts/install-python-tools.sh")
        try install.run()
        install.waitUntilExit()
        guard install.terminationStatus == 0 else { throw HarnessError("install-python-tools.sh failed") }

        port = try LoopbackSocket.freePort()
        stateFolder = FileManager.default.temporaryDirectory.appendingPathComponent("hap-\(UUID().uuidString)")
        let pipe = Pipe()
        output = pipe.fileHandleForReading
        process.executableURL = Self.repositoryRoot.appendingPathComponent(".build/venv/bin/python")
        process.arguments = [
            Self.repositoryRoot.appendingPathComponent("scripts/hap-accessory.py").path, "--name", "Test Bridge",
            "--port", String(port), "--setup-code", setupCode, "--state-dir", stateFolder.path,
        ]
        process.standardOutput = pipe
        try process.run()
        do {
            _ = try nextEvent { $0["event"] as? String == "ready" }
        } catch {
            stop()
            throw error
        }
    }

    /// Ends the bridge (SIGKILL: a child of Foundation's Process may have SIGTERM blocked) and removes its state.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: stateFolder)
    }

    /// Reads JSON lines until one matches, within `timeoutSeconds`.
    func nextEvent(timeoutSeconds: Double = 60, matching: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while true {
            while let newline = pending.firstIndex(of: 10) {
                let line = Array(pending[..<newline])
                pending.removeFirst(newline + 1)
                if let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                    matching(object)
                {
                    return object
                }
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw HarnessError("no matching line from hap-accessory.py in time") }
            var poller = pollfd(fd: output.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(output.fileDescriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw HarnessError("hap-accessory.py ended (exit status unknown)") }
            pending += buffer[0..<count]
        }
    }
}
