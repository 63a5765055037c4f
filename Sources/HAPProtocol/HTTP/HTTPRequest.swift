/// An HTTP/1.1 request to a HAP accessory.
package struct HTTPRequest: Sendable {
    /// The content type of pairing bodies (pair setup, pair verify, /pairings).
    static let pairingContentType = "application/pairing+tlv8"
    /// The content type of JSON bodies (/characteristics, /prepare).
    static let jsonContentType = "application/hap+json"

    /// The method: GET, PUT or POST.
    package var method: String
    /// The path with its query, e.g. "/characteristics?id=1.10".
    package var path: String
    /// Headers besides Host and Content-Length, which `encoded` writes.
    package var headers: [(name: String, value: String)] = []
    /// The body (may be empty).
    package var body: [UInt8] = []

    /// A GET (/accessories, /characteristics?id=...).
    package static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: "GET", path: path)
    }

    /// A POST of a TLV8 pairing body (/pair-setup, /pair-verify, /pairings).
    package static func pairing(_ path: String, _ body: [UInt8]) -> HTTPRequest {
        HTTPRequest(method: "POST", path: path, headers: [("Content-Type", pairingContentType)], body: body)
    }

    /// A PUT of a JSON body (/characteristics, /prepare).
    package static func putJSON(_ path: String, _ body: [UInt8]) -> HTTPRequest {
        HTTPRequest(method: "PUT", path: path, headers: [("Content-Type", jsonContentType)], body: body)
    }

    /// The request's bytes, with Host and Content-Length headers.
    package func encoded(host: String) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        if !body.isEmpty || method == "POST" || method == "PUT" {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
