/// What ``MQTTClient`` asks of the code that speaks MQTT on the socket: ``TCPEngine`` (the
/// protocol in Swift, for plain TCP) or ``Mosquitto`` (libmosquitto, for TLS).
///
/// Results are libmosquitto's codes (`Mosquitto.success` and its `MOSQ_ERR_*`), which
/// `Mosquitto.error(forResult:detail:)` turns into an ``MQTTError``; each engine reports what it
/// hears from the broker through the ``MQTTClient`` handed to `installCallbacks`.
///
/// `connect`, `reconnect` and `loop` come from the one thread that serves the connection (only a
/// ``TCPEngine`` can be served by an ``EventLoopThread``); `publish`, `subscribe`, `unsubscribe`
/// and `disconnect` from any thread.
protocol MQTTEngine: Sendable {
    var protocolVersion: MQTTConfiguration.ProtocolVersion { get }

    func installCallbacks(context: UnsafeMutableRawPointer, logging: Bool)

    func connect(host: String, port: Int, keepAlive: Duration, sessionExpiry: UInt32?) -> Int32
    func reconnect() -> Int32
    /// Serves the connection for up to `timeout` on the calling thread.
    func loop(timeout: Duration) -> Int32
    /// Wakes `loop(timeout:)` for a packet queued from another thread.
    func wakeLoop()
    func destroy()

    /// Queues a PUBLISH and returns its message id, 0 when nothing will acknowledge it (QoS 0 on
    /// an engine that reports no completion for it). Unless the publish is `awaited`, an engine may
    /// report no completion for it either (and return 0): nobody waits for one.
    func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTProperties, awaited: Bool
    ) throws(MQTTError) -> Int32
    func subscribe(_ filters: [String], qos: MQTTQoS, options: MQTTSubscribeOptions) throws(MQTTError) -> Int32
    func unsubscribe(_ filters: [String]) throws(MQTTError) -> Int32
    @discardableResult func disconnect() -> Int32
}

extension MQTTEngine {
    /// The error for a CONNACK that refused us, in the broker's words.
    func connectRefusal(reasonCode: Int32) -> MQTTError {
        Mosquitto.connectRefusal(reasonCode: reasonCode, version: protocolVersion)
    }
}
