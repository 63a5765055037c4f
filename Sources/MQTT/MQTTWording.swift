import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// libmosquitto's wording, word for word: of its result codes (`mosquitto_strerror`), of MQTT 5
/// reason codes (`mosquitto_reason_string`) and of MQTT 3.1.1 CONNACK codes
/// (`mosquitto_connack_string`). Errors read as they did when libmosquitto served every connection,
/// without loading it for a plain-TCP one. `MQTTWordingTests` holds every code to libmosquitto's own.
enum MQTTWording {
    /// What `mosquitto_strerror` says of `rc`; for `MOSQ_ERR_ERRNO`, the system's `strerror(errno)`.
    static func result(_ rc: Int32) -> String {
        if rc == Int32(MOSQ_ERR_ERRNO.rawValue) { return String(cString: strerror(errno)) }
        return switch rc {
        case -4: "Continue with authentication."
        case -3: "No subscribers."
        case -2: "Subscription already exists."
        case -1: "Connection pending."
        case 0: "No error."
        case 1: "Out of memory."
        case 2: "A network protocol error occurred when communicating with the broker."
        case 3: "Invalid function arguments provided."
        case 4: "The client is not currently connected."
        case 5: "The connection was refused."
        case 6: "Message not found (internal error)."
        case 7: "The connection was lost."
        case 8: "A TLS error occurred."
        case 9: "Payload too large."
        case 10: "This feature is not supported."
        case 11: "Authorisation failed."
        case 12: "Access denied by ACL."
        case 15: "Lookup error."
        case 16: "Proxy error."
        case 18: "Malformed UTF-8"
        case 22: "Duplicate property in property list"
        case 23: "TLS handshake failed."
        case 24: "Requested QoS not supported on server."
        case 25: "Packet larger than supported by the server."
        case 26: "OCSP error."
        default: "Unknown error."
        }
    }

    /// What `mosquitto_reason_string` says of an MQTT 5 reason code.
    static func reason(_ code: Int32) -> String {
        switch code {
        case 0: "Success"
        case 1: "Granted QoS 1"
        case 2: "Granted QoS 2"
        case 4: "Disconnect with Will Message"
        case 16: "No matching subscribers"
        case 17: "No subscription existed"
        case 24: "Continue authentication"
        case 25: "Re-authenticate"
        case 128: "Unspecified error"
        case 129: "Malformed Packet"
        case 130: "Protocol Error"
        case 131: "Implementation specific error"
        case 132: "Unsupported Protocol Version"
        case 133: "Client Identifier not valid"
        case 134: "Bad User Name or Password"
        case 135: "Not authorized"
        case 136: "Server unavailable"
        case 137: "Server busy"
        case 138: "Banned"
        case 139: "Server shutting down"
        case 140: "Bad authentication method"
        case 141: "Keep Alive timeout"
        case 142: "Session taken over"
        case 143: "Topic Filter invalid"
        case 144: "Topic Name invalid"
        case 145: "Packet Identifier in use"
        case 146: "Packet Identifier not found"
        case 147: "Receive Maximum exceeded"
        case 148: "Topic Alias invalid"
        case 149: "Packet too large"
        case 150: "Message rate too high"
        case 151: "Quota exceeded"
        case 152: "Administrative action"
        case 153: "Payload format invalid"
        case 154: "Retain not supported"
        case 155: "QoS not supported"
        case 156: "Use another server"
        case 157: "Server moved"
        case 158: "Shared Subscriptions not supported"
        case 159: "Connection rate exceeded"
        case 160: "Maximum connect time"
        case 161: "Subscription identifiers not supported"
        case 162: "Wildcard Subscriptions not supported"
        default: "Unknown reason"
        }
    }

    /// What `mosquitto_connack_string` says of an MQTT 3.1.1 CONNACK return code.
    static func connack(_ code: Int32) -> String {
        switch code {
        case 0: "Connection Accepted."
        case 1: "Connection Refused: unacceptable protocol version."
        case 2: "Connection Refused: identifier rejected."
        case 3: "Connection Refused: broker unavailable."
        case 4: "Connection Refused: bad user name or password."
        case 5: "Connection Refused: not authorised."
        default: "Connection Refused: unknown reason."
        }
    }
}
