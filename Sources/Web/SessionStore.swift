// Hand-written, beside hummingbird-auth 2.5.0's SessionMiddleware/SessionStorage, because that model
// cannot keep what WebRouteTests and SessionStoreTests check (read in its sources at 2.5.0):
// - its cookie says `Expires`, not `Max-Age`, and `Secure` is fixed in its configuration, where ours
//   is set per request when a trusted proxy says the browser came over HTTPS;
// - a `PersistDriver` cannot list keys, so no cap per account and no "the busiest account gives up its
//   oldest" at capacity;
// - the live feed asks synchronously whether a session lives (`isLive`), a `PersistDriver` only async.
// The login throttle and the CSRF token were ours either way. Not adding it also saves its build
// (swift-extras-base64 and its CBcrypt target).
import Foundation
import Synchronization

/// A random token of 32 bytes as hex, from the system's secure generator (getrandom on Linux).
func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in String(format: "%016llx", generator.next()) }.joined()
}

/// Compares two secrets in time that does not depend on where they differ.
func sameSecret(_ a: String, _ b: String) -> Bool {
    let left = Array(a.utf8)
    let right = Array(b.utf8)
    guard left.count == right.count else { return false }
    var difference: UInt8 = 0
    for index in left.indices { difference |= left[index] ^ right[index] }
    return difference == 0
}

/// What the page says after an action: the command path's answer in words.
struct Notice: Sendable, Equatable {
    var succeeded: Bool
    var text: String
    /// The error code when it failed (`insufficientPrivileges`, …).
    var code: String?
}

/// One login: the account, the token that CSRF-protects its forms, when it ends, and the notice
/// to show on the next page.
struct Session: Sendable, Equatable {
    let token: String
    let account: String
    let csrf: String
    let expires: ContinuousClock.Instant
    var notice: Notice?
    /// The order of logins: the oldest is ended first, also among logins at the same instant.
    var serial: UInt64 = 0
}

/// The logins of the web page, in memory (a restart logs everyone out). Sessions end at a fixed
/// time after login, whatever is done with them. One account has at most `perAccount` at once (its
/// own oldest ends first), all together at most `capacity` (then the oldest of the account that
/// holds the most ends): logging in again and again ends only one's own sessions, never another
/// account's while it holds fewer.
final class SessionStore: Sendable {
    /// The cookie that holds a session's token.
    static let cookie = "homegate_session"
    private let sessions = Mutex<[String: Session]>([:])
    private let serials = Atomic<UInt64>(0)
    let lifetime: Duration
    let capacity: Int
    let perAccount: Int
    private let now: @Sendable () -> ContinuousClock.Instant

    init(
        lifetime: Duration, capacity: Int = 1_000, perAccount: Int = 20,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.perAccount = perAccount
        self.now = now
    }

    /// A new session for `account`, with a fresh token (never one the browser brought).
    func start(account: String) -> Session {
        let moment = now()
        let serial = serials.add(1, ordering: .relaxed).newValue
        let session = Session(
            token: randomToken(), account: account, csrf: randomToken(), expires: moment + lifetime, serial: serial)
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expires > moment }
            func endOldest(of owner: String) {
                let oldest = sessions.filter { $0.value.account == owner }.min { $0.value.serial < $1.value.serial }
                if let oldest { sessions[oldest.key] = nil }
            }
            while sessions.values.count(where: { $0.account == account }) >= perAccount { endOldest(of: account) }
            while sessions.count >= capacity {
                let counts = Dictionary(grouping: sessions.values, by: \.account).mapValues(\.count)
                guard let busiest = counts.max(by: { $0.value < $1.value })?.key else { break }
                endOldest(of: busiest)
            }
            sessions[session.token] = session
        }
        return session
    }

    /// The live session of `token`; nil when there is none or it expired (and then it is ended).
    func session(_ token: String?) -> Session? {
        guard let token else { return nil }
        let moment = now()
        return sessions.withLock { sessions in
            guard let session = sessions[token] else { return nil }
            guard session.expires > moment else {
                sessions[token] = nil
                return nil
            }
            return session
        }
    }

    func end(_ token: String) {
        _ = sessions.withLock { $0.removeValue(forKey: token) }
    }

    /// Keeps `notice` for the next page of this session.
    func leave(_ notice: Notice, for token: String) {
        sessions.withLock { $0[token]?.notice = notice }
    }

    /// The notice waiting for this session, removed.
    func takeNotice(_ token: String) -> Notice? {
        sessions.withLock { sessions in
            defer { sessions[token]?.notice = nil }
            return sessions[token]?.notice
        }
    }

    /// Seconds left of `session`, for the cookie's Max-Age.
    func secondsLeft(_ session: Session) -> Int {
        max(0, Int((session.expires - now()).components.seconds))
    }
}
