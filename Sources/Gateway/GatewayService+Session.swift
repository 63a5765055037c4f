import MQTT

extension MQTTConfiguration {
    /// Makes the gateway's connection a persistent session, which the broker keeps for five minutes
    /// while the gateway is away, and bounds the packets it reads (``gatewayMaximumPacketSize``). In
    /// the session the broker keeps its command subscriptions and queues the QoS 1 commands that
    /// arrive while the gateway reconnects (after a broker restart with persistence, or a restart of
    /// the gateway within those minutes), so a command the broker acknowledged is not dropped for
    /// want of a subscriber. Commands that wait longer are dropped with the session; clients that
    /// mind a late command set an MQTT 5 message expiry on it.
    package mutating func keepGatewaySession() {
        cleanSession = false
        sessionExpiry = .seconds(300)
        maximumPacketSize = Self.gatewayMaximumPacketSize
    }

    /// The largest packet the gateway takes from its broker (MQTT v5 tells the broker, which then
    /// drops larger messages for the gateway): room for the largest command (64 KiB, answered with
    /// `invalidParameter` above that) and for dynamic security's listings of a large household, and
    /// no 150 MB publish held in a Pi's memory. MQTT 3.1.1 has no way to say it.
    static let gatewayMaximumPacketSize: UInt32 = 1 << 20
}
