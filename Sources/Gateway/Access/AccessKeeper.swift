import Execution
import HomeModel
import JSON
import Logging
import Synchronization

/// Keeps mosquitto's dynamic-security plugin in step with the homes' users, for as long as the
/// gateway runs: a sync after every connection and every change of homes or users, a retry with
/// exponential backoff when one fails (so a removed member does not keep reading until the next
/// change), a later sync for grants the role-change limit held back and, while some member has no
/// client on the broker, a sync every minute that gives it its roles once an administrator made it.
/// What it last saw goes into `B/$health` as `dynamicSecurity`.
package final class AccessKeeper: Sendable {
    /// Where the keeper stands, as `$health` shows it. Counts, never account names.
    package struct Status: Sendable, Hashable {
        /// Whether the last sync completed.
        package var inStep: Bool?
        /// Syncs that failed since the gateway started, and in a row until the last one.
        package var failedSyncs = 0
        package var consecutiveFailures = 0
        /// The last failure's code and message (it names roles, never passwords).
        package var lastError: String?
        /// Members whose account the broker has no client for (they get no access until created).
        package var missingAccounts = 0
        /// Accounts whose new roles wait for the role-change limit.
        var heldAccounts = 0

        var json: JSON {
            .object([
                ("inStep", inStep.map(JSON.bool) ?? .null),
                ("failedSyncs", .integer(failedSyncs)),
                ("consecutiveFailures", .integer(consecutiveFailures)),
                ("lastError", lastError.map(JSON.string) ?? .null),
                ("missingAccounts", .integer(missingAccounts)),
                ("heldAccounts", .integer(heldAccounts)),
            ])
        }
    }

    package let sync: DynamicSecuritySync
    /// The rules for the model as it is now.
    let rules: @Sendable (HomeManager) async -> AccessRules
    /// How often one account's client roles may change (each change disconnects it): three changes
    /// at once, then one every 30 s per account: adding a guest to a few homes goes through at once,
    /// a loop of adds and removes does not disconnect the account more than twice a minute.
    let roleChanges = RateLimiter(RateLimit(perSecond: 1.0 / 30, burst: 3))
    /// The first retry's delay after a failed sync; it doubles up to `maximumRetryDelay`.
    package let retryDelay: Duration
    package let maximumRetryDelay: Duration
    private let state = Mutex<(status: Status, retry: DeadlineTimer<AnyClock>.Ticket?)>((Status(), nil))
    private let timer: DeadlineTimer<AnyClock>

    package init(
        sync: DynamicSecuritySync, retryDelay: Duration = .seconds(1), maximumRetryDelay: Duration = .seconds(60),
        clock: some Clock<Duration> = ContinuousClock(), rules: @escaping @Sendable (HomeManager) async -> AccessRules
    ) {
        timer = DeadlineTimer(clock: AnyClock(clock))
        self.sync = sync
        self.rules = rules
        self.retryDelay = retryDelay
        self.maximumRetryDelay = maximumRetryDelay
    }

    package var status: Status { state.withLock { $0.status } }

    /// Syncs on every element of `changes` (coalesced while a sync runs); schedules its own later
    /// syncs by yielding into `trigger`, the continuation of `changes`. `GatewayService` runs it, and
    /// has each sync wait first for `beforeSync` (the answers to requests under way).
    package func run(
        manager: HomeManager, changes: AsyncStream<Void>, trigger: AsyncStream<Void>.Continuation,
        statistics: GatewayStatistics, logger: Logger, beforeSync: @Sendable () async -> Void = {}
    ) async {
        defer { if let retry = state.withLock({ $0.retry }) { timer.cancel(retry) } }
        for await _ in changes {
            await beforeSync()
            let next: Duration?
            do {
                let plan = try await sync.sync(await rules(manager), limitingRoleChangesWith: roleChanges)
                next = succeeded(plan, logger: logger)
            } catch {
                // A sync cut short by the gateway's shutdown did not fail: nothing to log or retry.
                if Task.isCancelled { return }
                next = failed(error, logger: logger)
            }
            statistics.recordDynamicSecurity(status.json)
            state.withLock { state in
                if let retry = state.retry { timer.cancel(retry) }
                state.retry = next.map { delay in timer.schedule(after: delay) { trigger.yield() } }
            }
        }
    }

    /// Records a completed sync; returns when to sync again, if anything is left to do.
    private func succeeded(_ plan: DynamicSecurityPlan, logger: Logger) -> Duration? {
        let (status, missingChanged) = state.withLock { state in
            let missingChanged = state.status.missingAccounts != plan.missingAccounts.count
            state.status.inStep = true
            state.status.consecutiveFailures = 0
            state.status.missingAccounts = plan.missingAccounts.count
            state.status.heldAccounts = plan.heldGrants.count
            return (state.status, missingChanged)
        }
        if !plan.commands.isEmpty {
            logger.info("dynamic security in step", metadata: ["commands": "\(plan.commands.count)"])
        }
        if !plan.missingAccounts.isEmpty && missingChanged {
            logger.warning(
                "members' accounts missing on the broker get no access until created (mosquitto_ctrl dynsec createClient)",
                metadata: ["accounts": "\(status.missingAccounts)"])
        }
        if !plan.heldGrants.isEmpty {
            let wait = plan.heldGrants.keys.map { roleChanges.retryAfter($0) }.max() ?? .zero
            logger.notice(
                "new roles held back: those accounts' roles changed too often",
                metadata: ["accounts": "\(plan.heldGrants.count)", "retryIn": "\(wait)"])
            return wait + .milliseconds(100)
        }
        return plan.missingAccounts.isEmpty ? nil : .seconds(60)
    }

    /// Records a failed sync; returns the backoff until the next try.
    private func failed(_ error: DynamicSecurityError, logger: Logger) -> Duration {
        let failures = state.withLock { state in
            state.status.inStep = false
            state.status.failedSyncs += 1
            state.status.consecutiveFailures += 1
            state.status.lastError = error.description
            return state.status.consecutiveFailures
        }
        let doubling = retryDelay * (1 << min(failures - 1, 16))
        let delay = min(doubling, maximumRetryDelay) * Double.random(in: 0.8...1.2)
        logger.error(
            "could not bring dynamic security in step; trying again",
            metadata: ["error": "\(error)", "failures": "\(failures)", "retryIn": "\(delay)"])
        return delay
    }
}
