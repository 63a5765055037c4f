import Foundation
import HTTPTypes
import Hummingbird

/// What the page believes of forwarding headers. Without `web.behindProxy` none of them: the peer is
/// the visitor and the `Host` header the page's host. With it, and only for requests from this host
/// (the proxy beside the gateway), the last `X-Forwarded-For` address is the visitor (what the login
/// throttle counts), `X-Forwarded-Host` the host the browser used, `X-Forwarded-Proto` its scheme.
struct Proxy: Sendable {
    let isTrusted: Bool

    private func trusts(_ context: WebRequestContext) -> Bool { isTrusted && context.isLoopback }

    private static func last(_ request: Request, _ name: String) -> String? {
        guard let field = HTTPField.Name(name), let value = request.headers[values: field].last else { return nil }
        let item = value.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        return item?.isEmpty == false ? item : nil
    }

    /// The address the login throttle counts for this request.
    func visitor(_ request: Request, context: WebRequestContext) -> String {
        (trusts(context) ? Self.last(request, "X-Forwarded-For") : nil) ?? context.remoteAddress
    }

    /// Whether the browser reached the page over HTTPS (so cookies may say `Secure`).
    func isHTTPS(_ request: Request, context: WebRequestContext) -> Bool {
        trusts(context) && Self.last(request, "X-Forwarded-Proto")?.lowercased() == "https"
    }

    /// A POST must come from this page: a browser's `Origin` (when it sends one) must name the host
    /// the page is served on, and `Sec-Fetch-Site` must not say another site. Beside the CSRF token.
    func sameOrigin(_ request: Request, context: WebRequestContext) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site == "cross-site" || site == "same-site" {
            return false
        }
        guard let origin = request.headers[.origin] else { return true }
        guard let host = host(request, context: context) else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// The host (and port) the browser asked for: `X-Forwarded-Host` from a trusted proxy, else `Host`.
    func host(_ request: Request, context: WebRequestContext) -> String? {
        (trusts(context) ? Self.last(request, "X-Forwarded-Host") : nil) ?? request.head.authority
    }
}
