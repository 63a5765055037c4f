/// Encodes the MQTT control packets a client sends (v5 and 3.1.1) straight into an output buffer:
/// each packet's length is computed first, so nothing is encoded twice or into a temporary array.
struct PacketWriter {
    let version: MQTTConfiguration.ProtocolVersion

    var isV5: Bool { version == .v5 }

    // MARK: Packets

    /// CONNECT. `sessionExpiry` goes out as a property on v5 only; 3.1.1 has no such thing.
    func connect(
        into out: inout [UInt8], clientID: String, cleanStart: Bool, keepAliveSeconds: UInt16,
        sessionExpiry: UInt32?, username: String?, password: String?, will: MQTTConfiguration.Will?
    ) {
        // 3.1.1 allows a password only with a user name.
        let username = username ?? (password != nil && !isV5 ? "" : nil)
        var properties = 0
        if isV5, sessionExpiry != nil { properties += 5 }
        var length = 6 + 1 + 1 + 2 + (isV5 ? Self.variableIntSize(properties) + properties : 0)
        length += 2 + clientID.utf8.count
        var willProperties = 0
        if let will {
            if isV5 {
                willProperties = Self.size(of: will.properties)
                length += Self.variableIntSize(willProperties) + willProperties
            }
            length += 2 + will.topic.utf8.count + 2 + will.payload.count
        }
        if let username { length += 2 + username.utf8.count }
        if let password { length += 2 + password.utf8.count }

        var flags: UInt8 = cleanStart ? 0x02 : 0
        if let will {
            flags |= 0x04 | UInt8(will.qos.rawValue) << 3 | (will.retain ? 0x20 : 0)
        }
        if password != nil { flags |= 0x40 }
        if username != nil { flags |= 0x80 }

        Self.fixedHeader(0x10, length: length, into: &out)
        Self.string("MQTT", into: &out)
        out.append(isV5 ? 5 : 4)
        out.append(flags)
        Self.uint16(keepAliveSeconds, into: &out)
        if isV5 {
            Self.variableInt(properties, into: &out)
            if let sessionExpiry {
                out.append(PropertyID.sessionExpiryInterval)
                Self.uint32(sessionExpiry, into: &out)
            }
        }
        Self.string(clientID, into: &out)
        if let will {
            if isV5 { Self.properties(will.properties, size: willProperties, into: &out) }
            Self.string(will.topic, into: &out)
            Self.binary(will.payload, into: &out)
        }
        if let username { Self.string(username, into: &out) }
        if let password { Self.string(password, into: &out) }
    }

    /// The size a PUBLISH would have on the wire, for the broker's maximum packet size.
    func publishSize(topic: String, payload: [UInt8], qos: MQTTQoS, properties: MQTTProperties) -> Int {
        let length = publishRemainingLength(topic: topic, payload: payload, qos: qos, properties: properties)
        return 1 + Self.variableIntSize(length) + length
    }

    private func publishRemainingLength(
        topic: String, payload: [UInt8], qos: MQTTQoS, properties: MQTTProperties
    ) -> Int {
        var length = 2 + topic.utf8.count + (qos == .atMostOnce ? 0 : 2) + payload.count
        if isV5 {
            let size = Self.size(of: properties)
            length += Self.variableIntSize(size) + size
        }
        return length
    }

    /// PUBLISH; `packetID` is ignored at QoS 0.
    func publish(
        into out: inout [UInt8], topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, duplicate: Bool,
        packetID: UInt16, properties: MQTTProperties
    ) {
        let length = publishRemainingLength(topic: topic, payload: payload, qos: qos, properties: properties)
        let flags = UInt8(qos.rawValue) << 1 | (retain ? 0x01 : 0) | (duplicate && qos != .atMostOnce ? 0x08 : 0)
        Self.fixedHeader(0x30 | flags, length: length, into: &out)
        Self.string(topic, into: &out)
        if qos != .atMostOnce { Self.uint16(packetID, into: &out) }
        if isV5 { Self.properties(properties, size: Self.size(of: properties), into: &out) }
        out.append(contentsOf: payload)
    }

    /// PUBACK (0x40), PUBREC (0x50), PUBREL (0x62) or PUBCOMP (0x70) with success: the short form
    /// both versions accept.
    func acknowledgement(_ header: UInt8, packetID: UInt16, into out: inout [UInt8]) {
        out.append(header)
        out.append(2)
        Self.uint16(packetID, into: &out)
    }

    func subscribe(
        into out: inout [UInt8], packetID: UInt16, filters: [String], qos: MQTTQoS, options: MQTTSubscribeOptions
    ) {
        let length = 2 + (isV5 ? 1 : 0) + filters.reduce(0) { $0 + 2 + $1.utf8.count + 1 }
        Self.fixedHeader(0x82, length: length, into: &out)
        Self.uint16(packetID, into: &out)
        if isV5 { out.append(0) }
        let optionsByte = UInt8(qos.rawValue) | (isV5 ? UInt8(truncatingIfNeeded: options.rawValue) : 0)
        for filter in filters {
            Self.string(filter, into: &out)
            out.append(optionsByte)
        }
    }

    func unsubscribe(into out: inout [UInt8], packetID: UInt16, filters: [String]) {
        let length = 2 + (isV5 ? 1 : 0) + filters.reduce(0) { $0 + 2 + $1.utf8.count }
        Self.fixedHeader(0xA2, length: length, into: &out)
        Self.uint16(packetID, into: &out)
        if isV5 { out.append(0) }
        for filter in filters { Self.string(filter, into: &out) }
    }

    func pingRequest(into out: inout [UInt8]) {
        out.append(0xC0)
        out.append(0)
    }

    /// DISCONNECT with "normal disconnection": the broker drops the will.
    func disconnect(into out: inout [UInt8]) {
        out.append(0xE0)
        out.append(0)
    }

    // MARK: Fields

    static func fixedHeader(_ byte: UInt8, length: Int, into out: inout [UInt8]) {
        out.append(byte)
        variableInt(length, into: &out)
    }

    static func variableIntSize(_ value: Int) -> Int {
        switch value {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        default: 4
        }
    }

    static func variableInt(_ value: Int, into out: inout [UInt8]) {
        var value = value
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            out.append(byte)
        } while value > 0
    }

    static func uint16(_ value: UInt16, into out: inout [UInt8]) {
        out.append(UInt8(value >> 8))
        out.append(UInt8(value & 0xFF))
    }

    static func uint32(_ value: UInt32, into out: inout [UInt8]) {
        out.append(UInt8(value >> 24))
        out.append(UInt8(value >> 16 & 0xFF))
        out.append(UInt8(value >> 8 & 0xFF))
        out.append(UInt8(value & 0xFF))
    }

    static func string(_ value: String, into out: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            uint16(UInt16(truncatingIfNeeded: bytes.count), into: &out)
            out.append(contentsOf: bytes)
        }
    }

    static func binary(_ value: [UInt8], into out: inout [UInt8]) {
        uint16(UInt16(truncatingIfNeeded: value.count), into: &out)
        out.append(contentsOf: value)
    }

    /// The size of a PUBLISH's (or a will's) properties, without their length prefix.
    static func size(of properties: MQTTProperties) -> Int {
        guard !properties.isEmpty else { return 0 }
        var size = 0
        if properties.messageExpiryInterval != nil { size += 5 }
        if let contentType = properties.contentType { size += 3 + contentType.utf8.count }
        if let responseTopic = properties.responseTopic { size += 3 + responseTopic.utf8.count }
        if let data = properties.correlationData { size += 3 + data.count }
        for property in properties.userProperties {
            size += 5 + property.name.utf8.count + property.value.utf8.count
        }
        return size
    }

    static func properties(_ properties: MQTTProperties, size: Int, into out: inout [UInt8]) {
        variableInt(size, into: &out)
        guard size > 0 else { return }
        if let expiry = properties.messageExpiryInterval {
            out.append(PropertyID.messageExpiryInterval)
            uint32(expiry, into: &out)
        }
        if let contentType = properties.contentType {
            out.append(PropertyID.contentType)
            string(contentType, into: &out)
        }
        if let responseTopic = properties.responseTopic {
            out.append(PropertyID.responseTopic)
            string(responseTopic, into: &out)
        }
        if let data = properties.correlationData {
            out.append(PropertyID.correlationData)
            binary(data, into: &out)
        }
        for property in properties.userProperties {
            out.append(PropertyID.userProperty)
            string(property.name, into: &out)
            string(property.value, into: &out)
        }
    }
}

/// The MQTT v5 property identifiers the client reads or writes.
enum PropertyID {
    static let payloadFormatIndicator: UInt8 = 0x01
    static let messageExpiryInterval: UInt8 = 0x02
    static let contentType: UInt8 = 0x03
    static let responseTopic: UInt8 = 0x08
    static let correlationData: UInt8 = 0x09
    static let subscriptionIdentifier: UInt8 = 0x0B
    static let sessionExpiryInterval: UInt8 = 0x11
    static let serverKeepAlive: UInt8 = 0x13
    static let reasonString: UInt8 = 0x1F
    static let receiveMaximum: UInt8 = 0x21
    static let topicAlias: UInt8 = 0x23
    static let maximumQoS: UInt8 = 0x24
    static let retainAvailable: UInt8 = 0x25
    static let userProperty: UInt8 = 0x26
    static let maximumPacketSize: UInt8 = 0x27
}
