/// An error from the MQTT client: a code that callers can match (and that travels by name), and the
/// human message, which is libmosquitto's or the broker's own wording wherever there is one.
public struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. An open set of static members, so new codes are not a breaking change.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case badCredentials
            case notAuthorized
            case connectionRefused
            case connectionFailed
            case connectionLost
            case notConnected
            case tls
            case protocolError
            case invalidArgument
            case packetTooLarge
            case notSupported
            case subscriptionRefused
            case publishRefused
            case clientClosed
            case system
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The broker refused the username or password.
        public static let badCredentials = Code(.badCredentials)
        /// The broker refused the connection or operation for this account.
        public static let notAuthorized = Code(.notAuthorized)
        /// The broker refused the connection for another reason (its reason is in the message).
        public static let connectionRefused = Code(.connectionRefused)
        /// No connection could be made: host not found, nothing listening, network down.
        public static let connectionFailed = Code(.connectionFailed)
        /// An established connection broke.
        public static let connectionLost = Code(.connectionLost)
        /// The operation needs a connection and there is none right now.
        public static let notConnected = Code(.notConnected)
        /// TLS setup or handshake failed (untrusted certificate, wrong host name, unreadable file).
        public static let tls = Code(.tls)
        /// The broker or the library saw a protocol violation.
        public static let protocolError = Code(.protocolError)
        /// A topic, payload, option or property is not acceptable.
        public static let invalidArgument = Code(.invalidArgument)
        /// A packet is larger than the broker takes (the maximum packet size of its CONNACK).
        public static let packetTooLarge = Code(.packetTooLarge)
        /// The feature is not available with this protocol version or broker.
        public static let notSupported = Code(.notSupported)
        /// The broker refused one or more topic filters of a subscription.
        public static let subscriptionRefused = Code(.subscriptionRefused)
        /// The broker acknowledged a publish with a failure reason code (MQTT v5).
        public static let publishRefused = Code(.publishRefused)
        /// The client was shut down before the operation completed.
        public static let clientClosed = Code(.clientClosed)
        /// A system call failed (out of memory, file errors, ...).
        public static let system = Code(.system)

        /// The code's name as it goes over the wire and into logs.
        public var name: String { base.rawValue }
        public var description: String { name }
    }

    public let code: Code
    public let message: String
    /// The MQTT reason code (v5) or CONNACK return code (v3.1.1) the broker sent, where there was one.
    public let reasonCode: Int?

    public init(_ code: Code, _ message: String, reasonCode: Int? = nil) {
        self.code = code
        self.message = message
        self.reasonCode = reasonCode
    }

    public var description: String { "\(code.name): \(message)" }

    /// What to do when a broker that speaks only MQTT 3.1.1 meets our MQTT 5 CONNECT.
    static let protocolHint =
        "if the broker speaks only MQTT 3.1.1 (RabbitMQ before 3.13, amqtt), set mqtt.protocolVersion: \"3.1.1\""
}
