import Avahi
import CAvahi
import Execution
import Logging
import Synchronization

/// Avahi's functions; only called once ``HAPBrowser`` has connected.
private var avahi: homegate_avahi { AvahiLibrary.table! }

/// A HAP accessory seen over mDNS (`_hap._tcp`), with its TXT record read.
package struct DiscoveredHAPAccessory: Sendable, Hashable {
    /// The mDNS instance name ("Living Room Bridge").
    package var name: String
    /// The accessory's pairing identifier (TXT `id`, `XX:XX:XX:XX:XX:XX`).
    package var id: String
    /// Its category (`ci`: 2 bridge, 5 lightbulb, 8 switch, 9 thermostat, 10 sensor, …).
    package var category: Int
    /// Whether it can be paired now (`sf` bit 0: not paired with any controller).
    package var isPairable: Bool
    /// The configuration number (`c#`): it grows when the accessory database changes.
    package var configuration: Int
    /// The model (`md`).
    package var model: String
    package var host: String
    package var port: Int

    /// Reads a TXT record's `key=value` pairs; nil (with the reason) when `id`, `c#` or `sf` is
    /// missing or malformed. Other keys are optional.
    package static func read(
        name: String, host: String, port: Int, txt: [String: String]
    ) -> Result<DiscoveredHAPAccessory, TXTProblem> {
        guard let id = txt["id"], id.split(separator: ":").count == 6 else {
            return .failure(TXTProblem("no pairing identifier (id) in the TXT record"))
        }
        guard let configuration = txt["c#"].flatMap({ Int($0) }), configuration >= 1 else {
            return .failure(TXTProblem("no configuration number (c#) in the TXT record"))
        }
        guard let flags = txt["sf"].flatMap({ Int($0) }) else {
            return .failure(TXTProblem("no status flags (sf) in the TXT record"))
        }
        return .success(
            DiscoveredHAPAccessory(
                name: name, id: id.uppercased(), category: txt["ci"].flatMap { Int($0) } ?? 1,
                isPairable: flags & 1 == 1, configuration: configuration, model: txt["md"] ?? "", host: host,
                port: port))
    }
}

/// Why a TXT record was not taken.
package struct TXTProblem: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// What the browser saw.
package enum HAPBrowserEvent: Sendable, Hashable {
    /// Found, or found again with another TXT record or address.
    case found(DiscoveredHAPAccessory)
    /// The instance named so went away.
    case removed(name: String)
}

/// Browses `_hap._tcp` over mDNS through the Avahi daemon (libavahi-client, on its own thread) and
/// resolves each instance to an IPv4 address, port and TXT record. Without a running avahi-daemon
/// (or D-Bus) it says so once in the log and tries again every 30 s; it never blocks the gateway.
package final class HAPBrowser: Sendable {
    package let events: AsyncStream<HAPBrowserEvent>
    private let sink: AsyncStream<HAPBrowserEvent>.Continuation
    private let logger: Logger
    private let state = Mutex<State>(State())
    private let retryInterval: Duration
    private let clock: AnyClock

    /// An Avahi object: used only under the lock or on Avahi's own thread.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// The poll and the client; the browser is the client's, freed with it.
    private struct State {
        var poll: Handle?
        var client: Handle?
        var stopped = false
    }

    package init(
        logger: Logger, retryInterval: Duration = .seconds(30), clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.logger = logger
        self.retryInterval = retryInterval
        self.clock = AnyClock(clock)
        (events, sink) = AsyncStream.makeStream(of: HAPBrowserEvent.self, bufferingPolicy: .bufferingNewest(1_024))
    }

    /// Browses until ``stop()``; retries while the daemon cannot be reached.
    package func run() async {
        await AvahiLibrary.keepConnecting(
            missed: "HomeKit accessories are not discovered", logger: logger, retryInterval: retryInterval,
            clock: clock, isStopped: { state.withLock { $0.stopped } }, start: start)
    }

    /// Stops browsing and finishes ``events``.
    package func stop() {
        let poll = state.withLock { state -> Handle? in
            state.stopped = true
            return state.poll
        }
        if let poll {
            AvahiLibrary.shutDown(poll: poll.pointer) {
                state.withLock { state in
                    defer { (state.client, state.poll) = (nil, nil) }
                    return state.client?.pointer
                }
            }
        }
        sink.finish()
    }

    /// Connects to the daemon and starts browsing; why not when the daemon cannot be reached.
    private func start() -> String? {
        if let missing = AvahiLibrary.missing { return missing }
        guard let poll = avahi.avahi_threaded_poll_new() else { return "Avahi cannot make its poll" }
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard
            let client = avahi.avahi_client_new(
                avahi.avahi_threaded_poll_get(poll), AvahiClientFlags(0), clientCallback, context, &error)
        else {
            avahi.avahi_threaded_poll_free(poll)
            return "\(AvahiLibrary.error(error)); is avahi-daemon running?"
        }
        guard
            avahi.avahi_service_browser_new(
                client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_INET), "_hap._tcp", nil,
                AvahiLookupFlags(0), browseCallback,
                context) != nil
        else {
            logger.warning(
                "mDNS: cannot browse _hap._tcp: \(AvahiLibrary.error(avahi.avahi_client_errno(client)))")
            avahi.avahi_client_free(client)
            avahi.avahi_threaded_poll_free(poll)
            return "cannot browse _hap._tcp"
        }
        let handles = (Handle(pointer: poll), Handle(pointer: client))
        state.withLock { ($0.poll, $0.client) = handles }
        _ = avahi.avahi_threaded_poll_start(poll)
        logger.info("browsing mDNS for HomeKit accessories (_hap._tcp)")
        return nil
    }

    // MARK: Callbacks (Avahi's thread)

    fileprivate func browsed(
        _ browser: OpaquePointer?, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let client = avahi.avahi_service_browser_get_client(browser) else { return }
            let context = Unmanaged.passUnretained(self).toOpaque()
            // The resolver frees itself in the callback; it keeps resolving (updates come to it too).
            _ = avahi.avahi_service_resolver_new(
                client, interface, proto, name, type, domain, AvahiProtocol(AVAHI_PROTO_INET), AvahiLookupFlags(0),
                resolveCallback,
                context)
        case AVAHI_BROWSER_REMOVE:
            if let name { sink.yield(.removed(name: String(cString: name))) }
        case AVAHI_BROWSER_FAILURE:
            logger.warning("mDNS browsing failed; it starts again with the daemon")
        default:
            break
        }
    }

    fileprivate func resolved(
        _ event: AvahiResolverEvent, _ name: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?,
        _ port: UInt16, _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard event == AVAHI_RESOLVER_FOUND, let name, let address else { return }
        var text = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        _ = avahi.avahi_address_snprint(&text, text.count, address)
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var record: [String: String] = [:]
        var item = txt
        while let current = item {
            var key: UnsafeMutablePointer<CChar>?
            var value: UnsafeMutablePointer<CChar>?
            if avahi.avahi_string_list_get_pair(current, &key, &value, nil) == 0, let key {
                record[String(cString: key)] = value.map { String(cString: $0) } ?? ""
                avahi.avahi_free(key)
                if let value { avahi.avahi_free(value) }
            }
            item = avahi.avahi_string_list_get_next(current)
        }
        let instance = String(cString: name)
        switch DiscoveredHAPAccessory.read(name: instance, host: host, port: Int(port), txt: record) {
        case .success(let accessory): sink.yield(.found(accessory))
        case .failure(let problem): logger.info("mDNS: skipped '\(instance)': \(problem)")
        }
    }

    fileprivate func clientChanged(_ clientState: AvahiClientState) {
        if clientState == AVAHI_CLIENT_FAILURE {
            logger.warning("mDNS: lost the connection to avahi-daemon")
        }
    }
}

private func clientCallback(_ client: OpaquePointer?, _ state: AvahiClientState, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<HAPBrowser>.fromOpaque(context).takeUnretainedValue().clientChanged(state)
}

private func browseCallback(
    _ browser: OpaquePointer?, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
    _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
    _ flags: AvahiLookupResultFlags, _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    Unmanaged<HAPBrowser>.fromOpaque(context).takeUnretainedValue().browsed(
        browser, interface, proto, event, name, type, domain)
}

private func resolveCallback(
    _ resolver: OpaquePointer?, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent,
    _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
    _ host: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
    _ txt: UnsafeMutablePointer<AvahiStringList>?,
    _ flags: AvahiLookupResultFlags, _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    Unmanaged<HAPBrowser>.fromOpaque(context).takeUnretainedValue().resolved(event, name, address, port, txt)
}
