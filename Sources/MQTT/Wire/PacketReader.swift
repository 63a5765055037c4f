/// A packet a broker sends to a client, decoded. Only what the client acts on is kept.
enum IncomingPacket: Equatable {
    case connectionAcknowledgement(ConnectionAcknowledgement)
    case publish(MQTTMessage, packetID: UInt16)
    /// PUBACK, PUBREC, PUBREL or PUBCOMP (the packet type's high nibble in `type`).
    case acknowledgement(type: UInt8, packetID: UInt16, reasonCode: UInt8)
    case subscribeAcknowledgement(packetID: UInt16, reasonCodes: [UInt8])
    case unsubscribeAcknowledgement(packetID: UInt16)
    case pingResponse
    case disconnect(reasonCode: UInt8)

    struct ConnectionAcknowledgement: Equatable {
        var sessionPresent: Bool
        var reasonCode: UInt8
        var limits = BrokerLimits()
        /// The keep-alive the broker wants instead of ours, in seconds.
        var serverKeepAlive: UInt16?
    }
}

/// What a broker's CONNACK allows a client to send (MQTT v5; a 3.1.1 broker says nothing, so all).
struct BrokerLimits: Equatable {
    /// How many QoS 1/2 publishes the broker takes unacknowledged.
    var receiveMaximum = 65_535
    var maximumPacketSize: Int?
    var maximumQoS = MQTTQoS.exactlyOnce
    var retainAvailable = true
}

/// A violation of the protocol in what the broker sent.
struct MalformedPacket: Error, Equatable {
    var reason: String
}

/// Splits bytes read from the socket into packets and decodes them. The fixed header tells each
/// packet's length, so a packet that is not all there yet is left for the next read.
struct PacketReader {
    let version: MQTTConfiguration.ProtocolVersion

    /// The largest packet taken from the broker: mosquitto's own limit for a message.
    static let maximumRemainingLength = 268_435_455

    /// Decodes the packet that starts `bytes`, and returns it with the number of bytes it took;
    /// nil while it is incomplete.
    func next(in bytes: UnsafeRawBufferPointer) throws(MalformedPacket) -> (IncomingPacket, consumed: Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = 0
        var multiplier = 1
        var index = 1
        while true {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            length += Int(byte & 0x7F) * multiplier
            index += 1
            if byte & 0x80 == 0 { break }
            multiplier *= 128
            guard index < 5 else { throw MalformedPacket(reason: "remaining length longer than four bytes") }
        }
        guard bytes.count - index >= length else { return nil }
        var cursor = Cursor(UnsafeRawBufferPointer(rebasing: bytes[index..<index + length]))
        let packet = try decode(header: bytes[0], &cursor)
        return (packet, index + length)
    }

    private var isV5: Bool { version == .v5 }

    private func decode(header: UInt8, _ cursor: inout Cursor) throws(MalformedPacket) -> IncomingPacket {
        switch header >> 4 {
        case 2:
            let flags = try cursor.byte()
            var acknowledgement = IncomingPacket.ConnectionAcknowledgement(
                sessionPresent: flags & 1 == 1, reasonCode: try cursor.byte())
            if isV5 && !cursor.isAtEnd {
                try cursor.properties { identifier, cursor throws(MalformedPacket) in
                    switch identifier {
                    case PropertyID.receiveMaximum:
                        acknowledgement.limits.receiveMaximum = Int(try cursor.uint16())
                        guard acknowledgement.limits.receiveMaximum > 0 else {
                            throw MalformedPacket(reason: "receive maximum of 0")
                        }
                    case PropertyID.maximumPacketSize:
                        acknowledgement.limits.maximumPacketSize = Int(try cursor.uint32())
                    case PropertyID.maximumQoS:
                        guard let qos = MQTTQoS(rawValue: Int(try cursor.byte())), qos != .exactlyOnce else {
                            throw MalformedPacket(reason: "maximum QoS other than 0 or 1")
                        }
                        acknowledgement.limits.maximumQoS = qos
                    case PropertyID.retainAvailable: acknowledgement.limits.retainAvailable = try cursor.byte() == 1
                    case PropertyID.serverKeepAlive: acknowledgement.serverKeepAlive = try cursor.uint16()
                    default: try cursor.skipProperty(identifier)
                    }
                }
            }
            return .connectionAcknowledgement(acknowledgement)
        case 3:
            return try publish(flags: header & 0x0F, &cursor)
        case 4, 5, 6, 7:
            let packetID = try cursor.uint16()
            // v5 leaves the reason code (and properties) out when it is success.
            let reasonCode = isV5 && !cursor.isAtEnd ? try cursor.byte() : 0
            return .acknowledgement(type: header >> 4, packetID: packetID, reasonCode: reasonCode)
        case 9:
            let packetID = try cursor.uint16()
            if isV5 {
                try cursor.properties { identifier, cursor throws(MalformedPacket) in
                    try cursor.skipProperty(identifier)
                }
            }
            var codes: [UInt8] = []
            while !cursor.isAtEnd { codes.append(try cursor.byte()) }
            return .subscribeAcknowledgement(packetID: packetID, reasonCodes: codes)
        case 11:
            return .unsubscribeAcknowledgement(packetID: try cursor.uint16())
        case 13:
            return .pingResponse
        case 14:
            return .disconnect(reasonCode: isV5 && !cursor.isAtEnd ? try cursor.byte() : 0)
        default:
            throw MalformedPacket(reason: "unexpected packet type \(header >> 4) from the broker")
        }
    }

    private func publish(flags: UInt8, _ cursor: inout Cursor) throws(MalformedPacket) -> IncomingPacket {
        guard let qos = MQTTQoS(rawValue: Int(flags >> 1 & 0x03)) else {
            throw MalformedPacket(reason: "PUBLISH with QoS 3")
        }
        let topic = try cursor.string()
        let packetID = qos == .atMostOnce ? 0 : try cursor.uint16()
        var properties = MQTTProperties()
        if isV5 {
            try cursor.properties { identifier, cursor throws(MalformedPacket) in
                switch identifier {
                case PropertyID.responseTopic: properties.responseTopic = try cursor.string()
                case PropertyID.correlationData: properties.correlationData = try cursor.binary()
                case PropertyID.contentType: properties.contentType = try cursor.string()
                case PropertyID.messageExpiryInterval: properties.messageExpiryInterval = try cursor.uint32()
                case PropertyID.userProperty:
                    properties.userProperties.append(.init(try cursor.string(), try cursor.string()))
                case PropertyID.topicAlias:
                    // The client never allows aliases (its CONNECT leaves Topic Alias Maximum at 0).
                    throw MalformedPacket(reason: "topic alias the client did not allow")
                default: try cursor.skipProperty(identifier)
                }
            }
        }
        let message = MQTTMessage(
            topic: topic, payload: cursor.rest(), qos: qos, retain: flags & 1 == 1, properties: properties)
        return .publish(message, packetID: packetID)
    }
}

/// Reads the fields of one packet's body, never past its end.
struct Cursor {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    private mutating func take(_ count: Int) throws(MalformedPacket) -> UnsafeRawBufferPointer {
        guard count >= 0, bytes.count - position >= count else {
            throw MalformedPacket(reason: "packet shorter than its fields")
        }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
    }

    mutating func byte() throws(MalformedPacket) -> UInt8 { try take(1)[0] }

    mutating func uint16() throws(MalformedPacket) -> UInt16 {
        let field = try take(2)
        return UInt16(field[0]) << 8 | UInt16(field[1])
    }

    mutating func uint32() throws(MalformedPacket) -> UInt32 {
        let field = try take(4)
        return UInt32(field[0]) << 24 | UInt32(field[1]) << 16 | UInt32(field[2]) << 8 | UInt32(field[3])
    }

    mutating func variableInt() throws(MalformedPacket) -> Int {
        var value = 0
        for shift in stride(from: 0, to: 28, by: 7) {
            let byte = try self.byte()
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        throw MalformedPacket(reason: "variable byte integer longer than four bytes")
    }

    mutating func string() throws(MalformedPacket) -> String {
        let field = try take(Int(try uint16()))
        guard let text = String(validating: field, as: UTF8.self) else {
            throw MalformedPacket(reason: "string that is not UTF-8")
        }
        return text
    }

    mutating func binary() throws(MalformedPacket) -> [UInt8] {
        Array(try take(Int(try uint16())))
    }

    mutating func rest() -> [UInt8] {
        defer { position = bytes.count }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[position...]))
    }

    /// Reads a property list, handing each identifier to `body`, which reads its value.
    mutating func properties(
        _ body: (UInt8, inout Cursor) throws(MalformedPacket) -> Void
    ) throws(MalformedPacket) {
        let length = try variableInt()
        var list = Cursor(try take(length))
        while !list.isAtEnd {
            let identifier = try list.byte()
            try body(identifier, &list)
        }
    }

    /// Skips the value of any property MQTT v5 defines; an unknown identifier is malformed.
    mutating func skipProperty(_ identifier: UInt8) throws(MalformedPacket) {
        switch identifier {
        case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A: _ = try take(1)
        case 0x13, 0x21, 0x22, 0x23: _ = try take(2)
        case 0x02, 0x11, 0x18, 0x27: _ = try take(4)
        case 0x0B: _ = try variableInt()
        case 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F: _ = try take(Int(try uint16()))
        case 0x26:
            _ = try take(Int(try uint16()))
            _ = try take(Int(try uint16()))
        default: throw MalformedPacket(reason: "unknown property 0x\(String(identifier, radix: 16))")
        }
    }
}
