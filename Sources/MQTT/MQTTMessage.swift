/// MQTT's delivery guarantee for one message or subscription.
public enum MQTTQoS: Int, Sendable, Hashable, CaseIterable, Comparable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The MQTT v5 properties of a PUBLISH (or a will) that homegate uses. Empty on MQTT 3.1.1.
public struct MQTTProperties: Sendable, Hashable {
    /// Where the receiver should send its answer (request/response).
    public var responseTopic: String?
    /// Opaque bytes the requester uses to match the answer to its request.
    public var correlationData: [UInt8]?
    /// Free name/value pairs, in order; names may repeat.
    public var userProperties: [UserProperty]
    /// Seconds after which the broker drops the message if it is still undelivered.
    public var messageExpiryInterval: UInt32?
    /// MIME type of the payload.
    public var contentType: String?

    public struct UserProperty: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(
        responseTopic: String? = nil,
        correlationData: [UInt8]? = nil,
        userProperties: [UserProperty] = [],
        messageExpiryInterval: UInt32? = nil,
        contentType: String? = nil
    ) {
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.userProperties = userProperties
        self.messageExpiryInterval = messageExpiryInterval
        self.contentType = contentType
    }

    public var isEmpty: Bool {
        responseTopic == nil && correlationData == nil && userProperties.isEmpty
            && messageExpiryInterval == nil && contentType == nil
    }
}

/// A message as received from the broker (copied out of the read buffer at once, so it owns its
/// bytes), or the will the client leaves with the broker (``MQTTConfiguration/Will``).
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    /// True when the broker delivered this as a retained message (to a new subscription); for a
    /// will, that the broker keeps it.
    public var retain: Bool
    public var properties: MQTTProperties

    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    /// The payload as UTF-8 text, or nil when it is not valid UTF-8.
    public var payloadString: String? {
        String(validating: payload, as: UTF8.self)
    }
}

/// Options of a subscription (MQTT v5; ignored by 3.1.1 brokers).
public struct MQTTSubscribeOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Do not deliver this client's own publishes back to it.
    public static let noLocal = MQTTSubscribeOptions(rawValue: 0x04)
    /// Keep the retain flag as the publisher set it on live messages.
    public static let retainAsPublished = MQTTSubscribeOptions(rawValue: 0x08)
}

/// What happens to the client's connection, in order, for whoever wants to follow it.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// The broker accepted the connection. `sessionPresent` tells whether it kept a session for us.
    case connected(sessionPresent: Bool)
    /// The connection broke or an attempt failed; the client retries after `retryIn`.
    case disconnected(MQTTError, retryIn: Duration)
    /// The client was shut down; no further events follow.
    case closed
}
