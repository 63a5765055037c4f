import Avahi
import CAvahi
import Execution
import Foundation
import Logging
import Synchronization

/// Advertises one bridge's `_hap._tcp` record through avahi-daemon (libavahi-client, on its own
/// thread), on the chosen interfaces, and keeps it in step with the bridge: `sf` follows the
/// pairing state, `c#` the accessory database. A name another host holds on the network is given
/// up for Avahi's alternative ("Main House #2"). Without a running avahi-daemon it says so once
/// and tries again every 30 s; the bridge serves meanwhile (a controller that knows the address
/// still reaches it).
final class HAPAdvertiser: Sendable {
    /// An Avahi object: used only under the poll's lock or on Avahi's own thread.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State {
        var poll: Handle?
        var client: Handle?
        var group: Handle?
        var record: HomeBridge.Advertisement?
        /// The name the record is published under (the home's, or Avahi's alternative after a collision).
        var name: String?
        /// What was published last: an update of the TXT record alone when only it changed.
        var published: HomeBridge.Advertisement?
        var stopped = false
    }

    private let state = Mutex(State())
    private let interfaces: [Int32]
    private let logger: Logger
    private let retryInterval: Duration
    private let clock: AnyClock

    /// Advertises on the interfaces named (none: on those with a route, never `lo` or `docker0`;
    /// an interface that does not exist is logged and skipped).
    package init(
        interfaces names: [String]?, logger: Logger, retryInterval: Duration = .seconds(30),
        clock: AnyClock = AnyClock(ContinuousClock())
    ) {
        self.logger = logger
        self.retryInterval = retryInterval
        self.clock = clock
        let chosen = names ?? Self.routedInterfaces()
        interfaces = chosen.compactMap { name in
            let index = if_nametoindex(name)
            if index == 0 { logger.warning("mDNS: there is no interface \(name) to advertise the HomeKit bridge on") }
            return index == 0 ? nil : Int32(index)
        }
        logger.info("mDNS: the HomeKit bridge is advertised on \(chosen.joined(separator: ", "))")
    }

    /// The interfaces with an IPv4 or IPv6 route, but loopback and Docker's bridge.
    static func routedInterfaces() -> [String] {
        var names: Set<String> = []
        if let routes = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8) {
            for line in routes.split(separator: "\n").dropFirst() {
                if let name = line.split(separator: "\t").first { names.insert(String(name)) }
            }
        }
        if let routes = try? String(contentsOfFile: "/proc/net/ipv6_route", encoding: .utf8) {
            for line in routes.split(separator: "\n") {
                if let name = line.split(separator: " ", omittingEmptySubsequences: true).last {
                    names.insert(String(name))
                }
            }
        }
        return names.subtracting(["lo", "docker0"]).sorted()
    }

    /// Publishes `record`, or brings the published one in step with it.
    package func publish(_ record: HomeBridge.Advertisement) {
        let poll = state.withLock { state -> Handle? in
            // A renamed home is advertised under its new name.
            if state.record?.name != record.name { state.name = record.name }
            state.record = record
            return state.poll
        }
        guard let poll, let avahi = avahiTable else { return }
        avahi.avahi_threaded_poll_lock(poll.pointer)
        defer { avahi.avahi_threaded_poll_unlock(poll.pointer) }
        register()
    }

    /// Advertises until ``stop()``; retries while the daemon cannot be reached.
    package func run() async {
        await AvahiLibrary.keepConnecting(
            missed: "the HomeKit bridge is not advertised", logger: logger, retryInterval: retryInterval, clock: clock,
            isStopped: { state.withLock { $0.stopped } }, start: start)
    }

    /// Withdraws the record and disconnects from the daemon.
    package func stop() {
        let poll = state.withLock { state -> Handle? in
            state.stopped = true
            return state.poll
        }
        guard let poll else { return }
        AvahiLibrary.shutDown(poll: poll.pointer) {
            state.withLock { state in
                defer { (state.client, state.group, state.published, state.poll) = (nil, nil, nil, nil) }
                return state.client?.pointer
            }
        }
    }

    /// Connects to the daemon (the record goes out once it serves); why not when it cannot.
    private func start() -> String? {
        if let missing = AvahiLibrary.missing { return missing }
        guard let avahi = avahiTable, let poll = avahi.avahi_threaded_poll_new() else {
            return "Avahi cannot make its poll"
        }
        // The client's callback may come before `avahi_client_new` returns: the poll is known first.
        state.withLock { $0.poll = Handle(pointer: poll) }
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard
            let client = avahi.avahi_client_new(
                avahi.avahi_threaded_poll_get(poll), AvahiClientFlags(0), advertiserClientCallback, context, &error)
        else {
            state.withLock { $0.poll = nil }
            avahi.avahi_threaded_poll_free(poll)
            return "\(AvahiLibrary.error(error)); is avahi-daemon running?"
        }
        state.withLock { $0.client = Handle(pointer: client) }
        _ = avahi.avahi_threaded_poll_start(poll)
        return nil
    }

    // MARK: Avahi's thread (or under its lock)

    /// Adds the record to the entry group, or updates its TXT record when only that changed. Its
    /// callers hold the poll's lock (or are on its thread), so calls do not overlap; Avahi may call
    /// back from inside its functions, so none is called under `state`'s lock.
    fileprivate func register() {
        guard let avahi = avahiTable else { return }
        let (client, record, existing, published, stopped, chosenName) = state.withLock {
            ($0.client, $0.record, $0.group, $0.published, $0.stopped, $0.name)
        }
        guard let client, let record, !stopped else { return }
        var group = existing
        if group == nil {
            let context = Unmanaged.passUnretained(self).toOpaque()
            guard let made = avahi.avahi_entry_group_new(client.pointer, advertiserGroupCallback, context) else {
                logger.warning("mDNS: cannot make an entry group for the HomeKit bridge")
                return
            }
            group = Handle(pointer: made)
            state.withLock { $0.group = group }
        }
        guard let group else { return }
        let txt = Self.txt(of: record)
        defer { avahi.avahi_string_list_free(txt) }
        let indexes = interfaces.isEmpty ? [Int32(AVAHI_IF_UNSPEC)] : interfaces
        let name = chosenName ?? record.name
        if let published, published.port == record.port, published.name == record.name {
            for index in indexes {
                _ = avahi.avahi_entry_group_update_service_txt_strlst(
                    group.pointer, AvahiIfIndex(index), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                    name, "_hap._tcp", nil, txt)
            }
        } else {
            _ = avahi.avahi_entry_group_reset(group.pointer)
            for index in indexes {
                let result = avahi.avahi_entry_group_add_service_strlst(
                    group.pointer, AvahiIfIndex(index), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                    name, "_hap._tcp", nil, nil, UInt16(record.port), txt)
                if result < 0 {
                    logger.warning("mDNS: cannot advertise the HomeKit bridge: \(AvahiLibrary.error(result))")
                }
            }
            _ = avahi.avahi_entry_group_commit(group.pointer)
        }
        state.withLock { state in
            state.published = record
            state.name = name
        }
    }

    /// The TXT record HAP asks for: `c#`, `ff`, `id`, `md`, `pv`, `s#`, `sf`, `ci` and `sh`.
    private static func txt(of record: HomeBridge.Advertisement) -> UnsafeMutablePointer<AvahiStringList>? {
        guard let avahi = avahiTable else { return nil }
        var list: UnsafeMutablePointer<AvahiStringList>?
        let pairs = [
            ("c#", "\(record.configurationNumber)"), ("ff", "0"), ("id", record.deviceID), ("md", record.name),
            ("pv", "1.1"), ("s#", "1"), ("sf", record.isPaired ? "0" : "1"), ("ci", "2"), ("sh", record.setupHash),
        ]
        for (key, value) in pairs.reversed() { list = avahi.avahi_string_list_add_pair(list, key, value) }
        return list
    }

    fileprivate func clientChanged(_ client: OpaquePointer?, _ clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            state.withLock { state in
                // The callback can come from inside avahi_client_new, before it returned the client.
                if state.client == nil, let client { state.client = Handle(pointer: client) }
                state.published = nil
            }
            register()
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host's own name is taken or being registered: withdraw until it runs again.
            let group = state.withLock { state in
                state.published = nil
                return state.group
            }
            if let group, let avahi = avahiTable { _ = avahi.avahi_entry_group_reset(group.pointer) }
        case AVAHI_CLIENT_FAILURE:
            logger.warning("mDNS: lost the connection to avahi-daemon; the HomeKit bridge is not advertised")
        default:
            break
        }
    }

    fileprivate func groupChanged(_ groupState: AvahiEntryGroupState) {
        guard groupState == AVAHI_ENTRY_GROUP_COLLISION, let avahi = avahiTable else {
            if groupState == AVAHI_ENTRY_GROUP_ESTABLISHED { logger.info("mDNS: the HomeKit bridge is advertised") }
            return
        }
        guard let name = state.withLock({ $0.name }), let alternative = avahi.avahi_alternative_service_name(name)
        else { return }
        let next = String(cString: alternative)
        avahi.avahi_free(alternative)
        logger.notice("mDNS: another host has the name '\(name)'; the HomeKit bridge is '\(next)'")
        state.withLock { state in
            state.name = next
            state.published = nil
        }
        register()
    }
}

/// Avahi's functions, loaded on first use (shared with the HAP driver's browser).
private var avahiTable: homegate_avahi? { AvahiLibrary.table }

private func advertiserClientCallback(
    _ client: OpaquePointer?, _ state: AvahiClientState, _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    Unmanaged<HAPAdvertiser>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
}

private func advertiserGroupCallback(
    _ group: OpaquePointer?, _ state: AvahiEntryGroupState, _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    Unmanaged<HAPAdvertiser>.fromOpaque(context).takeUnretainedValue().groupChanged(state)
}
