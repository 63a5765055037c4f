import AsyncMailbox
import Execution
import Foundation
import Logging
import Synchronization

/// The home's store: the model (``HomeGraph``, and what the drivers found beside it), its database,
/// the group commit of device values and the change stream. Every mutation is validated on a copy
/// of the model, written to SQLite, and only then made visible and announced on ``changes(transform:firstInLine:)``;
/// a failed one changes nothing.
///
/// Owned by ``HomeManager`` and isolated to it: the store is not `Sendable`, its calls are
/// synchronous (its async ones run where their caller runs), and it reaches its owner's actor again
/// only through ``reenter`` (a group commit's timer, GRDB's callback, a listener that went away).
final class HomeStore {
    private(set) var graph: HomeGraph
    /// What the drivers found; the drivers' hub (``DriverHub``) keeps it up to date.
    let browser: AccessoryBrowser
    let database: HomeDatabase
    /// Who may add a home.
    let homeCreators: HomeCreators
    let logger: Logger
    /// The owner's timer, on its clock: the group commit's window, and the hub's driver deadlines and probes.
    let deadlines: DeadlineTimer<AnyClock>
    /// Runs work on the store on its owner's actor, from a callback or timer that is elsewhere.
    let reenter: Reentry

    /// The group commit of device values: what waits to be written, and when.
    var valueCommits: ValueCommitSchedule
    /// The group commit that is scheduled, if any, and its number: a commit replaced while it was
    /// about to run finds another number and does nothing.
    var valueFlush: DeadlineTimer<AnyClock>.Ticket?
    var valueFlushNumber: UInt64 = 0
    let failedValues = FailedValueWrites()
    /// Set by ``close()``: nothing is scheduled or written off the actor after it.
    private(set) var isClosed = false
    /// While a build runs (``beginBuilding()``): the graph as the database holds it.
    private var batchBase: HomeGraph?
    /// While a layout edit is being saved: the model it makes, kept up to date with device reports.
    private(set) var pendingLayout: HomeGraph?
    /// Layout edits take turns: one is committed while the next waits.
    private let layoutTurns = Turns()
    private var feed = ChangeFeed()

    /// How the store's own callbacks come back onto its owner's actor: `work` runs there, with the
    /// store, unless the owner is gone.
    typealias Reentry = @Sendable (_ work: @escaping @Sendable (HomeStore) -> Void) async -> Void

    init(
        database: HomeDatabase, browser: AccessoryBrowser, homeCreators: HomeCreators, valueCommitWindow: Duration,
        deadlines: DeadlineTimer<AnyClock>, logger: Logger, reenter: @escaping Reentry
    ) throws {
        self.database = database
        self.browser = browser
        self.homeCreators = homeCreators
        self.deadlines = deadlines
        self.logger = logger
        self.reenter = reenter
        valueCommits = ValueCommitSchedule(window: valueCommitWindow)
        graph = try database.load()
    }

    // MARK: The change stream

    /// See ``HomeManager/changes(where:firstInLine:)`` and ``HomeManager/changes(transform:)``.
    func changes<Element: Sendable>(
        transform: @escaping @Sendable (HomeChange) -> Element?, firstInLine: Bool = false
    ) -> Mailbox<Element> {
        let first = change(.homeManagerDidUpdateHomes, version: feed.version)
        let reenter = self.reenter
        return feed.subscribe(transform: transform, firstInLine: firstInLine, first: first) { id in
            // Called synchronously where the listener went away: a task hops onto the owner.
            Task { await reenter { $0.feed.unsubscribe(id) } }
        }
    }

    func publish(_ events: [HomeEvent]) {
        feed.publish(events) { event, version in change(event, version: version) }
    }

    /// `event` with the model as it is now. A value's or a reachability change holds only its home
    /// cut down to that accessory: a listener holding a whole home while the next one is committed
    /// in place would make the store copy the home's accessories for that commit (at 10,000
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

    /// See ``HomeManager/state()``.
    func state() -> (homes: [Home], discovered: [Accessory], version: UInt64) {
        (graph.homes, browser.unowned(by: graph), feed.version)
    }

    /// Writes the values still waiting (and those of a group commit under way that failed) and
    /// ends every listener's stream; nothing is scheduled after it.
    func close() {
        isClosed = true
        if let valueFlush { deadlines.cancel(valueFlush) }
        valueFlush = nil
        database.waitForWrites()
        valueCommits.keepUnsaved(failedValues.take())
        if !valueCommits.unsaved.isEmpty { saveValues(of: []) }
        feed.finish()
    }

    // MARK: Layout

    /// See ``HomeManager/edit(_:account:)``.
    nonisolated(nonsending) func edit(_ edit: HomeEdit, account: String) async throws(HomeError) -> String? {
        await layoutTurns.take()
        defer { layoutTurns.end() }
        var found: [Accessory] = []
        var gone: Set<AccessoryID> = []
        if case .addAccessory(let home, let id, _, _) = edit {
            _ = try graph.homeIndex(home, account: account, .administrator)
            found = try browser.accessoryWithBridged(id, unownedIn: graph)
        }
        if case .removeAccessory(let home, let name) = edit,
            let accessory = try? graph.homes.first(where: { HomeName.matches($0.name, home) })?.accessory(named: name),
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

    /// Applies `edit` to a copy of the model, saves it, then makes it current and announces it. The
    /// save is awaited, so device reports and value writes go on meanwhile: they land on the model
    /// as it is and on the copy (``pendingLayout``), which becomes the model once saved. Layout
    /// edits take turns (``layoutTurns``).
    private nonisolated(nonsending) func commit(
        _ edit: HomeEdit, account: String, found: [Accessory], gone: Set<AccessoryID>
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
        // their own on the owner's actor (the loop).
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

    /// Starts a build (``HomeManager/building(_:)``): layout changes are checked and announced as
    /// always, and written together by ``endBuilding(failed:)``.
    func beginBuilding() {
        precondition(batchBase == nil, "building(_:) does not nest")
        batchBase = graph
    }

    /// Ends a build: writes all its changes in one transaction, or, when it `failed` or the write
    /// fails, undoes them all. Throws what the write threw.
    func endBuilding(failed: Bool) throws {
        let base = batchBase ?? graph
        batchBase = nil
        if failed {
            graph = base
            publish([.homeManagerDidUpdateHomes])
            return
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
    }

    /// Records what a device did or reported (values, reachability), in place: only the changed
    /// values (each named by its event) are written (reachability is not stored), without comparing the
    /// homes, so the cost does not grow with the size of the home. The device has already acted, so
    /// the change is kept and announced even when the database cannot be written (a full disk): the
    /// model stays true to the devices, and the next successful save writes it too.
    func commitDeviceState(_ change: (inout HomeGraph, inout [HomeEvent]) -> Void) {
        var events: [HomeEvent] = []
        change(&graph, &events)
        if pendingLayout != nil {
            var alreadyAnnounced: [HomeEvent] = []
            change(&pendingLayout!, &alreadyAnnounced)
        }
        var changed: [ValueKey] = []
        for case .didUpdateValueForCharacteristic(_, let accessory, let service, let characteristic, _) in events
        where !characteristic.isEvent {
            changed.append(ValueKey(accessory: accessory, service: service, characteristic: characteristic))
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

    // MARK: Reading

    /// See ``HomeManager/home(_:account:)``.
    func home(_ name: String, account: String) throws(HomeError) -> Home {
        graph.homes[try graph.homeIndex(name, account: account, .member)]
    }

    /// Runs `body` on the home `name` names, which `account` must be a member of, in place: no copy
    /// of the home outlives the call.
    func withHome<Result>(
        _ name: String, account: String, _ body: (borrowing Home) throws(HomeError) -> Result
    ) throws(HomeError) -> Result {
        try body(graph.homes[try graph.homeIndex(name, account: account, .member)])
    }

    func currentHome(_ id: HomeID) -> Home? { graph.homes.first { $0.id == id } }

    /// The accessory named `name` in `home`, for an administrator of it.
    func administeredAccessory(_ name: String, home: String, account: String) throws(HomeError) -> Accessory {
        try graph.homes[try graph.homeIndex(home, account: account, .administrator)].accessory(named: name)
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

    /// Whether the accessory is in a home, or about to be: an edit being saved (``pendingLayout``)
    /// may be adding it, and what its driver reports meanwhile belongs to the home it joins.
    func isInAHome(_ id: AccessoryID) -> Bool {
        graph.locate(id) != nil || pendingLayout?.locate(id) != nil
    }
}
