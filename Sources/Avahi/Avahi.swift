import CAvahi
import Execution
import Logging

/// Avahi's client library, loaded on first use: a gateway that neither browses for HomeKit
/// accessories nor advertises a bridge never maps it (nor D-Bus and what it links, about 1 MB).
package enum AvahiLibrary {
    private static let loaded: (table: homegate_avahi?, failure: String) = {
        var failure: UnsafePointer<CChar>?
        let table = homegate_load_avahi(&failure)
        return (table?.pointee, failure.map { String(cString: $0) } ?? "")
    }()

    /// Avahi's functions; nil when the library could not be loaded (``missing`` says why).
    package static var table: homegate_avahi? { loaded.table }

    /// Why the library is not there (dlerror's words), for the `start` of `keepConnecting` to return.
    package static var missing: String? {
        table == nil ? "libavahi-client could not be loaded: \(loaded.failure); install libavahi-client3" : nil
    }

    /// Stops Avahi's thread, then frees the client `detach` hands over (the owner clears its
    /// handles under its own lock; freeing the client frees what it made, browsers and entry groups,
    /// whose records go with a goodbye packet) and the poll.
    package static func shutDown(poll: OpaquePointer, detach: () -> OpaquePointer?) {
        guard let avahi = table else { return }
        _ = avahi.avahi_threaded_poll_stop(poll)
        if let client = detach() { avahi.avahi_client_free(client) }
        avahi.avahi_threaded_poll_free(poll)
    }

    /// Avahi's words for an error code.
    package static func error(_ code: Int32) -> String {
        table?.avahi_strerror(code).map { String(cString: $0) } ?? "Avahi error \(code)"
    }

    /// Connecting to avahi-daemon until it serves, for HAP's browser and the bridges' advertisers:
    /// calls `start` until it connects (returns nil), `isStopped` says so or the task is cancelled.
    /// While `start` returns why it could not connect (no running daemon, or D-Bus), it says once in
    /// the log what is missed and why (`missed` completes "mDNS is unavailable (why): …", as in
    /// `HomeKit accessories are not discovered`) and tries again every `retryInterval` on `clock`;
    /// it never blocks the gateway.
    package static func keepConnecting(
        missed: String, logger: Logger, retryInterval: Duration, clock: AnyClock, isStopped: () -> Bool,
        start: () -> String?
    ) async {
        var reported = false
        // Cancelled, it stops trying (a cancelled sleep returns at once).
        while !isStopped() && !Task.isCancelled {
            guard let reason = start() else { return }
            if !reported {
                logger.warning("mDNS is unavailable (\(reason)): \(missed); trying again every \(retryInterval)")
                reported = true
            }
            try? await clock.sleep(until: clock.now.advanced(by: retryInterval))
        }
    }
}
