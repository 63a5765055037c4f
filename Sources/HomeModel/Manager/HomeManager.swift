import AsyncMailbox
import Execution
import Foundation
import Logging
import Synchronization

/// The home database: HomeKit's `HMHomeManager` and everything under it, as one actor.
///
/// The only writer. Every operation names the acting `account` and is checked against the role table
/// before anything else; every mutation is validated on a copy of the model, written to SQLite, and only
/// then made visible and announced on ``changes()``. A failed operation changes nothing. Snapshots
/// handed out (``Home``, ``Accessory``, ...) are values.
///
/// It runs on the executor it is given (the gateway's event loop), or on a queue of its own.
package actor HomeManager {
    private nonisolated let executor: ExecutorChoice
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.unownedExecutor }
    /// What the manager's tasks prefer: the loop, when it runs on it (``ExecutorChoice/taskExecutor``).
    nonisolated var taskExecutor: (any TaskExecutor)? { executor.taskExecutor }
    private(set) var graph: HomeGraph
    /// The group commit of device values: what waits to be written, and when.
    var valueCommits: ValueCommitSchedule
    /// The group commit that is scheduled, if any, and its number: a commit replaced while it was
    /// about to run finds another number and does nothing.
    var valueFlush: DeadlineTimer<AnyClock>.Ticket?
    var valueFlushNumber: UInt64 = 0
    /// The values of group commits that failed off the actor, until the actor (or shutdown, which
    /// cannot wait for the actor) takes them back.
    nonisolated let failedValues = Mutex<Set<ValueKey>>([])
    /// Whether group commits wait for a retry's delay (a write of values failed last), for tests.
    var isRetryingValues: Bool { valueCommits.retryDelay != nil }
    /// Whether a layout edit is being written, for tests.
    var isSavingLayout: Bool { pendingLayout != nil }
    /// Set by ``shutdown()``: nothing is scheduled or written off the actor after it.
    var isShutDown = false
    /// While ``building(_:)`` runs: the graph as the database holds it; changes are written at the end.
    private var batchBase: HomeGraph?
    /// While a layout edit is being saved: the model it makes, kept up to date with device reports.
    private(set) var pendingLayout: HomeGraph?
    /// Whether a layout edit is being committed, and the edits waiting for their turn.
    private var isCommittingLayout = false
    private var layoutTurns: [CheckedContinuation<Void, Never>] = []
    let database: HomeDatabase
    var browser = AccessoryBrowser()
    private var feed = ChangeFeed()
    var driverTasks: [Task<Void, Never>] = []
    /// Accessories shown unreachable because a request to them timed out, with the task that tries
    /// each again until it answers.
    var unresponsive: [AccessoryID: Probe] = [:]
    /// Counts the probes scheduled: a probe goes on only while it is its accessory's latest.
    var probesScheduled: UInt64 = 0
    let logger: Logger
    /// How long a driver may take to read, write or identify before the request fails with
    /// `operationTimedOut`.
    package let driverTimeout: Duration
    /// Every driver request's timeout, on one shared timer.
    let deadlines: DeadlineTimer<AnyClock>
    /// What every timer of the manager runs on: driver timeouts, the group commit's window, probes.
    let clock: AnyClock
    /// How often an accessory that stopped answering is tried again (a read), until it answers.
    package let probeInterval: Duration
    /// Who may add a home.
    package let homeCreators: HomeCreators
    /// How long device values may wait to be written: every value that changes within it is written
    /// in one transaction, off the actor (one fsync instead of one per value, which on a hub's SD card
    /// is 5–50 ms each). It is what a power cut can lose of device values; layout changes are written
    /// before they are answered. Zero writes each value at once, on the actor.
    package let valueCommitWindow: Duration

    /// Loads everything the database holds; when this returns, ``homes(for:)`` is complete.
    ///
    /// - Parameter executor: where the manager runs: the gateway's event loop, so that a device's
    ///   report or a command is applied in the pass that read it. Not with `valueCommitWindow` zero,
    ///   whose every value waits for the disk's sync on the actor.
    package init(
        database: HomeDatabase, driverTimeout: Duration = .seconds(10), probeInterval: Duration = .seconds(15),
        homeCreators: HomeCreators = .administrators, valueCommitWindow: Duration = .milliseconds(100),
        clock: some Clock<Duration> = ContinuousClock(), executor: (any SerialExecutor)? = nil, logger: Logger? = nil
    ) throws {
        self.executor = ExecutorChoice(valueCommitWindow == .zero ? nil : executor, otherwise: "homegate-home")
        self.clock = AnyClock(clock)
        deadlines = DeadlineTimer(clock: self.clock)
        self.valueCommitWindow = valueCommitWindow
        valueCommits = ValueCommitSchedule(window: valueCommitWindow)
        self.database = database
        self.homeCreators = homeCreators
        self.graph = try database.load()
        self.driverTimeout = driverTimeout
        self.probeInterval = probeInterval
        self.logger = logger ?? Logger(label: "homegate.home-model")
    }

    /// Where the driver named `driver` keeps what must never be published (keys, pairings): this
    /// manager's database.
    package nonisolated func secrets(for driver: String) -> DriverSecrets { database.secrets(for: driver) }

    // MARK: Events

    /// A new stream of every change from now on with the state it left (``HomeChange``), in commit
    /// order; it starts with ``HomeEvent/homeManagerDidUpdateHomes`` and the whole model. What the
    /// gateway publishes from: one hop per change, none back to the manager.
    package func changes() -> Mailbox<HomeChange> {
        changes(where: nil)
    }

    /// The changes of ``changes()`` that `isWanted` takes, tested here as each is committed: a
    /// listener that needs few of them (the automations want only the values some automation
    /// watches) is not woken for every value a device reports. The first change is there whatever
    /// `isWanted` says.
    package func changes(where isWanted: (@Sendable (HomeChange) -> Bool)?) -> Mailbox<HomeChange> {
        let first = change(.homeManagerDidUpdateHomes, version: feed.version)
        return feed.subscribe(where: isWanted, first: first) { id in
            // Called synchronously where the listener went away: a task hops onto the manager.
            Task { await self.unsubscribe(id) }
        }
    }

    /// The events of ``changes()`` without the state: for listeners that read what they need back.
    package func events() -> HomeEvents {
        changes().map(\.event)
    }

    private func unsubscribe(_ id: UUID) {
        feed.unsubscribe(id)
    }

    func publish(_ events: [HomeEvent]) {
        feed.publish(events) { event, version in change(event, version: version) }
    }

    /// `event` with the model as it is now. A value's or a reachability change holds only its home
    /// cut down to that accessory: a listener holding a whole home while the next one is committed
    /// in place would make the manager copy the home's accessories for that commit (at 10,000
    /// accessories, most of a flap's work). Neither can change the accessories no home has, so they
    /// do not carry them (finding them is a pass over every accessory the drivers found).
    private func change(_ event: HomeEvent, version: UInt64) -> HomeChange {
        let accessory: AccessoryID? =
            switch event {
            case .didUpdateValueForCharacteristic(_, let accessory, _, _, _),
                .accessoryDidUpdateReachability(_, let accessory, _):
                accessory
            default: nil
            }
        if let accessory, let (h, a) = graph.locate(accessory) {
            var home = graph.homes[h]
            home.accessories = [home.accessories[a]]
            return HomeChange(event: event, homes: [home], discovered: nil, version: version)
        }
        return HomeChange(
            event: event, homes: graph.homes, discovered: browser.unowned(by: graph), version: version)
    }

    /// The homes, the accessories no home has yet, and the model's version (``HomeChange/version``),
    /// read together.
    package func state() -> (homes: [Home], discovered: [Accessory], version: UInt64) {
        (graph.homes, browser.unowned(by: graph), feed.version)
    }

    /// Re-reads the database and tells every listener to reload (``HomeEvent/homeManagerDidUpdateHomes``).
    package func reload() async throws {
        await takeLayoutTurn()
        defer { endLayoutTurn() }
        var reloaded = try database.load()
        for h in reloaded.homes.indices {
            for a in reloaded.homes[h].accessories.indices {
                let id = reloaded.homes[h].accessories[a].id
                reloaded.homes[h].accessories[a].isReachable = browser.isReachable(id) && unresponsive[id] == nil
            }
        }
        graph = reloaded
        valueCommits.forgetUnsaved()
        publish([.homeManagerDidUpdateHomes])
    }

    /// Stops the drivers and finishes every event stream.
    package func shutdown() async {
        for task in driverTasks { task.cancel() }
        driverTasks.removeAll()
        isShutDown = true
        for probe in unresponsive.values { deadlines.cancel(probe.ticket) }
        unresponsive.removeAll()
        for driver in browser.drivers { await driver.stop() }
        // Values still waiting for their group commit are written before the gateway goes, and so
        // are those of a group commit under way that fails.
        if let valueFlush { deadlines.cancel(valueFlush) }
        valueFlush = nil
        database.waitForWrites()
        valueCommits.keepUnsaved(takeFailedValues())
        if !valueCommits.unsaved.isEmpty { saveValues(of: []) }
        feed.finish()
    }

    // MARK: Committing

    /// Applies `edit` to a copy of the model, saves it, then makes it current and announces it. The
    /// save is awaited, so device reports and value writes go on meanwhile: they land on the model
    /// as it is and on the copy (``pendingLayout``), which becomes the model once saved. Layout
    /// edits take turns (``takeLayoutTurn()``).
    private func commit(
        _ edit: HomeEdit, account: String, found: [Accessory], gone: Set<AccessoryID> = []
    ) async throws(HomeError) -> HomeEditOutcome {
        var next = graph
        var events: [HomeEvent] = []
        if batchBase != nil {
            // While building, nothing needs the graph before the change (a failure undoes the whole
            // build, which is written at its end): the change takes it over, so a home's accessories
            // are not copied on every change.
            graph = HomeGraph()
            let outcome: HomeEditOutcome
            do {
                outcome = try next.apply(
                    edit, account: account, creators: homeCreators, found: found, gone: gone, events: &events)
            } catch {
                graph = next
                throw error
            }
            graph = next
            publish(events)
            return outcome
        }
        let outcome = try next.apply(
            edit, account: account, creators: homeCreators, found: found, gone: gone, events: &events)
        pendingLayout = next
        defer { pendingLayout = nil }
        // The device values waiting go in the same transaction, on GRDB's queue: not an fsync of
        // their own on the manager's actor (the loop).
        let values = valueCommits.unsaved.isEmpty ? nil : valueCommits.beginWrite(adding: [], settled: true)
        do {
            try await database.saveAwaiting(
                from: graph, to: next, values: values.map { self.values(of: $0.values) } ?? [])
        } catch {
            if let values { valuesWritten(values.write, failed: values.values, error: error) }
            logger.error("Saving the home database failed", metadata: ["error": "\(error)"])
            throw HomeDatabase.failure(error)
        }
        if let values { valuesWritten(values.write, failed: nil, error: nil) }
        graph = pendingLayout ?? next
        publish(events)
        return outcome
    }

    /// Waits until no other layout edit is being committed (first come, first served).
    private func takeLayoutTurn() async {
        guard isCommittingLayout else {
            isCommittingLayout = true
            return
        }
        await withCheckedContinuation { layoutTurns.append($0) }
    }

    private func endLayoutTurn() {
        if layoutTurns.isEmpty {
            isCommittingLayout = false
        } else {
            layoutTurns.removeFirst().resume()
        }
    }

    /// Runs `build` (many layout changes: a home built from a file) and writes all its changes in one
    /// transaction at the end, instead of one transaction (and fsync) per change: building 10,000
    /// accessories took 38 s of fsyncs. Each change is checked and announced as always; until the end
    /// nothing is on disk, so a crash in the middle leaves the database as it was before, and a change
    /// that fails undoes the whole build. Only for building before the gateway serves: other changes
    /// made meanwhile are written (or undone) with it.
    package func building<T: Sendable>(_ build: @Sendable (HomeManager) async throws -> T) async throws -> T {
        precondition(batchBase == nil, "building(_:) does not nest")
        batchBase = graph
        let result: Result<T, any Error>
        do { result = .success(try await build(self)) } catch { result = .failure(error) }
        let base = batchBase ?? graph
        batchBase = nil
        if case .failure(let error) = result {
            // All or nothing: the build is undone, nothing of it was written.
            graph = base
            publish([.homeManagerDidUpdateHomes])
            throw error
        }
        do {
            try database.save(from: base, to: graph)
        } catch {
            logger.error("Saving the home database failed", metadata: ["error": "\(error)"])
            graph = base
            publish([.homeManagerDidUpdateHomes])
            throw HomeDatabase.failure(error)
        }
        if !valueCommits.unsaved.isEmpty { saveValues(of: []) }
        return try result.get()
    }

    /// Records what a device did or reported (values, reachability), in place: only the changed
    /// values (each named by its event) are written (reachability is not stored), without comparing the
    /// homes, so the cost does not grow with the size of the home. The device has already acted, so the change is kept
    /// and announced even when the database cannot be written (a full disk): the model stays true to
    /// the devices, and the next successful save writes it too.
    func commitDeviceState(_ change: (inout HomeGraph, inout [HomeEvent]) -> Void) {
        var events: [HomeEvent] = []
        change(&graph, &events)
        if pendingLayout != nil {
            var alreadyAnnounced: [HomeEvent] = []
            change(&pendingLayout!, &alreadyAnnounced)
        }
        var changed: [ValueKey] = []
        for event in events {
            if case .didUpdateValueForCharacteristic(_, let accessory, let service, let characteristic, _) = event,
                !characteristic.isEvent
            {
                changed.append(ValueKey(accessory: accessory, service: service, characteristic: characteristic))
            }
        }
        if !changed.isEmpty {
            if valueCommits.writesEachValue {
                saveValues(of: changed)
            } else {
                valueCommits.keepUnsaved(changed)
                scheduleValueCommit()
            }
        }
        publish(events)
    }

    // MARK: Snapshots

    /// The homes `account` may see (HomeKit's `homes` for that user), each with the account's role.
    package func homes(for account: String) -> [HomeSummary] {
        graph.homes.compactMap { home in
            graph.role(of: account, in: home).map {
                HomeSummary(id: home.id, name: home.name, isPrimary: home.isPrimary, role: $0)
            }
        }
    }

    /// One home as `account` may see it. Throws `notFound`, or `insufficientPrivileges` for a non-member.
    package func home(_ name: String, account: String) throws(HomeError) -> Home {
        graph.homes[try graph.homeIndex(name, account: account, .member)]
    }

    /// The accessory `id` when it belongs to the home `name` names, which `account` must be a member
    /// of; found through the graph's index, without a copy of the home or a pass over its accessories.
    package func accessory(_ id: AccessoryID, home name: String, account: String) throws(HomeError) -> Accessory? {
        let h = try graph.homeIndex(name, account: account, .member)
        guard let place = graph.locate(id), place.home == h else { return nil }
        return graph.homes[h].accessories[place.accessory]
    }

    /// Runs `body` on the home `name` names, which `account` must be a member of, in place: no copy
    /// of the home outlives the call.
    func withHome<Result>(
        _ name: String, account: String, _ body: (borrowing Home) throws(HomeError) -> Result
    ) throws(HomeError) -> Result {
        try body(graph.homes[try graph.homeIndex(name, account: account, .member)])
    }

    /// Every home, for the Gateway's publisher (which decides who may read what through broker rules).
    package func allHomes() -> [Home] { graph.homes }

    /// The primary home; `nil` while there is no home.
    package var primaryHome: HomeID? { graph.primaryHome }

    /// Who is a member of which home, with accounts: for generating broker access rules only.
    package func memberships() -> [Membership] {
        graph.homes.flatMap { home in
            home.users.map { Membership(home: home.id, homeName: home.name, account: $0.account, role: $0.role) }
        }
    }

    // MARK: Layout

    /// Checks `edit` as `account` and commits it: saved, then current, then announced. Returns the
    /// name of what it added (`nil` for other edits). What it takes out of a home returns to the
    /// browser; what it takes in leaves it.
    @discardableResult
    package func edit(_ edit: HomeEdit, account: String) async throws(HomeError) -> String? {
        await takeLayoutTurn()
        defer { endLayoutTurn() }
        var found: [Accessory] = []
        var gone: Set<AccessoryID> = []
        if case .addAccessory(let home, let id, _, _) = edit {
            _ = try graph.homeIndex(home, account: account, .administrator)
            found = try browser.accessoryWithBridged(id, unownedIn: graph)
        }
        if case .removeAccessory(let home, let name) = edit,
            let accessory = graph.homes.first(where: { HomeName.matches($0.name, home) })?.accessories
                .first(where: { HomeName.matches($0.name, name) }),
            let bridge = accessory.bridge, browser.isGone(accessory.id, fromBridge: bridge)
        {
            gone = [accessory.id]
        }
        let outcome = try await commit(edit, account: account, found: found, gone: gone)
        switch outcome {
        case .added(let name):
            publish(found.map { .didRemoveNewAccessory(accessory: $0.id) })
            return name
        case .removed(let accessories):
            publish(accessories.filter { browser.knows($0.id) }.map { .didFindNewAccessory(accessory: $0.id) })
        case .changed:
            break
        }
        return nil
    }

    /// Accessories the drivers found that belong to no home (HomeKit's accessory browser). Bridged
    /// accessories are listed too, with ``Accessory/bridge`` set; only the bridge can be added.
    package func discoveredAccessories() -> [Accessory] {
        browser.unowned(by: graph)
    }

    // MARK: For the extensions

    /// The id of the accessory named `name` in `home`, for an administrator of it.
    func administeredAccessory(_ name: String, home: String, account: String) throws(HomeError) -> Accessory {
        let index = try graph.homeIndex(home, account: account, .administrator)
        guard let accessory = graph.homes[index].accessories.first(where: { HomeName.matches($0.name, name) }) else {
            throw HomeError(.notFound, "There is no accessory '\(name)' in '\(graph.homes[index].name)'.")
        }
        return accessory
    }
    func checkAdministrator(of home: String, account: String) throws(HomeError) {
        _ = try graph.homeIndex(home, account: account, .administrator)
    }
    func joinPermittingDrivers() -> [any JoinPermitting] { browser.drivers.compactMap { $0 as? any JoinPermitting } }
    func administersAnyHome(_ account: String) -> Bool {
        graph.homes.contains { home in home.users.contains { $0.account == account && $0.role == .administrator } }
    }

    /// Whether the accessory is in a home and reachable now; read in place (a copy of the accessory
    /// would cost a retain and a release of each of its arrays, on every write).
    func isReachableNow(_ id: AccessoryID) -> Bool {
        guard let (h, a) = graph.locate(id) else { return false }
        return graph.homes[h].accessories[a].isReachable
    }

    /// The accessory as the model knows it now, in whichever home holds it.
    func currentAccessory(_ id: AccessoryID) -> Accessory? {
        graph.locate(id).map { graph.homes[$0.home].accessories[$0.accessory] }
    }

    /// Commits what a driver reported; there is no caller to tell when the database fails.
    func commitReported(_ change: (inout HomeGraph, inout [HomeEvent]) -> Void) {
        commitDeviceState(change)
    }
}

/// The events of ``HomeManager/changes()`` without the state they left (``HomeManager/events()``).
package typealias HomeEvents = AsyncMapSequence<Mailbox<HomeChange>, HomeEvent>
