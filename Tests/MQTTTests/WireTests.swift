import Testing

@testable import MQTT

@Suite("MQTT packets on the wire")
struct PacketTests {
    let v5 = PacketWriter(version: .v5)
    let v311 = PacketWriter(version: .v311)

    @Test("CONNECT with user name and password, as MQTT v5 and 3.1.1 spell it")
    func connect() {
        var out: [UInt8] = []
        v5.connect(
            into: &out, clientID: "hg", cleanStart: true, keepAliveSeconds: 30, sessionExpiry: nil,
            username: "u", password: "p", will: nil)
        #expect(
            out == [
                0x10, 21, 0, 4, 0x4D, 0x51, 0x54, 0x54, 5, 0xC2, 0, 30, 0,
                0, 2, 0x68, 0x67, 0, 1, 0x75, 0, 1, 0x70,
            ])

        out = []
        v311.connect(
            into: &out, clientID: "hg", cleanStart: false, keepAliveSeconds: 60, sessionExpiry: 3600,
            username: nil, password: "p", will: nil)
        // 3.1.1 has no properties (so no session expiry) and takes a password only with a user name.
        #expect(
            out == [
                0x10, 19, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0xC0, 0, 60,
                0, 2, 0x68, 0x67, 0, 0, 0, 1, 0x70,
            ])
    }

    @Test("CONNECT with a will and a session expiry: flags, properties and lengths")
    func connectWithWill() throws {
        var out: [UInt8] = []
        let will = MQTTConfiguration.Will(
            topic: "s", payload: [0x6F], qos: .atLeastOnce, retain: true,
            properties: MQTTProperties(contentType: "t"))
        v5.connect(
            into: &out, clientID: "c", cleanStart: false, keepAliveSeconds: 5, sessionExpiry: 0x0102_0304,
            username: nil, password: nil, will: will)
        #expect(
            out == [
                0x10, 30, 0, 4, 0x4D, 0x51, 0x54, 0x54, 5,
                0x2C,  // will retain, will QoS 1, will flag; no clean start
                0, 5, 5, 0x11, 1, 2, 3, 4,
                0, 1, 0x63,
                4, 0x03, 0, 1, 0x74,  // the will's properties
                0, 1, 0x73, 0, 1, 0x6F,
            ])
    }

    @Test("PUBLISH: the fixed header's flags, the packet identifier only above QoS 0")
    func publishBytes() {
        var out: [UInt8] = []
        v5.publish(
            into: &out, topic: "a/b", payload: Array("hi".utf8), qos: .atLeastOnce, retain: true, duplicate: true,
            packetID: 7, properties: MQTTProperties())
        #expect(out == [0x3B, 10, 0, 3, 0x61, 0x2F, 0x62, 0, 7, 0, 0x68, 0x69])

        out = []
        v311.publish(
            into: &out, topic: "a", payload: [1], qos: .atMostOnce, retain: false, duplicate: true, packetID: 7,
            properties: MQTTProperties())
        #expect(out == [0x30, 4, 0, 1, 0x61, 1])
    }

    @Test("a PUBLISH with every property reads back as written", arguments: MQTTQoS.allCases)
    func publishRoundTrip(qos: MQTTQoS) throws {
        let properties = MQTTProperties(
            responseTopic: "resp/x", correlationData: [0, 1, 0xFF], userProperties: [.init("k", "v"), .init("k", "w")],
            messageExpiryInterval: 90, contentType: "application/json")
        let payload = [UInt8](repeating: 0x41, count: 300)
        var out: [UInt8] = []
        v5.publish(
            into: &out, topic: "home/ü", payload: payload, qos: qos, retain: true, duplicate: false, packetID: 513,
            properties: properties)
        #expect(out.count == v5.publishSize(topic: "home/ü", payload: payload, qos: qos, properties: properties))

        let (packet, consumed) = try #require(try read(out, version: .v5))
        #expect(consumed == out.count)
        let message = MQTTMessage(topic: "home/ü", payload: payload, qos: qos, retain: true, properties: properties)
        #expect(packet == .publish(message, packetID: qos == .atMostOnce ? 0 : 513))
    }

    @Test(
        "lengths at the edges of the variable byte integer",
        arguments: [0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152])
    func variableLengths(length: Int) throws {
        var out: [UInt8] = []
        PacketWriter.variableInt(length, into: &out)
        #expect(out.count == PacketWriter.variableIntSize(length))
        let decoded = try out.withUnsafeBytes { bytes in
            var cursor = Cursor(bytes)
            return try cursor.variableInt()
        }
        #expect(decoded == length)
    }

    @Test("a packet split across reads waits for its end; several in one read come out one by one")
    func framing() throws {
        let acknowledgement: [UInt8] = [0x40, 2, 0, 9]
        let subscribeAcknowledgement: [UInt8] = [0x90, 5, 0, 3, 0, 1, 0x87]
        let bytes = acknowledgement + subscribeAcknowledgement
        for cut in 0..<bytes.count {
            let first = try read(Array(bytes[..<cut]), version: .v5)
            if cut < acknowledgement.count {
                #expect(first == nil, "cut at \(cut)")
            } else {
                #expect(first?.0 == .acknowledgement(type: 4, packetID: 9, reasonCode: 0))
                #expect(first?.consumed == 4)
            }
        }
        let second = try read(Array(bytes[4...]), version: .v5)
        #expect(second?.0 == .subscribeAcknowledgement(packetID: 3, reasonCodes: [1, 0x87]))
    }

    @Test("CONNACK's properties: the broker's limits and keep-alive; others skipped")
    func connectionAcknowledgement() throws {
        let bytes: [UInt8] = [
            0x20, 23, 1, 0, 20,
            0x21, 0, 20, 0x27, 0, 0, 0x10, 0, 0x13, 0, 60, 0x1F, 0, 2, 0x6F, 0x6B, 0x25, 0, 0x24, 1, 0x28, 1,
        ]
        var expected = IncomingPacket.ConnectionAcknowledgement(sessionPresent: true, reasonCode: 0)
        expected.limits = BrokerLimits(
            receiveMaximum: 20, maximumPacketSize: 4096, maximumQoS: .atLeastOnce, retainAvailable: false)
        expected.serverKeepAlive = 60
        #expect(try read(bytes, version: .v5)?.0 == .connectionAcknowledgement(expected))
        #expect(
            try read([0x20, 2, 0, 5], version: .v311)?.0
                == .connectionAcknowledgement(.init(sessionPresent: false, reasonCode: 5)))
    }

    @Test(
        "what a broker must not send is refused, not guessed at",
        arguments: [
            ("remaining length of five bytes", [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
            ("unknown property", [0x30, 6, 0, 1, 0x61, 2, 0x7F, 0]),
            ("topic that is not UTF-8", [0x30, 4, 0, 2, 0xC3, 0x28, 0]),
            ("topic alias never allowed", [0x30, 7, 0, 1, 0x61, 3, 0x23, 0, 1]),
            ("QoS 3", [0x36, 4, 0, 1, 0x61, 0]),
            ("string longer than its packet", [0x30, 3, 0, 9, 0x61]),
            ("CONNECT from the broker", [0x10, 0]),
            ("receive maximum of zero", [0x20, 6, 0, 0, 3, 0x21, 0, 0]),
        ] as [(String, [UInt8])])
    func malformed(reason: String, bytes: [UInt8]) {
        #expect(throws: MalformedPacket.self, "\(reason)") { try read(bytes, version: .v5) }
    }

    @Test("topic names and filters are checked before anything is queued")
    func topics() {
        #expect(TCPEngine.isValidTopicName("home/a b/ü/🙂"))
        // Non-characters, which mosquitto refuses too (Swift's literals do not take them).
        let nonCharacters = [0xFDD0, 0x1FFFF].map { "a" + String(Character(Unicode.Scalar(UInt32($0))!)) }
        #expect(TCPEngine.isValidTopicName(String(repeating: "a", count: 65_535)))
        let tooLong = [String(repeating: "a", count: 65_536), String(repeating: "ü", count: 32_768)]
        for bad in ["", "home/+", "home/#", "a\u{0}b", "a\u{1F}b", "a\u{7F}", "a\u{85}", "ü/+", "ü\u{7F}"]
            + nonCharacters + tooLong
        {
            #expect(!TCPEngine.isValidTopicName(bad), "\(bad.unicodeScalars.map(\.value))")
        }
        for good in ["#", "+", "home/+/state", "home/#", "/", "a//b"] {
            #expect(TCPEngine.isValidTopicFilter(good), "\(good)")
        }
        for bad in ["", "home/#/x", "home/a#", "home/+a", "a\u{0}"] {
            #expect(!TCPEngine.isValidTopicFilter(bad), "\(bad)")
        }
    }

    private func read(_ bytes: [UInt8], version: MQTTConfiguration.ProtocolVersion) throws -> (
        IncomingPacket, consumed: Int
    )? {
        try bytes.withUnsafeBytes { try PacketReader(version: version).next(in: $0) }
    }
}

@Suite("QoS 1/2 publishes in flight")
struct InFlightTests {
    let writer = PacketWriter(version: .v5)

    private func connected(window: Int) -> TCPEngine.Shared {
        var shared = TCPEngine.Shared()
        shared.status = .connected
        shared.limits.receiveMaximum = window
        shared.quota = window
        return shared
    }

    private func message(_ topic: String, qos: MQTTQoS = .atLeastOnce, awaited: Bool = true)
        -> TCPEngine.Shared.Outgoing
    {
        .init(topic: topic, payload: [1], qos: qos, retain: true, properties: MQTTProperties(), isAwaited: awaited)
    }

    /// The PUBLISH packets (topic, packet id, DUP) and other packets queued, and the queue emptied.
    private func sent(_ shared: inout TCPEngine.Shared) throws -> [String] {
        var packets: [String] = []
        try shared.output.withUnsafeBytes { bytes in
            var offset = 0
            let reader = PacketReader(version: .v5)
            while offset < bytes.count {
                let header = bytes[offset]
                let (packet, length) = try #require(
                    try reader.next(in: UnsafeRawBufferPointer(rebasing: bytes[offset...])))
                switch packet {
                case .publish(let message, let packetID):
                    packets.append("\(message.topic)#\(packetID)\(header & 0x08 != 0 ? " dup" : "")")
                case .acknowledgement(let type, let packetID, _):
                    packets.append("ack\(type)#\(packetID)")
                default:
                    packets.append("\(packet)")
                }
                offset += length
            }
        }
        shared.output.removeAll()
        return packets
    }

    @Test("no more in flight than the broker's receive maximum; the rest go in order as acknowledgements come")
    func window() throws {
        var shared = connected(window: 2)
        let mids = (0..<4).map { shared.publish(message("t/\($0)"), writer) }
        #expect(Set(mids).count == 4 && !mids.contains(0))
        #expect(try sent(&shared) == ["t/0#1", "t/1#2"])

        #expect(shared.acknowledged(type: 4, packetID: 2, reasonCode: 0, writer) == mids[1])
        #expect(try sent(&shared) == ["t/2#3"])
        // An acknowledgement for nothing in flight changes nothing.
        #expect(shared.acknowledged(type: 4, packetID: 2, reasonCode: 0, writer) == nil)
        #expect(try sent(&shared).isEmpty)
        #expect(shared.acknowledged(type: 4, packetID: 1, reasonCode: 0x10, writer) == mids[0])
        // Packet identifiers go round rather than reuse the one just freed.
        #expect(try sent(&shared) == ["t/3#4"])
    }

    @Test("a publish nobody awaits is delivered like any other, and its acknowledgement completes nothing")
    func unawaited() throws {
        var shared = connected(window: 1)
        let mids = [shared.publish(message("t/0", awaited: false), writer), shared.publish(message("t/1"), writer)]
        #expect(try sent(&shared) == ["t/0#1"])
        #expect(shared.acknowledged(type: 4, packetID: 1, reasonCode: 0, writer) == nil)
        #expect(try sent(&shared) == ["t/1#2"])
        #expect(shared.acknowledged(type: 4, packetID: 2, reasonCode: 0, writer) == mids[1])
        #expect(shared.outgoing.isEmpty && shared.inFlight.isEmpty)
    }

    @Test("QoS 0 needs a connection and is never tracked")
    func atMostOnce() throws {
        var shared = connected(window: 1)
        #expect(shared.publish(message("q0", qos: .atMostOnce), writer) == 0)
        #expect(try sent(&shared) == ["q0#0"])
        shared.connectionClosed()
        #expect(shared.publish(message("q0", qos: .atMostOnce), writer) == -1)
        #expect(shared.output.isEmpty && shared.outgoing.isEmpty)
    }

    @Test(
        "after a reconnect: PUBREL for what the broker had received, then the rest again in order, with DUP where sent")
    func resendAfterReconnect() throws {
        var shared = connected(window: 3)
        let exactlyOnce = shared.publish(message("t/0", qos: .exactlyOnce), writer)
        let mids = (1..<5).map { shared.publish(message("t/\($0)"), writer) }
        #expect(try sent(&shared) == ["t/0#1", "t/1#2", "t/2#3"])
        #expect(shared.acknowledged(type: 5, packetID: 1, reasonCode: 0, writer) == nil)
        #expect(try sent(&shared) == ["ack6#1"])

        // The connection drops; a publish made meanwhile waits behind the older ones.
        shared.connectionClosed()
        let whileDown = shared.publish(message("t/5"), writer)
        #expect(shared.output.isEmpty)

        shared.status = .connected
        shared.limits.receiveMaximum = 4
        #expect(shared.holdForResending(writer).isEmpty)
        // A publish made while the client hears of the connection goes after the older ones.
        let onConnect = shared.publish(message("t/6"), writer)
        #expect(shared.output.isEmpty)
        shared.resend(writer)
        #expect(try sent(&shared) == ["ack6#1", "t/1#2 dup", "t/2#3 dup", "t/3#4"])

        #expect(shared.acknowledged(type: 4, packetID: 2, reasonCode: 0, writer) == mids[0])
        #expect(try sent(&shared) == ["t/4#5"])
        #expect(shared.acknowledged(type: 7, packetID: 1, reasonCode: 0, writer) == exactlyOnce)
        #expect(try sent(&shared) == ["t/5#6"])
        #expect(shared.acknowledged(type: 4, packetID: 3, reasonCode: 0, writer) == mids[1])
        #expect(try sent(&shared) == ["t/6#7"])
        #expect(Set(shared.outgoing.keys) == [mids[2], mids[3], whileDown, onConnect])
    }

    @Test("after a reconnect to a broker with lower limits, what it would refuse completes with its reason instead")
    func lowerLimits() throws {
        var shared = connected(window: 10)
        shared.connectionClosed()
        let exactlyOnce = shared.publish(message("q2", qos: .exactlyOnce), writer)
        var large = message("large")
        large.size = 5000
        let tooLarge = shared.publish(large, writer)
        let fine = shared.publish(message("fine"), writer)

        shared.status = .connected
        shared.limits = BrokerLimits(receiveMaximum: 10, maximumPacketSize: 4096, maximumQoS: .atLeastOnce)
        let refused = shared.holdForResending(writer)
        #expect(
            Dictionary(uniqueKeysWithValues: refused.map { ($0.mid, $0.reasonCode) }) == [
                exactlyOnce: 0x9B, tooLarge: 0x95,
            ])
        shared.resend(writer)
        #expect(try sent(&shared) == ["fine#1"])
        #expect(Set(shared.outgoing.keys) == [fine])
    }

    @Test("a broker without retained messages gets the publish without the retain flag")
    func retainUnavailable() throws {
        var shared = connected(window: 1)
        shared.limits.retainAvailable = false
        _ = shared.publish(message("r"), writer)
        let header = shared.output.first
        #expect(header == 0x32)
    }

    @Test("never more packet identifiers in use than there are: publishes wait, a SUBSCRIBE is refused")
    func identifiersRunOut() throws {
        var shared = connected(window: 65_535)
        for index in 0..<65_534 { _ = shared.publish(message("t/\(index)"), writer) }
        shared.output.removeAll()
        #expect(shared.newAcknowledgement() != nil)
        #expect(shared.newAcknowledgement() == nil)
        let waiting = shared.publish(message("waits"), writer)
        #expect(shared.output.isEmpty && shared.held.last == waiting)
        #expect(shared.acknowledged(type: 4, packetID: 1, reasonCode: 0, writer) != nil)
        #expect(try sent(&shared) == ["waits#1"])
    }

    @Test("a QoS 2 message from the broker is answered with PUBREC, and its PUBREL with PUBCOMP")
    func exactlyOnceIn() throws {
        var shared = connected(window: 1)
        #expect(shared.exactlyOnceReceived.insert(9).inserted)
        #expect(shared.acknowledged(type: 6, packetID: 9, reasonCode: 0, writer) == nil)
        #expect(shared.exactlyOnceReceived.isEmpty)
        #expect(try sent(&shared) == ["ack7#9"])
    }
}
