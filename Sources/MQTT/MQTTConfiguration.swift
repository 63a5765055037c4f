/// Everything the client needs to reach a broker. Defaults suit a broker on the same hub.
public struct MQTTConfiguration: Sendable {
    public enum ProtocolVersion: Sendable, Hashable {
        case v311
        case v5
    }

    /// A message the broker publishes for us when our connection dies without a DISCONNECT: topic,
    /// payload, QoS, retain flag and properties, as any message has.
    public typealias Will = MQTTMessage

    /// TLS to the broker. The server's certificate and host name are verified unless
    /// `verifyServer` is turned off explicitly.
    public struct TLS: Sendable, Hashable {
        /// PEM file of the certificate authorities to trust; nil trusts the system's store.
        public var caFile: String?
        /// Client certificate and key (PEM), for brokers that require them.
        public var certificateFile: String?
        public var keyFile: String?
        /// Verify the broker's certificate chain and host name. Turn off only for testing.
        public var verifyServer: Bool

        public init(
            caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, verifyServer: Bool = true
        ) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.verifyServer = verifyServer
        }
    }

    /// One broker's address.
    public struct Broker: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// The brokers to connect to, in order of preference (never empty): each attempt goes to the
    /// next one when the previous failed, and after a lost connection the first is tried first again.
    public var brokers: [Broker] {
        didSet { precondition(!brokers.isEmpty, "a client needs at least one broker") }
    }
    /// The client identifier; a persistent session needs a stable one.
    public var clientID: String
    /// How often the client and the broker check that the other is there: 0 (never) or 5 to 65,535
    /// seconds (libmosquitto's range).
    public var keepAlive: Duration
    /// How long one connection attempt may take, from the name lookup to the broker's CONNACK.
    public var connectTimeout: Duration
    /// The largest packet the client accepts (MQTT v5: sent in CONNECT, so the broker drops larger
    /// messages for it instead of sending them); nil for MQTT's own limit (256 MB).
    public var maximumPacketSize: UInt32?
    /// True for a new session on every connect; false to keep subscriptions and queued QoS 1/2
    /// messages across disconnects.
    public var cleanSession: Bool
    /// How long the broker keeps a persistent session after a disconnect (MQTT v5; ignored with a
    /// clean session, and 3.1.1 brokers keep it until the client returns).
    public var sessionExpiry: Duration
    public var username: String?
    public var password: String?
    public var tls: TLS?
    public var protocolVersion: ProtocolVersion
    public var will: Will?
    public var reconnect: ReconnectBackoff
    /// When false (the default) `connect()` fails on the first failed attempt; when true it keeps
    /// trying with the reconnect backoff until the broker is there (for a service that may start
    /// before its broker).
    public var retryInitialConnection: Bool

    public init(
        host: String = "127.0.0.1",
        port: Int = 1883,
        clientID: String,
        keepAlive: Duration = .seconds(30),
        connectTimeout: Duration = .seconds(10),
        maximumPacketSize: UInt32? = nil,
        cleanSession: Bool = true,
        sessionExpiry: Duration = .seconds(7 * 24 * 3600),
        username: String? = nil,
        password: String? = nil,
        tls: TLS? = nil,
        protocolVersion: ProtocolVersion = .v5,
        will: Will? = nil,
        reconnect: ReconnectBackoff = ReconnectBackoff(),
        retryInitialConnection: Bool = false
    ) {
        self.brokers = [Broker(host: host, port: port)]
        self.clientID = clientID
        self.keepAlive = keepAlive
        self.connectTimeout = connectTimeout
        self.maximumPacketSize = maximumPacketSize
        self.cleanSession = cleanSession
        self.sessionExpiry = sessionExpiry
        self.username = username
        self.password = password
        self.tls = tls
        self.protocolVersion = protocolVersion
        self.will = will
        self.reconnect = reconnect
        self.retryInitialConnection = retryInitialConnection
    }
}

/// How long to wait before the next connection attempt: exponential growth from `initial` up to
/// `maximum`, each delay drawn at random from its upper half so that many clients that lost the
/// same broker do not all come back in the same instant. The growth starts again from `initial` only
/// after a connection has lasted `stableAfter`: a broker that accepts and drops the client at once
/// (a limit it breaks, another client with the same id) is retried ever more slowly, not in a storm.
public struct ReconnectBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    public var stableAfter: Duration

    public init(
        initial: Duration = .milliseconds(250), maximum: Duration = .seconds(30), stableAfter: Duration = .seconds(30)
    ) {
        precondition(initial > .zero && maximum >= initial, "backoff needs 0 < initial <= maximum")
        self.initial = initial
        self.maximum = maximum
        self.stableAfter = stableAfter
    }

    /// The delay before attempt number `attempt` (0 for the first retry).
    public func delay(forAttempt attempt: Int) -> Duration {
        let doublings = min(max(attempt, 0), 30)
        let ceiling = min(initial * (1 << doublings), maximum)
        return ceiling * Double.random(in: 0.5...1)
    }
}
