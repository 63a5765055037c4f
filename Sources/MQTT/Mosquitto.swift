import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// libmosquitto, loaded (and initialised) when the first TLS client is made: a gateway on plain
/// TCP never maps it, nor OpenSSL. `failure` says why it could not be loaded.
private let libmosquitto: (table: homegate_libmosquitto?, failure: String) = {
    var failure: UnsafePointer<CChar>?
    let table = homegate_load_libmosquitto(&failure)
    return (table?.pointee, failure.map { String(cString: $0) } ?? "")
}()

/// libmosquitto's functions; only called once ``Mosquitto/init(configuration:)`` has loaded them.
private var lib: homegate_libmosquitto { libmosquitto.table! }

/// The MQTT engine for TLS connections, on libmosquitto: every call of the project into
/// libmosquitto is a method here, and every C return code becomes an `MQTTError` in `check(_:)`.
///
/// `@unchecked Sendable`: the instance is put in threaded mode (`mosquitto_threaded_set`), in which
/// libmosquitto guards its own state with mutexes, so `publish`, `subscribe`, `unsubscribe` and
/// `disconnect` may be called from any thread while the network thread runs `loop`. `connect`,
/// `reconnect` and `loop` are called only from the client's network thread, and `destroy` only once
/// that thread has ended.
struct Mosquitto: MQTTEngine, @unchecked Sendable {
    private let handle: OpaquePointer
    let protocolVersion: MQTTConfiguration.ProtocolVersion

    init(configuration: MQTTConfiguration) throws(MQTTError) {
        guard libmosquitto.table != nil else {
            throw MQTTError(
                .tls,
                "TLS needs libmosquitto, which could not be loaded: \(libmosquitto.failure) (install libmosquitto1)")
        }
        guard let handle = lib.mosquitto_new(configuration.clientID, configuration.cleanSession, nil) else {
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
            lib.mosquitto_destroy(handle)
            throw error
        }
    }

    private func configure(_ configuration: MQTTConfiguration) throws(MQTTError) {
        try check(lib.mosquitto_threaded_set(handle, true))
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(lib.mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(version)))
        try check(lib.mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1))
        try check(lib.mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, 65535))
        try check(lib.mosquitto_max_inflight_messages_set(handle, 0))
        if configuration.username != nil || configuration.password != nil {
            try check(lib.mosquitto_username_pw_set(handle, configuration.username, configuration.password))
        }
        if let will = configuration.will {
            try setWill(will)
        }
        if let tls = configuration.tls {
            try configureTLS(tls)
        }
    }

    private func setWill(_ will: MQTTConfiguration.Will) throws(MQTTError) {
        var properties = try Self.propertyList(will.properties)
        let rc = will.payload.withUnsafeBytes { payload in
            lib.mosquitto_will_set_v5(
                handle, will.topic, Int32(payload.count), payload.baseAddress, Int32(will.qos.rawValue),
                will.retain, properties)
        }
        // On success libmosquitto owns the list; on failure it is still ours to free.
        if rc != Self.success { lib.mosquitto_property_free_all(&properties) }
        try check(rc)
    }

    private func configureTLS(_ tls: MQTTConfiguration.TLS) throws(MQTTError) {
        var caDirectory = tls.caDirectory
        if tls.caFile == nil && caDirectory == nil {
            try check(lib.mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1))
            caDirectory = "/etc/ssl/certs"
        }
        try check(
            lib.mosquitto_tls_set(handle, tls.caFile, caDirectory, tls.certificateFile, tls.keyFile, nil),
            context: "TLS files")
        if !tls.verifyServer {
            try check(lib.mosquitto_tls_opts_set(handle, 0, nil, nil))
            try check(lib.mosquitto_tls_insecure_set(handle, true))
        }
    }

    /// Installs the callbacks; `context` is handed back to each of them as libmosquitto's user data.
    ///
    /// With `logging`, libmosquitto's log lines reach ``MQTTClient``: its errors name what went wrong
    /// (OpenSSL's reason for a failed handshake, for instance). libmosquitto formats a line into a new
    /// buffer for every packet sent or received once a log callback is set, whatever its level, so a
    /// client installs it only where the lines can matter: with TLS, or when its logger shows debug.
    func installCallbacks(context: UnsafeMutableRawPointer, logging: Bool) {
        lib.mosquitto_user_data_set(handle, context)
        lib.mosquitto_connect_v5_callback_set(handle) { _, context, reasonCode, flags, _ in
            MQTTClient.from(context).didConnect(reasonCode: reasonCode, sessionPresent: flags & 1 == 1)
        }
        lib.mosquitto_disconnect_v5_callback_set(handle) { _, context, reasonCode, _ in
            MQTTClient.from(context).didDisconnect(reasonCode: reasonCode)
        }
        lib.mosquitto_publish_v5_callback_set(handle) { _, context, mid, reasonCode, _ in
            MQTTClient.from(context).didComplete(mid: mid, with: .published(reasonCode: reasonCode))
        }
        lib.mosquitto_subscribe_v5_callback_set(handle) { _, context, mid, count, granted, _ in
            let codes = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            MQTTClient.from(context).didComplete(mid: mid, with: .subscribed(reasonCodes: codes))
        }
        lib.mosquitto_unsubscribe_v5_callback_set(handle) { _, context, mid, _ in
            MQTTClient.from(context).didComplete(mid: mid, with: .unsubscribed)
        }
        lib.mosquitto_message_v5_callback_set(handle) { _, context, message, properties in
            guard let message = message?.pointee else { return }
            let payload: [UInt8] =
                if let bytes = message.payload, message.payloadlen > 0 {
                    Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
                } else {
                    []
                }
            MQTTClient.from(context).didReceive(
                MQTTMessage(
                    topic: message.topic.map { String(cString: $0) } ?? "",
                    payload: payload,
                    qos: MQTTQoS(rawValue: Int(message.qos)) ?? .atMostOnce,
                    retain: message.retain,
                    properties: Mosquitto.properties(from: properties)))
        }
        guard logging else { return }
        lib.mosquitto_log_callback_set(handle) { _, context, level, text in
            // Debug lines come for every packet: drop them before making a String.
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text else { return }
            MQTTClient.from(context).didLog(String(cString: text), isError: level & MOSQ_LOG_ERR != 0)
        }
    }

    // MARK: Network thread only

    /// Opens the connection and sends CONNECT. With MQTT v5 and a persistent session, CONNECT carries
    /// the session expiry interval (v5 ends a session at disconnect unless told otherwise);
    /// libmosquitto keeps the properties for every reconnect.
    func connect(host: String, port: Int, keepAlive: Duration, sessionExpiry: UInt32?) -> Int32 {
        var properties: OpaquePointer? = nil
        defer { lib.mosquitto_property_free_all(&properties) }
        if protocolVersion == .v5, let sessionExpiry {
            let rc = lib.mosquitto_property_add_int32(
                &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpiry)
            guard rc == Self.success else { return rc }
        }
        return lib.mosquitto_connect_bind_v5(
            handle, host, Int32(port), Int32(max(5, keepAlive.milliseconds / 1000)), nil, properties)
    }

    func reconnect() -> Int32 { lib.mosquitto_reconnect(handle) }

    func loop(timeout: Duration) -> Int32 { lib.mosquitto_loop(handle, Int32(timeout.milliseconds), 1) }

    /// libmosquitto wakes its own loop (through its socket pair) for a packet queued meanwhile.
    func wakeLoop() {}

    /// Frees the instance. Only after the network thread has ended.
    func destroy() { lib.mosquitto_destroy(handle) }

    // MARK: Any thread

    /// Queues a PUBLISH and returns its message id (libmosquitto reports every completion, awaited
    /// or not: the client drops those nobody waits for).
    func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTProperties, awaited: Bool
    ) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        var list = try propertyListForSending(properties)
        defer { lib.mosquitto_property_free_all(&list) }
        let rc = payload.withUnsafeBytes { bytes in
            lib.mosquitto_publish_v5(
                handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos.rawValue), retain, list)
        }
        // A QoS 1/2 message stays queued in libmosquitto while the connection is down and is sent
        // after the reconnect, so that is not a failure: the caller waits for its acknowledgement.
        if rc == Int32(MOSQ_ERR_NO_CONN.rawValue) && qos != .atMostOnce && mid != 0 { return mid }
        try check(rc, context: "publish to '\(topic)'")
        return mid
    }

    /// Queues a SUBSCRIBE for all `filters` and returns its message id.
    func subscribe(_ filters: [String], qos: MQTTQoS, options: MQTTSubscribeOptions) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let effectiveOptions = protocolVersion == .v5 ? options.rawValue : 0
        let rc = withCStringArray(filters) { pointers in
            lib.mosquitto_subscribe_multiple(
                handle, &mid, Int32(filters.count), pointers, Int32(qos.rawValue), effectiveOptions, nil)
        }
        try check(rc, context: "subscribe to \(filters)")
        return mid
    }

    /// Queues an UNSUBSCRIBE for all `filters` and returns its message id.
    func unsubscribe(_ filters: [String]) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let rc = withCStringArray(filters) { pointers in
            lib.mosquitto_unsubscribe_multiple(handle, &mid, Int32(filters.count), pointers, nil)
        }
        try check(rc, context: "unsubscribe from \(filters)")
        return mid
    }

    /// Queues a DISCONNECT (normal disconnection: the broker does not publish the will).
    @discardableResult
    func disconnect() -> Int32 { lib.mosquitto_disconnect(handle) }

    // MARK: Errors

    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)
    static let connectionLost = Int32(MOSQ_ERR_CONN_LOST.rawValue)

    private func check(_ rc: Int32, context: String? = nil) throws(MQTTError) {
        guard rc != Self.success else { return }
        throw Self.error(forResult: rc, detail: nil, context: context)
    }

    /// Turns a libmosquitto return code into an `MQTTError` with the library's own message.
    /// `detail` (the last error libmosquitto logged, such as OpenSSL's reason) is appended.
    static func error(forResult rc: Int32, detail: String?, context: String? = nil) -> MQTTError {
        let code: MQTTError.Code
        var message = MQTTWording.result(rc)
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
        case MOSQ_ERR_INVAL, MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_MALFORMED_UTF8, MOSQ_ERR_OVERSIZE_PACKET:
            code = .invalidArgument
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
        if version == .v5 {
            let message = MQTTWording.reason(reasonCode)
            let code: MQTTError.Code =
                switch reasonCode {
                case 0x86: .badCredentials
                case 0x87: .notAuthorized
                default: .connectionRefused
                }
            return MQTTError(code, message, reasonCode: Int(reasonCode))
        }
        let message = MQTTWording.connack(reasonCode)
        let code: MQTTError.Code =
            switch reasonCode {
            case 4: .badCredentials
            case 5: .notAuthorized
            default: .connectionRefused
            }
        return MQTTError(code, message, reasonCode: Int(reasonCode))
    }

    /// The broker's wording for an MQTT reason code (SUBACK, PUBACK, DISCONNECT).
    static func reasonString(_ reasonCode: Int32) -> String {
        MQTTWording.reason(reasonCode)
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
            add(lib.mosquitto_property_add_string(&list, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), topic))
        }
        if let data = properties.correlationData {
            if data.count > Int(UInt16.max) { add(Int32(MOSQ_ERR_INVAL.rawValue)) }
            add(
                data.withUnsafeBytes {
                    lib.mosquitto_property_add_binary(
                        &list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), $0.baseAddress, UInt16(min($0.count, 65535)))
                })
        }
        for property in properties.userProperties {
            add(
                lib.mosquitto_property_add_string_pair(
                    &list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), property.name, property.value))
        }
        if let expiry = properties.messageExpiryInterval {
            add(lib.mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry))
        }
        if let contentType = properties.contentType {
            add(lib.mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), contentType))
        }
        guard rc == success else {
            lib.mosquitto_property_free_all(&list)
            throw error(forResult: rc, detail: nil, context: "MQTT v5 properties")
        }
        return list
    }

    /// Copies the properties homegate understands out of a received list (which libmosquitto frees).
    private static func properties(from list: OpaquePointer?) -> MQTTProperties {
        var result = MQTTProperties()
        guard let list else { return result }
        result.responseTopic = readString(list, MQTT_PROP_RESPONSE_TOPIC)
        result.contentType = readString(list, MQTT_PROP_CONTENT_TYPE)

        var data: UnsafeMutableRawPointer? = nil
        var length: UInt16 = 0
        if lib.mosquitto_property_read_binary(list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &data, &length, false)
            != nil
        {
            result.correlationData = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(data)
        }

        var expiry: UInt32 = 0
        if lib.mosquitto_property_read_int32(list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), &expiry, false)
            != nil
        {
            result.messageExpiryInterval = expiry
        }

        var name: UnsafeMutablePointer<CChar>? = nil
        var value: UnsafeMutablePointer<CChar>? = nil
        let identifier = Int32(MQTT_PROP_USER_PROPERTY.rawValue)
        var cursor = lib.mosquitto_property_read_string_pair(list, identifier, &name, &value, false)
        while cursor != nil {
            if let name, let value {
                result.userProperties.append(.init(String(cString: name), String(cString: value)))
            }
            free(name)
            free(value)
            name = nil
            value = nil
            cursor = lib.mosquitto_property_read_string_pair(cursor, identifier, &name, &value, true)
        }
        return result
    }

    private static func readString(_ list: OpaquePointer, _ identifier: mqtt5_property) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard lib.mosquitto_property_read_string(list, Int32(identifier.rawValue), &value, false) != nil, let value
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
