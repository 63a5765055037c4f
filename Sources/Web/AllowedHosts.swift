import Config
import Foundation
import HTTPTypes
import Hummingbird

/// The host names the page answers to. A site of someone else's can make its own name resolve to the
/// hub (DNS rebinding); the browser then sends that name as `Host` and treats the page as that site's,
/// so its script could drive the login form. The page therefore serves only names it is configured
/// for (`web.hosts`), `localhost`, the name it listens on, the machine's name (and `<name>.local`),
/// and IP addresses (a rebinding always goes through a name).
struct AllowedHosts: Sendable {
    let names: Set<String>

    init(configured: [String], listenHost: String, machineName: String? = AllowedHosts.machineName) {
        var names: Set<String> = ["localhost"]
        for name in configured + [listenHost] { names.insert(Self.normalized(name)) }
        if let machineName, !machineName.isEmpty {
            names.insert(Self.normalized(machineName))
            if !machineName.contains(".") { names.insert(Self.normalized(machineName) + ".local") }
        }
        self.names = names
    }

    /// Whether `authority` (a `Host` header: `name`, `name:port`, `[v6]:port`) names this page.
    func allows(_ authority: String) -> Bool {
        let host = Self.hostPart(of: authority)
        return HostName.isAddress(host) || names.contains(Self.normalized(host))
    }

    /// The host of an authority, without its port and an IPv6 literal's brackets.
    static func hostPart(of authority: String) -> String {
        if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<end])
        }
        if authority.count(where: { $0 == ":" }) == 1, let colon = authority.firstIndex(of: ":") {
            return String(authority[..<colon])
        }
        return authority
    }

    /// Lowercased, without the trailing dot of a fully qualified name.
    private static func normalized(_ name: String) -> String {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered
    }

    /// This machine's host name (what `hostname` prints), nil when the system has none to say.
    static var machineName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Answers `421 Misdirected Request` to a request for a host name the page is not served as
/// (``AllowedHosts``). The host is the `X-Forwarded-Host` a trusted proxy sent, else `Host`; a request
/// without either (not a browser) passes.
struct HostCheck: RouterMiddleware {
    typealias Context = WebRequestContext
    let allowed: AllowedHosts
    let proxy: Proxy

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let host = proxy.host(request, context: context), !allowed.allows(host) else {
            return try await next(request, context)
        }
        let shown =
            host.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }
            ? "'\(host)'" : "this name"
        return .problem(
            "Wrong address",
            "This page is not served as \(shown). Open it by the hub's name or address, or add the name to web.hosts in the gateway's configuration.",
            status: .misdirectedRequest)
    }
}

/// Headers on every answer: no framing, no sniffing, scripts and styles only from the page itself.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = WebRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Not found, a method no route takes (HEAD, OPTIONS): answered here, so they carry the
            // headers too.
            response = try error.response(from: request, context: context)
        }
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        // (not no-referrer: with it browsers send `Origin: null` on their own forms)
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }
}
