import Broker
import Foundation
import MQTT
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The bridge shares the gateway's loop with MQTT (`homegate run`): a controller that sends
/// requests without pause must not keep the loop from the broker's socket.
@Suite("HomeKit bridge under a flood", .timeLimit(.minutes(3)))
struct HomeKitBridgeFloodTests {
    static let brightness = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness"

    @Test("MQTT commands are carried out and answered while a controller floods the bridge with requests")
    func commandsGoOnDuringAFlood() async throws {
        try await withBroker { broker in
            let port = try LoopbackPort.free()
            let configuration = "\(broker.directory)/flood.yml"
            try """
            mqtt:
              broker: mqtt://127.0.0.1:\(broker.port)
              clientId: flooded-gateway
            data:
              directory: \(broker.directory)/data
            accessories:
              virtual: \(demoHomeFile.path)
            logging:
              level: warning
            web: null
            homekit:
              advertise: false
              bridges:
                - {home: Main House, account: owner, port: \(port), listen: 127.0.0.1}
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
            let gateway = try ChildProcess(
                try homegateExecutable(), ["run", "--config", configuration],
                outputFile: "\(broker.directory)/gateway.log")
            try await stopGracefully(gateway) {
                try await eventually("the bridge listening on \(port)") { LoopbackPort.isListening(port) }
                let owner = try makeClient(broker, name: "owner")
                try await withConnected(owner) { inbox in
                    try await owner.subscribe(to: [Self.brightness], qos: .atLeastOnce)
                    _ = try await inbox.next("the retained brightness") { $0.topic == Self.brightness }

                    let flood = try Flood(port: port)
                    defer { flood.stop() }
                    try await eventually("the flood answered") { flood.answers > 1_000 }
                    for value in stride(from: 5, through: 50, by: 5) {
                        let before = flood.answers
                        try await owner.publish("\(Self.brightness)/set/owner", "\(value)", qos: .atLeastOnce)
                        let echoed = try await inbox.next("brightness \(value)") {
                            $0.topic == Self.brightness && $0.payloadString == "\(value)"
                        }
                        #expect(echoed.payloadString == "\(value)")
                        // The flood went on meanwhile: the command was not served in a pause of it.
                        #expect(flood.answers > before, "the flood stalled while command \(value) was carried out")
                    }
                    #expect(flood.isFlowing, "the flooding connection was closed: \(flood.failure ?? "")")
                }
            }
        }
    }
}

/// A controller that sends `GET /accessories` without pause (before pair verify: each is answered
/// 470) on one thread and reads the answers on another, counting them.
private final class Flood: Sendable {
    private let descriptor: Int32
    private let counted = Atomic(0)
    private let stopped = Atomic(false)
    private let failed = Mutex<String?>(nil)

    init(port: Int) throws {
        descriptor = try LoopbackPort.connect(port)
        let request = Array(String(repeating: "GET /accessories HTTP/1.1\r\nHost: bridge\r\n\r\n", count: 32).utf8)
        let writer = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno != EINTR {
                    if !stopped.load(ordering: .relaxed) { failed.withLock { $0 = "send: errno \(errno)" } }
                    return
                }
            }
        }
        let reader = Thread { [self] in
            let marker = Array("HTTP/1.1 470".utf8)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var carried: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 {
                    if !stopped.load(ordering: .relaxed) { failed.withLock { $0 = "recv: \(count), errno \(errno)" } }
                    return
                }
                // Counted across reads: an answer's first line may be split between two.
                let text = carried + buffer[0..<count]
                var found = 0
                var index = 0
                while index + marker.count <= text.count {
                    if text[index] == marker[0], Array(text[index..<index + marker.count]) == marker {
                        found += 1
                        index += marker.count
                    } else {
                        index += 1
                    }
                }
                counted.add(found, ordering: .relaxed)
                carried = Array(text.suffix(marker.count - 1))
            }
        }
        writer.start()
        reader.start()
    }

    /// The answers read so far.
    var answers: Int { counted.load(ordering: .relaxed) }
    /// Whether the bridge still takes and answers the flood.
    var isFlowing: Bool { failure == nil }
    var failure: String? { failed.withLock { $0 } }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }
}
