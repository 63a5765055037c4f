extension MQTTConfiguration {
    /// Reads a broker address `mqtt://host[:port]` (plain, default port 1883) or `mqtts://host[:port]`
    /// (TLS with verification, default port 8883) into a configuration with defaults for the rest.
    public init(brokerURL: String, clientID: String) throws(MQTTError) {
        let schemes: [(prefix: String, port: Int, tls: Bool)] = [("mqtt://", 1883, false), ("mqtts://", 8883, true)]
        guard let scheme = schemes.first(where: { brokerURL.lowercased().hasPrefix($0.prefix) }) else {
            throw MQTTError(.invalidArgument, "broker '\(brokerURL)' must start with mqtt:// or mqtts://")
        }
        var rest = Substring(brokerURL.dropFirst(scheme.prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("@") else {
            throw MQTTError(
                .invalidArgument, "broker '\(brokerURL)': credentials go in the config or the environment, not the URL")
        }
        var host = rest
        var port = scheme.port
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw MQTTError(.invalidArgument, "broker '\(brokerURL)': unclosed '[' in an IPv6 address")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()) else {
                    throw MQTTError(.invalidArgument, "broker '\(brokerURL)': expected ':port' after ']'")
                }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]) else {
                throw MQTTError(.invalidArgument, "broker '\(brokerURL)': the port is not a number")
            }
            port = value
        }
        guard !host.isEmpty, !host.contains("/") else {
            throw MQTTError(.invalidArgument, "broker '\(brokerURL)': expected mqtt[s]://host[:port]")
        }
        let isIPv6 = rest.hasPrefix("[")
        let allowed: (Character) -> Bool =
            isIPv6
            ? { $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }
            : { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." || $0 == "_" }
        guard host.allSatisfy(allowed) else {
            throw MQTTError(
                .invalidArgument,
                "broker '\(brokerURL)': '\(host)' is not a host name or address (several brokers go in a list, mqtt.brokers)"
            )
        }
        guard (1...65535).contains(port) else {
            throw MQTTError(.invalidArgument, "broker '\(brokerURL)': port \(port) is outside 1...65535")
        }
        self.init(host: String(host), port: port, clientID: clientID, tls: scheme.tls ? TLS() : nil)
    }

    /// Reads several broker addresses, in order of preference, into one configuration: all plain
    /// MQTT or all TLS, since the client's TLS settings serve every broker.
    public init(brokerURLs: [String], clientID: String) throws(MQTTError) {
        guard let first = brokerURLs.first else {
            throw MQTTError(.invalidArgument, "no broker: give at least one mqtt[s]://host[:port]")
        }
        self = try MQTTConfiguration(brokerURL: first, clientID: clientID)
        for url in brokerURLs.dropFirst() {
            let other = try MQTTConfiguration(brokerURL: url, clientID: clientID)
            guard (other.tls == nil) == (tls == nil) else {
                throw MQTTError(
                    .invalidArgument,
                    "broker '\(url)': the brokers mix mqtt:// and mqtts://; one client's TLS settings serve them all")
            }
            brokers.append(other.brokers[0])
        }
    }
}
