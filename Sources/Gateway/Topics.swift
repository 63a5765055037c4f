/// The topic names of CONTRACT.md under one base topic. Every level the gateway adds itself starts
/// with `$`, which no object name can start with, so the gateway's topics never collide with names.
public struct Topics: Sendable, Hashable {
    /// The base topic (config `mqtt.baseTopic`), without a trailing slash.
    public let base: String

    public init(base: String = "homegate") {
        self.base = base
    }

    /// `B/$status`: `online` while the gateway is connected, `offline` as its will and on shutdown.
    public var status: String { "\(base)/$status" }
}

/// Checks a base topic from config or the command line: it becomes the first levels of every topic,
/// so it must be a valid MQTT topic with no wildcards and no empty level.
public enum BaseTopic {
    public static func validate(_ base: String) throws(GatewayConfigurationError) {
        guard !base.isEmpty else {
            throw GatewayConfigurationError("the base topic is empty; use e.g. 'homegate'")
        }
        guard !base.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) else {
            throw GatewayConfigurationError("the base topic '\(base)' contains an MQTT wildcard (+ or #) or NUL")
        }
        guard !base.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            throw GatewayConfigurationError(
                "the base topic '\(base)' has an empty level (leading, trailing or double '/')")
        }
        guard !base.hasPrefix("$") else {
            throw GatewayConfigurationError("the base topic '\(base)' starts with '$', which brokers reserve")
        }
    }
}

/// A setting the gateway cannot work with, said so that the user can fix it.
public struct GatewayConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
