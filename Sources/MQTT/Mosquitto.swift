import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `mosquitto_lib_init`, once per process, before the first client is made.
private let libmosquittoInitialised: Bool = mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue

/// What the broker said of itself in its CONNACK (MQTT v5 properties; a 3.1.1 broker says nothing).
struct BrokerLimits: Sendable, Hashable {
    /// The highest QoS the broker accepts from us; nil when it accepts every QoS.
    var maximumQoS: MQTTQoS?
    /// False when the broker keeps no retained messages.
    var retainAvailable = true
}

/// The MQTT engine: libmosquitto, for plain TCP and TLS alike. Every call of the project into
/// libmosquitto is a method here, and every C return code becomes an ``MQTTError`` in one place.
///
/// `@unchecked Sendable`: the instance is put in threaded mode (`mosquitto_threaded_set`), in which
/// libmosquitto guards its own state with mutexes and only queues packets from `publish`,
/// `subscribe`, `unsubscribe` and `disconnect`, which may come from any thread. Everything that
/// reads or writes the socket (`connect`, `loop`, `loopRead`, `loopWrite`, `loopMisc`) comes from
/// the one thread that serves the connection at the time, and `destroy` only once it has ended.
struct Mosquitto: @unchecked Sendable {
    private let handle: OpaquePointer
    let protocolVersion: MQTTConfiguration.ProtocolVersion

    init(configuration: MQTTConfiguration) throws(MQTTError) {
        guard libmosquittoInitialised else {
            throw MQTTError(.system, "libmosquitto could not be initialised (mosquitto_lib_init)")
        }
        guard let handle = mosquitto_new(configuration.clientID, configuration.cleanSession, nil) else {
            throw MQTTError(
                .invalidArgument,
                "libmosquitto refused to create a client (a persistent session needs a client id): \(String(cString: strerror(errno)))"
            )
        }
        self.handle = handle
        self.protocolVersion = configuration.protocolVersion
        do {
            try configure(configuration)
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
    }

    private func configure(_ configuration: MQTTConfiguration) throws(MQTTError) {
        try check(mosquitto_threaded_set(handle, true))
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(version)))
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1))
        try check(mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, 65535))
        try check(mosquitto_max_inflight_messages_set(handle, 0))
        if configuration.username != nil || configuration.password != nil {
            try check(mosquitto_username_pw_set(handle, configuration.username, configuration.password))
        }
        if let will = configuration.will {
            try setWill(will)
        }
        if let tls = configuration.tls {
            try configureTLS(tls)
        }
        if configuration.protocolVersion == .v5 {
            try setConnectProperties(configuration)
        }
    }

    private func setWill(_ will: MQTTConfiguration.Will) throws(MQTTError) {
        var properties = try Self.propertyList(will.properties)
        let rc = will.payload.withUnsafeBytes { payload in
            mosquitto_will_set_v5(
                handle, will.topic, Int32(payload.count), payload.baseAddress, Int32(will.qos.rawValue),
                will.retain, properties)
        }
        // On success libmosquitto owns the list; on failure it is still ours to free.
        if rc != Self.success { mosquitto_property_free_all(&properties) }
        try check(rc, context: "will on '\(will.topic)'")
    }

    private func configureTLS(_ tls: MQTTConfiguration.TLS) throws(MQTTError) {
        var caDirectory: String?
        if tls.caFile == nil {
            try check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1))
            caDirectory = "/etc/ssl/certs"
        }
        try check(
            mosquitto_tls_set(handle, tls.caFile, caDirectory, tls.certificateFile, tls.keyFile, nil),
            context: "TLS files")
        if !tls.verifyServer {
            try check(mosquitto_tls_opts_set(handle, 0, nil, nil))
            try check(mosquitto_tls_insecure_set(handle, true))
        }
    }

    /// The MQTT v5 properties of every CONNECT: the session expiry (v5 ends a session at disconnect
    /// unless told otherwise) and the largest packet we accept, so that the broker drops a larger
    /// message for us instead of making us read it.
    ///
    /// libmosquitto 2.0 takes CONNECT properties only in its blocking `mosquitto_connect_bind_v5`,
    /// which keeps them for every later (re)connect, asynchronous ones included. It stores them
    /// before it checks the address, so a call with port -1 stores them and connects nowhere.
    private func setConnectProperties(_ configuration: MQTTConfiguration) throws(MQTTError) {
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if !configuration.cleanSession {
            try check(
                mosquitto_property_add_int32(
                    &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue),
                    UInt32(clamping: configuration.sessionExpiry.components.seconds)))
        }
        if let maximum = configuration.maximumPacketSize {
            try check(
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), maximum))
        }
        guard properties != nil else { return }
        let rc = mosquitto_connect_bind_v5(handle, "", -1, 60, nil, properties)
        guard rc == Int32(MOSQ_ERR_INVAL.rawValue) else {
            throw Self.error(forResult: rc, detail: nil, context: "storing the CONNECT properties")
        }
    }

    /// Closes the socket pair libmosquitto writes a byte to for every packet it queues, to wake its
    /// own `select`: an outside loop never reads it, so each packet would cost a failing `write` and
    /// leave `errno` at EAGAIN, which ends ``loopRead()`` early. Only for a client served by an
    /// ``EventLoopThread`` (its ``loop(timeout:)`` calls while connecting end by their timeout), and
    /// before the first connect. Leaves the pair where libmosquitto's fields are not as expected
    /// (CMosquitto/shim.h says how they are checked); ``loopRead()`` is then only slower.
    func closeWakeupPair() -> Bool { homegate_mosquitto_close_wakeup_pair(handle) == 1 }

    /// The running libmosquitto's version, `major.minor.revision` (`mosquitto_lib_version`).
    static var libraryVersion: String {
        var (major, minor, revision): (Int32, Int32, Int32) = (0, 0, 0)
        mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    /// Whether the running libmosquitto is a release whose wake-up pair ``closeWakeupPair()`` knows
    /// where to find (2.0 and 2.1); another one is served the library's public way, pair and all.
    static var knowsWakeupPairLayout: Bool { homegate_mosquitto_layout_known() == 1 }

    /// Installs the callbacks; `context` is handed back to each of them as libmosquitto's user data.
    ///
    /// With `logging`, libmosquitto's log lines reach ``MQTTClient``: its errors name what went wrong
    /// (OpenSSL's reason for a failed handshake, for instance). libmosquitto formats a line into a new
    /// buffer for every packet sent or received once a log callback is set, whatever its level, so a
    /// client installs it only where the lines can matter: with TLS, or when its logger shows debug.
    func installCallbacks(context: UnsafeMutableRawPointer, logging: Bool) {
        mosquitto_user_data_set(handle, context)
        mosquitto_connect_v5_callback_set(handle) { _, context, reasonCode, flags, properties in
            MQTTClient.from(context).didConnect(
                reasonCode: reasonCode, sessionPresent: flags & 1 == 1, limits: Mosquitto.limits(from: properties))
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, reasonCode, _ in
            MQTTClient.from(context).didDisconnect(reasonCode: reasonCode)
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, mid, reasonCode, _ in
            MQTTClient.from(context).didComplete(mid: mid, with: .published(reasonCode: reasonCode))
            Mosquitto.clearErrno()
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, context, mid, count, granted, _ in
            let codes = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            MQTTClient.from(context).didComplete(mid: mid, with: .subscribed(reasonCodes: codes))
        }
        mosquitto_unsubscribe_v5_callback_set(handle) { _, context, mid, _ in
            MQTTClient.from(context).didComplete(mid: mid, with: .unsubscribed)
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, properties in
            // Where the wake-up pair is kept, the PUBACK queued before this call left EAGAIN.
            defer { Mosquitto.clearErrno() }
            guard let message = message?.pointee, let topic = message.topic else { return }
            let client = MQTTClient.from(context)
            // libmosquitto checks a topic name's UTF-8 but not its wildcards.
            guard mosquitto_pub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else {
                client.didReceiveInvalid(topic: String(cString: topic))
                return
            }
            client.didReceive(
                MQTTMessage(
                    topic: String(cString: topic),
                    // libmosquitto leaves the payload NULL only when it is empty.
                    payload: Array(UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))),
                    qos: MQTTQoS(rawValue: Int(message.qos)) ?? .atMostOnce,
                    retain: message.retain,
                    properties: Mosquitto.properties(from: properties)))
        }
        guard logging else { return }
        mosquitto_log_callback_set(handle) { _, context, level, text in
            // Debug lines come for every packet: drop them before making a String.
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text else { return }
            MQTTClient.from(context).didLog(String(cString: text), isError: level & MOSQ_LOG_ERR != 0)
        }
    }

    /// Clears `errno` at the end of a callback that runs within `mosquitto_loop_read`, which takes
    /// an EAGAIN left there by anything (the callback's work, or a wake-up byte written to a full
    /// socket pair, ``closeWakeupPair()``) for an empty socket and stops reading.
    private static func clearErrno() { errno = 0 }

    // MARK: The serving thread only

    /// Starts opening the connection to `broker` without waiting (the CONNECT is queued and written
    /// once the socket is writable): the caller serves it with ``loop(timeout:)`` until the CONNACK
    /// or its own deadline. Only the name lookup blocks.
    func connect(to broker: MQTTConfiguration.Broker, keepAlive: Duration) -> Int32 {
        let seconds = Int32(clamping: keepAlive.components.seconds)
        return mosquitto_connect_bind_async(handle, broker.host, Int32(broker.port), seconds, nil)
    }

    /// Serves the connection for up to `timeout` on the calling thread (libmosquitto's own `select`,
    /// woken early by a packet queued from another thread unless ``closeWakeupPair()`` closed the
    /// pair that does it).
    func loop(timeout: Duration) -> Int32 { mosquitto_loop(handle, Int32(timeout / .milliseconds(1)), 1) }

    /// The connection's socket, for a loop that polls it (-1 without a connection).
    var socket: Int32 { mosquitto_socket(handle) }

    /// True while TLS holds decrypted bytes that no `poll` of the socket would announce.
    var hasBufferedInput: Bool { homegate_mosquitto_tls_pending(handle) > 0 }

    /// True while packets wait to be written.
    var wantsToWrite: Bool { mosquitto_want_write(handle) }

    /// Reads what the socket holds. `mosquitto_loop_read` reads packet after packet (up to the count
    /// of QoS 1/2 messages in flight) and stops where `errno` says EAGAIN: the socket is empty, or
    /// a packet is not all there yet. So this reads on after a call that stopped for its count (64
    /// calls at most, so that the loop's tasks and writes get their turn; the level-triggered poll
    /// sees the rest), and always while TLS holds decrypted bytes, which no poll would see. The
    /// callbacks clear `errno` (``installCallbacks(context:logging:)``), or a PUBACK queued before
    /// one of them would end the read after every PUBLISH.
    func loopRead() -> Int32 {
        var (rc, drained) = readPackets()
        var reads = 1
        var tlsPending = Int32(0)
        while rc == Self.success {
            let pending = homegate_mosquitto_tls_pending(handle)
            // Only while a read takes some of them: libmosquitto may leave them (a connection
            // still being set up), and this must not spin.
            if pending > 0 && pending != tlsPending {
                tlsPending = pending
                (rc, drained) = readPackets()
            } else if reads < 64 && !drained {
                (rc, drained) = readPackets()
                reads += 1
            } else {
                break
            }
        }
        return rc
    }

    /// One `mosquitto_loop_read`, and whether it ended on an empty socket, which libmosquitto tells
    /// by `errno` alone: cleared first, so that an EAGAIN left by an earlier call does not count.
    private func readPackets() -> (rc: Int32, drained: Bool) {
        errno = 0
        let rc = mosquitto_loop_read(handle, 1)
        return (rc, errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Writes what is queued, as far as the socket takes it, corked: libmosquitto sends each packet
    /// with a `send` of its own, and with TCP_NODELAY each would leave as a segment of its own (a
    /// command's value, `$state`, `$events` and the PUBACK: four segments for the broker to take in).
    /// Corked, they leave together when the cork comes off at the end. `bench/run.sh`: about 15 %
    /// more writes/s in the window and no later p50 at 1,000/s (docs/benchmarks.md).
    func loopWrite() -> Int32 {
        setCork(mosquitto_socket(handle), true)
        let rc = mosquitto_loop_write(handle, 1)
        // Asked again: a DISCONNECT written closes the socket (-1 now), whose number may be another's.
        setCork(mosquitto_socket(handle), false)
        return rc
    }

    private func setCork(_ socket: Int32, _ on: Bool) {
        guard socket >= 0 else { return }
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Keep-alive: sends PINGREQ when due, and ends a connection whose broker stopped answering.
    func loopMisc() -> Int32 { mosquitto_loop_misc(handle) }

    /// Frees the instance. Only after the serving thread has ended.
    func destroy() { mosquitto_destroy(handle) }

    // MARK: Any thread

    /// Queues a PUBLISH and returns its message id (libmosquitto reports every QoS 1/2 completion,
    /// awaited or not: the client drops those nobody waits for; QoS 0 completes when written).
    func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTProperties
    ) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        var list = try propertyListForSending(properties)
        defer { mosquitto_property_free_all(&list) }
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(
                handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos.rawValue), retain, list)
        }
        // A QoS 1/2 message stays queued in libmosquitto while the connection is down and is sent
        // after the reconnect, so that is not a failure: the caller waits for its acknowledgement.
        if rc == Int32(MOSQ_ERR_NO_CONN.rawValue) && qos != .atMostOnce && mid != 0 { return mid }
        // The context is written only for a failure: every message the gateway sends comes here
        // (three per command), and the interpolated string cost an allocation each.
        guard rc == Self.success else { throw Self.error(forResult: rc, detail: nil, context: "publish to '\(topic)'") }
        return mid
    }

    /// Queues a SUBSCRIBE for all `filters` and returns its message id. Throws `packetTooLarge` when
    /// the packet is larger than the broker accepts.
    func subscribe(_ filters: [String], qos: MQTTQoS, options: MQTTSubscribeOptions) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let effectiveOptions = protocolVersion == .v5 ? options.rawValue : 0
        let rc = withCStringArray(filters) { pointers in
            mosquitto_subscribe_multiple(
                handle, &mid, Int32(filters.count), pointers, Int32(qos.rawValue), effectiveOptions, nil)
        }
        try check(rc, context: "subscribe to \(filters)")
        return mid
    }

    /// Queues an UNSUBSCRIBE for all `filters` and returns its message id.
    func unsubscribe(_ filters: [String]) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let rc = withCStringArray(filters) { pointers in
            mosquitto_unsubscribe_multiple(handle, &mid, Int32(filters.count), pointers, nil)
        }
        try check(rc, context: "unsubscribe from \(filters)")
        return mid
    }

    /// Queues a DISCONNECT (normal disconnection: the broker does not publish the will).
    func disconnect() { mosquitto_disconnect(handle) }

    // MARK: Errors

    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)
    static let connectionLost = Int32(MOSQ_ERR_CONN_LOST.rawValue)
    static let timedOut = Int32(MOSQ_ERR_TIMEOUT.rawValue)

    private func check(_ rc: Int32, context: String? = nil) throws(MQTTError) {
        guard rc != Self.success else { return }
        throw Self.error(forResult: rc, detail: nil, context: context)
    }

    /// Turns a libmosquitto return code into an `MQTTError` with the library's own message, where it
    /// has one that says what happened. `systemError` is the `errno` of the thread whose call failed;
    /// `detail` (the last error libmosquitto logged, such as OpenSSL's reason) is appended.
    static func error(
        forResult rc: Int32, systemError: Int32 = errno, detail: String?, context: String? = nil
    ) -> MQTTError {
        let code: MQTTError.Code
        var message =
            switch mosq_err_t(rawValue: rc) {
            case MOSQ_ERR_ERRNO: String(cString: strerror(systemError))
            case MOSQ_ERR_KEEPALIVE:
                "the broker did not answer within the keep-alive interval (no PINGRESP)"
            case MOSQ_ERR_TIMEOUT: "timed out"
            default: String(cString: mosquitto_strerror(rc))
            }
        switch mosq_err_t(rawValue: rc) {
        case MOSQ_ERR_ERRNO, MOSQ_ERR_EAI, MOSQ_ERR_LOOKUP, MOSQ_ERR_TIMEOUT:
            code = .connectionFailed
        case MOSQ_ERR_CONN_LOST, MOSQ_ERR_KEEPALIVE: code = .connectionLost
        case MOSQ_ERR_NO_CONN: code = .notConnected
        case MOSQ_ERR_CONN_REFUSED: code = .connectionRefused
        case MOSQ_ERR_AUTH, MOSQ_ERR_ACL_DENIED: code = .notAuthorized
        case MOSQ_ERR_TLS, MOSQ_ERR_TLS_HANDSHAKE, MOSQ_ERR_OCSP: code = .tls
        case MOSQ_ERR_PROTOCOL, MOSQ_ERR_MALFORMED_PACKET, MOSQ_ERR_DUPLICATE_PROPERTY, MOSQ_ERR_TOPIC_ALIAS_INVALID:
            code = .protocolError
        case MOSQ_ERR_INVAL, MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_MALFORMED_UTF8: code = .invalidArgument
        case MOSQ_ERR_OVERSIZE_PACKET: code = .packetTooLarge
        case MOSQ_ERR_NOT_SUPPORTED, MOSQ_ERR_QOS_NOT_SUPPORTED, MOSQ_ERR_RETAIN_NOT_SUPPORTED:
            code = .notSupported
        default: code = .system
        }
        if let context { message = "\(context): \(message)" }
        if let detail, !detail.isEmpty { message += " (\(detail))" }
        return MQTTError(code, message)
    }

    /// The error for a CONNACK that refused us, in the broker's words.
    static func connectRefusal(reasonCode: Int32, version: MQTTConfiguration.ProtocolVersion) -> MQTTError {
        // MQTT v5's reason codes (0x80 and up) and 3.1.1's return codes (1 to 5) do not overlap.
        let code: MQTTError.Code =
            switch reasonCode {
            case 0x86, 4: .badCredentials
            case 0x87, 5: .notAuthorized
            case 0x84, 1: .notSupported
            default: .connectionRefused
            }
        // A 3.1.1 broker answers a v5 CONNECT with its own "unacceptable protocol version" (1).
        guard version == .v5 && reasonCode != 1 else {
            var message = String(cString: mosquitto_connack_string(reasonCode))
            if reasonCode == 1 && version == .v5 { message += " \(MQTTError.protocolHint)" }
            return MQTTError(code, message, reasonCode: Int(reasonCode))
        }
        var message = reasonString(reasonCode)
        if reasonCode == 0x84 { message += "; \(MQTTError.protocolHint)" }
        // A CONNACK refuses these for the will, the only QoS and retain flag CONNECT carries.
        if reasonCode == 0x9A { message += ": the broker keeps no retained messages, and the will is retained" }
        if reasonCode == 0x9B { message += ": the broker does not take the will's QoS" }
        return MQTTError(code, message, reasonCode: Int(reasonCode))
    }

    /// The broker's wording for an MQTT reason code (SUBACK, PUBACK, DISCONNECT).
    static func reasonString(_ reasonCode: Int32) -> String {
        String(cString: mosquitto_reason_string(reasonCode))
    }

    // MARK: Properties

    private func propertyListForSending(_ properties: MQTTProperties) throws(MQTTError) -> OpaquePointer? {
        guard !properties.isEmpty else { return nil }
        guard protocolVersion == .v5 else {
            throw MQTTError(.notSupported, "MQTT v5 properties need a connection with protocol version 5")
        }
        return try Self.propertyList(properties)
    }

    /// Builds a libmosquitto property list; the caller frees it (or hands it over).
    private static func propertyList(_ properties: MQTTProperties) throws(MQTTError) -> OpaquePointer? {
        var list: OpaquePointer? = nil
        var rc = success
        func add(_ result: Int32) { if rc == success { rc = result } }
        if let topic = properties.responseTopic {
            add(mosquitto_property_add_string(&list, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), topic))
        }
        if let data = properties.correlationData {
            if data.count > Int(UInt16.max) { add(Int32(MOSQ_ERR_INVAL.rawValue)) }
            add(
                data.withUnsafeBytes {
                    mosquitto_property_add_binary(
                        &list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), $0.baseAddress, UInt16(min($0.count, 65535)))
                })
        }
        for property in properties.userProperties {
            add(
                mosquitto_property_add_string_pair(
                    &list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), property.name, property.value))
        }
        if let expiry = properties.messageExpiryInterval {
            add(mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry))
        }
        if let contentType = properties.contentType {
            add(mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), contentType))
        }
        guard rc == success else {
            mosquitto_property_free_all(&list)
            throw error(forResult: rc, detail: nil, context: "MQTT v5 properties")
        }
        return list
    }

    /// What a CONNACK's properties say of the broker's limits.
    private static func limits(from list: OpaquePointer?) -> BrokerLimits {
        var limits = BrokerLimits()
        guard let list else { return limits }
        var byte: UInt8 = 0
        if mosquitto_property_read_byte(list, Int32(MQTT_PROP_MAXIMUM_QOS.rawValue), &byte, false) != nil {
            limits.maximumQoS = MQTTQoS(rawValue: Int(byte))
        }
        if mosquitto_property_read_byte(list, Int32(MQTT_PROP_RETAIN_AVAILABLE.rawValue), &byte, false) != nil {
            limits.retainAvailable = byte != 0
        }
        return limits
    }

    /// Copies the properties homegate understands out of a received list (which libmosquitto frees).
    private static func properties(from list: OpaquePointer?) -> MQTTProperties {
        var result = MQTTProperties()
        guard let list else { return result }
        result.responseTopic = readString(list, MQTT_PROP_RESPONSE_TOPIC)
        result.contentType = readString(list, MQTT_PROP_CONTENT_TYPE)

        var data: UnsafeMutableRawPointer? = nil
        var length: UInt16 = 0
        if mosquitto_property_read_binary(list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &data, &length, false)
            != nil
        {
            result.correlationData = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(data)
        }

        var expiry: UInt32 = 0
        if mosquitto_property_read_int32(list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), &expiry, false)
            != nil
        {
            result.messageExpiryInterval = expiry
        }

        var name: UnsafeMutablePointer<CChar>? = nil
        var value: UnsafeMutablePointer<CChar>? = nil
        let identifier = Int32(MQTT_PROP_USER_PROPERTY.rawValue)
        var cursor = mosquitto_property_read_string_pair(list, identifier, &name, &value, false)
        while cursor != nil {
            if let name, let value {
                result.userProperties.append(.init(String(cString: name), String(cString: value)))
            }
            free(name)
            free(value)
            name = nil
            value = nil
            cursor = mosquitto_property_read_string_pair(cursor, identifier, &name, &value, true)
        }
        return result
    }

    private static func readString(_ list: OpaquePointer, _ identifier: mqtt5_property) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard mosquitto_property_read_string(list, Int32(identifier.rawValue), &value, false) != nil, let value
        else {
            return nil
        }
        defer { free(value) }
        return String(cString: value)
    }
}

/// Calls `body` with a C array of C strings that lives for the duration of the call.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
