import Foundation

/// Host names as `web.hosts` lists them and the page compares them.
package enum HostName {
    /// Whether `text` is an IPv4 or IPv6 address (without brackets).
    package static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Whether `text` is an IP address or a DNS name: labels of ASCII letters, digits and hyphens
    /// (none at either end), at most 63 bytes each and 253 in all.
    static func isValid(_ text: String) -> Bool {
        if isAddress(text) { return true }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && text.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                    && label.utf8.allSatisfy { byte in
                        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                            || byte == 0x2D
                    }
            }
    }
}
