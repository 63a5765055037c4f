import Gateway
import HomeModel
import JSON
import OrderedCollections
import Synchronization

/// What an open page learns from the model: the latest value of each characteristic shown,
/// reachability, and that the layout changed (the page then loads itself again).
enum LiveUpdate: Sendable, Equatable {
    /// `text` in words (``valueText(_:type:)``); the page adds the unit it knows when `takesUnit`.
    case value(key: String, text: String, takesUnit: Bool, value: JSON)
    case reachable(accessory: String, isReachable: Bool)
    case reload

    /// The server-sent event for this update.
    var event: String {
        let (name, data): (String, JSON) =
            switch self {
            case .value(let key, let text, let takesUnit, let value):
                ("value", .object([("k", .string(key)), ("t", .string(text)), ("u", .bool(takesUnit)), ("v", value)]))
            case .reachable(let accessory, let isReachable):
                ("reachable", .object([("a", .string(accessory)), ("r", .bool(isReachable))]))
            case .reload: ("reload", .object([]))
            }
        return "event: \(name)\ndata: \(String(decoding: data.bytes, as: UTF8.self))\n\n"
    }
}

/// The element key of a characteristic on the page: stable across renames.
func characteristicKey(accessory: AccessoryID, service: ServiceID, type: CharacteristicType) -> String {
    "\(accessory.rawValue)/\(service.rawValue)/\(type.rawValue)"
}

/// One open page's mailbox: the latest update per characteristic and accessory, so a slow browser
/// costs memory bounded by what its page shows, never a queue of every value that went by.
final class LiveMailbox: Sendable {
    private struct Pending {
        /// By slot, in the order each slot was first posted to since the last ``take()``.
        var updates: OrderedDictionary<String, LiveUpdate> = [:]
        var closed = false
    }

    private let pending = Mutex(Pending())
    private let signal: AsyncStream<Void>.Continuation
    let signals: AsyncStream<Void>
    /// The homes the page may hear of (the account's, when it opened).
    let homes: Set<HomeID>
    /// The session whose page it is: its logout closes the mailbox.
    let session: String
    /// The session's account, and whether it administers a home the page shows (for the limits).
    let account: String
    let isAdministrator: Bool

    init(homes: Set<HomeID>, session: String, account: String, isAdministrator: Bool) {
        self.homes = homes
        self.session = session
        self.account = account
        self.isAdministrator = isAdministrator
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Wakes the page's stream without an update (its heartbeat: the stream then checks the
    /// session and writes a comment, which also finds a browser that went away).
    func poke() {
        signal.yield()
    }

    func post(_ update: LiveUpdate) {
        let slot: String
        switch update {
        case .value(let key, _, _, _): slot = "v" + key
        case .reachable(let accessory, _): slot = "r" + accessory
        case .reload: slot = "reload"
        }
        let posted = pending.withLock { pending in
            guard !pending.closed else { return false }
            pending.updates[slot] = update
            return true
        }
        if posted { signal.yield() }
    }

    /// Everything posted since the last call, oldest slot first.
    func take() -> [LiveUpdate] {
        pending.withLock { pending in
            defer { pending.updates = [:] }
            return Array(pending.updates.values)
        }
    }

    func close() {
        pending.withLock { $0.closed = true }
        signal.finish()
    }
}

/// Follows the model once for every open page and posts to each page what its homes need.
///
/// Streams are a shared, bounded resource, kept so that no one can take them from the people who
/// run the home: a session holds at most `perSession`, an account at most `perAccount`, and accounts
/// that administer none of the homes they stream (guests) together at most `capacity` less
/// `reservedForAdministrators`. A stream belongs to a live session only: one whose session ended
/// (logout, expiry, pushed out by a newer login) is closed when the next stream opens or a login
/// happens, not at the next event.
final class LiveFeed: Sendable {
    private let mailboxes = Mutex<[ObjectIdentifier: LiveMailbox]?>([:])

    let perSession: Int
    let perAccount: Int
    let capacity: Int
    let reservedForAdministrators: Int

    init(perSession: Int = 8, perAccount: Int = 16, capacity: Int = 256, reservedForAdministrators: Int = 64) {
        self.perSession = perSession
        self.perAccount = perAccount
        self.capacity = capacity
        self.reservedForAdministrators = reservedForAdministrators
    }

    /// Why a stream was not opened.
    enum Refusal: Error, Equatable {
        /// The session, the account or the guests' share holds as many as it may.
        case tooMany
        /// The gateway is shutting down.
        case closed
    }

    /// A mailbox for a page of `session` (of `account`) showing `homes`. Streams of sessions that
    /// `isLive` no longer knows are closed first.
    func open(
        homes: Set<HomeID>, session: String, account: String, isAdministrator: Bool,
        isLive: (String) -> Bool
    ) -> Result<LiveMailbox, Refusal> {
        closeEnded(isLive: isLive)
        let mailbox = LiveMailbox(homes: homes, session: session, account: account, isAdministrator: isAdministrator)
        return mailboxes.withLock { mailboxes in
            guard let pages = mailboxes?.values else { return .failure(.closed) }
            guard pages.count < capacity, pages.count(where: { $0.session == session }) < perSession,
                pages.count(where: { $0.account == account }) < perAccount,
                isAdministrator || pages.count(where: { !$0.isAdministrator }) < capacity - reservedForAdministrators
            else { return .failure(.tooMany) }
            mailboxes?[ObjectIdentifier(mailbox)] = mailbox
            return .success(mailbox)
        }
    }

    /// Closes the streams of sessions that `isLive` no longer knows (after a login pushed one out).
    func closeEnded(isLive: (String) -> Bool) {
        let ended = mailboxes.withLock { mailboxes in
            let ended = (mailboxes ?? [:]).values.filter { !isLive($0.session) }
            for page in ended { mailboxes?[ObjectIdentifier(page)] = nil }
            return ended
        }
        for page in ended { page.close() }
    }

    /// Ends the streams of a session (its logout).
    func close(session: String) { closeEnded { $0 != session } }

    func close(_ mailbox: LiveMailbox) {
        mailbox.close()
        _ = mailboxes.withLock { $0?.removeValue(forKey: ObjectIdentifier(mailbox)) }
    }

    /// Ends every page's stream (shutdown).
    func closeAll() {
        let pages = mailboxes.withLock { mailboxes in
            defer { mailboxes = nil }
            return Array(mailboxes?.values ?? [:].values)
        }
        for page in pages { page.close() }
    }

    var openPages: Int { mailboxes.withLock { $0?.count ?? 0 } }

    let written = Mutex(0)

    /// Counts updates a stream wrote to its page (for tests, which wait for them).
    func noteWritten(_ count: Int) { written.withLock { $0 += count } }

    /// Posts what `event` means to each page: values and reachability to the pages of that home,
    /// a reload for any other change of a home shown, and to every page when homes or users change
    /// (what an account may see may have changed).
    func deliver(_ event: HomeEvent) {
        let pages = mailboxes.withLock { Array($0?.values ?? [:].values) }
        guard !pages.isEmpty else { return }
        switch event {
        case .didUpdateValueForCharacteristic(let home, let accessory, let service, let type, let value):
            let (text, takesUnit) = valueText(value, type: type)
            let update = LiveUpdate.value(
                key: characteristicKey(accessory: accessory, service: service, type: type), text: text,
                takesUnit: takesUnit, value: Rendering.value(value))
            for page in pages where page.homes.contains(home) { page.post(update) }
        case .accessoryDidUpdateReachability(let home, let accessory, let isReachable):
            for page in pages where page.homes.contains(home) {
                page.post(.reachable(accessory: accessory.rawValue, isReachable: isReachable))
            }
        case .didFindNewAccessory, .didRemoveNewAccessory, .homeManagerDidUpdateHomes, .didAddHome, .didRemoveHome,
            .didUpdatePrimaryHome, .didAddUser, .didRemoveUser:
            for page in pages { page.post(.reload) }
        case .didExecuteActionSet, .didUpdateNextFirings:
            // Neither changes what the page shows.
            break
        default:
            if let home = event.home {
                for page in pages where page.homes.contains(home) { page.post(.reload) }
            }
        }
    }
}
