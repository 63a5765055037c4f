import MQTT

extension MQTTConfiguration {
    /// How long the broker keeps the gateway's session while the gateway is away.
    public static let gatewaySessionExpiry: Duration = .seconds(300)

    /// Makes the gateway's connection a persistent session: the broker keeps its command
    /// subscriptions and queues the QoS 1 commands that arrive while the gateway reconnects (after a
    /// broker restart with persistence, or a restart of the gateway within `expiry`), so a command
    /// the broker acknowledged is not dropped for want of a subscriber. Commands that wait longer
    /// than `expiry` are dropped with the session; clients that mind a late command set an MQTT 5
    /// message expiry on it.
    public mutating func keepGatewaySession(for expiry: Duration = gatewaySessionExpiry) {
        cleanSession = false
        sessionExpiry = expiry
    }
}
