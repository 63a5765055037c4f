import AsyncMailbox
import Execution
import Foundation
import Logging
import Synchronization

/// The home database's entrance, HomeKit's `HMHomeManager`.
///
/// The entrance to three parts with narrow seams: the rules (``HomeGraph``, pure: what an edit does,
/// who may do it), the home's store (``HomeStore``: the model, its database, the group commit, the
/// change stream) and the drivers' hub (``DriverHub``: the registry of drivers and what they found,
/// driver requests with their deadlines, the probes of silent accessories). Both are owned by the
/// manager and isolated to it, so a driver's report or a command reads and commits the model without
/// a hop. A command is checked against the rules in the store and sent to its device through the hub.
///
/// Every operation names the acting `account` and is checked against the role table before
/// anything else; a failed operation changes nothing. Snapshots handed out (``Home``,
/// ``Accessory``, ...) are values. It runs on the executor it is given (the gateway's event loop),
/// or on a queue of its own.
package actor HomeManager: ExecutorChoosingActor {
    package nonisolated let executorChoice: ExecutorChoice
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executorChoice.unownedExecutor }
    let store: HomeStore
    let drivers: DriverHub
    nonisolated let database: HomeDatabase
    /// Drivers served without a service group (``attach(_:)``), ended at ``shutdown()``.
    var driverTasks: [Task<Void, Never>] = []
    let logger: Logger

    /// Loads everything the database holds; when this returns, ``homes(for:)`` is complete.
    ///
    /// - Parameters:
    ///   - valueCommitWindow: how long device values may wait to be written: every value that changes
    ///     within it is written in one transaction, off the actor (one fsync instead of one per value,
    ///     5–50 ms each on a hub's SD card). It is what a power cut can lose of device values; layout
    ///     changes are written before they are answered. Zero writes each value at once, on the actor.
    ///   - executor: where the manager runs: the gateway's event loop, so that a device's report or a
    ///     command is applied in the pass that read it. Not with `valueCommitWindow` zero, whose every
    ///     value waits for the disk's sync on the actor.
    package init(
        database: HomeDatabase, driverTimeout: Duration = .seconds(10), probeInterval: Duration = .seconds(15),
        homeCreators: HomeCreators = .administrators, valueCommitWindow: Duration = .milliseconds(100),
        clock: some Clock<Duration> = ContinuousClock(), executor: (any SerialExecutor)? = nil, logger: Logger? = nil
    ) throws {
        executorChoice = ExecutorChoice(valueCommitWindow == .zero ? nil : executor, otherwise: "homegate-home")
        let logger = logger ?? Logger(label: "homegate.home-model")
        // Every timer of the store and the hub, on one clock: the group commit's window, driver
        // deadlines, probes.
        let deadlines = DeadlineTimer(clock: AnyClock(clock))
        // The store and the hub come back here through a box the manager fills once it exists.
        let owner = WeakOwner()
        store = try HomeStore(
            database: database, browser: AccessoryBrowser(), homeCreators: homeCreators,
            valueCommitWindow: valueCommitWindow, deadlines: deadlines, logger: logger,
            reenter: { work in await owner.manager?.onStore(work) })
        drivers = DriverHub(
            store: store, driverTimeout: driverTimeout, probeInterval: probeInterval,
            reenter: { work in await owner.manager?.onDrivers(work) })
        self.database = database
        self.logger = logger
        owner.manager = self
    }

    private func onStore(_ work: @Sendable (HomeStore) -> Void) { work(store) }
    private func onDrivers(_ work: nonisolated(nonsending) @Sendable (DriverHub) async -> Void) async {
        await work(drivers)
    }

    /// Where the driver named `driver` keeps what must never be published (keys, pairings): this
    /// manager's database.
    package nonisolated func secrets(for driver: String) -> DriverSecrets { database.secrets(for: driver) }

    // MARK: The store's face

    /// A new stream of every change from now on with the state it left (``HomeChange``), in commit
    /// order; it starts with ``HomeEvent/homeManagerDidUpdateHomes`` and the whole model. What the
    /// gateway publishes from: one hop per change, none back to the manager.
    ///
    /// With `isWanted`, only the changes it takes, tested here as each is committed: a listener
    /// that needs few of them (the automations want only the values some automation watches) is
    /// not woken for every value a device reports. ``HomeEvent/homeManagerDidUpdateHomes`` (the
    /// first change, and each after a build was undone) is there whatever `isWanted` says: a
    /// listener starts over from it.
    ///
    /// Listeners are handed each change in the order they subscribed, except that those
    /// `firstInLine` come before the rest: a listener that passes each change straight on to a peer
    /// waiting for it (a HomeKit controller's event) then has its turn on the loop before the
    /// gateway renders and publishes its MQTT topics, not after.
    package func changes(
        where isWanted: (@Sendable (HomeChange) -> Bool)? = nil, firstInLine: Bool = false
    ) -> Mailbox<HomeChange> {
        store.changes(
            transform: { isWanted?($0) != false || $0.event == .homeManagerDidUpdateHomes ? $0 : nil },
            firstInLine: firstInLine)
    }

    /// What `transform`, run here as each change is committed, makes of it, where it makes something:
    /// for a listener that keeps a little of a few changes. Its mailbox holds only what it keeps, not
    /// the state each change left, which would keep the accessory's services alive until the listener
    /// took it (and the manager's next write to them would copy them).
    package func changes<Element: Sendable>(
        transform: @escaping @Sendable (HomeChange) -> Element?
    ) -> Mailbox<Element> {
        store.changes(transform: transform)
    }

    /// The events of ``changes(where:firstInLine:)`` without the state they left, which the mailbox
    /// does not hold either: for listeners that read what they need back.
    package func events() -> Mailbox<HomeEvent> { changes(transform: \.event) }

    /// The homes, the accessories no home has yet, and the model's version (``HomeChange/version``),
    /// read together.
    package func state() -> (homes: [Home], discovered: [Accessory], version: UInt64) { store.state() }

    /// Stops the drivers, writes the device values still waiting and finishes every event stream.
    package func shutdown() async {
        for task in driverTasks { task.cancel() }
        driverTasks.removeAll()
        await drivers.shutdown()
        store.close()
    }

    /// Checks `edit` as `account` and commits it: saved, then current, then announced. Returns the
    /// name of what it added (`nil` for other edits). What it takes out of a home returns to the
    /// browser; what it takes in leaves it.
    @discardableResult
    package func edit(_ edit: HomeEdit, account: String) async throws(HomeError) -> String? {
        try await store.edit(edit, account: account)
    }

    /// Runs `build` (many layout changes: a home built from a file) and writes all its changes in one
    /// transaction at the end, instead of one transaction (and fsync) per change: building 10,000
    /// accessories took 38 s of fsyncs. Each change is checked and announced as always; until the end
    /// nothing is on disk, so a crash in the middle leaves the database as it was before, and a change
    /// that fails undoes the whole build. Only for building before the gateway serves: other changes
    /// made meanwhile are written (or undone) with it.
    package func building<T: Sendable>(_ build: @Sendable (HomeManager) async throws -> T) async throws -> T {
        store.beginBuilding()
        let result: Result<T, any Error>
        do { result = .success(try await build(self)) } catch { result = .failure(error) }
        if case .failure(let error) = result {
            try store.endBuilding(failed: true)
            throw error
        }
        try store.endBuilding(failed: false)
        return try result.get()
    }

    /// The homes `account` may see (HomeKit's `homes` for that user), each with the account's role.
    package func homes(for account: String) -> [HomeSummary] {
        store.graph.homes.compactMap { home in
            home.role(of: account).map {
                HomeSummary(id: home.id, name: home.name, isPrimary: home.isPrimary, role: $0)
            }
        }
    }

    /// One home as `account` may see it. Throws `notFound`, or `insufficientPrivileges` for a non-member.
    package func home(_ name: String, account: String) throws(HomeError) -> Home {
        try store.home(name, account: account)
    }

    /// The accessory `id` when it belongs to the home `name` names, which `account` must be a member
    /// of; found through the graph's index, without a copy of the home or a pass over its accessories.
    package func accessory(_ id: AccessoryID, home name: String, account: String) throws(HomeError) -> Accessory? {
        let h = try store.graph.homeIndex(name, account: account, .member)
        guard let place = store.graph.locate(id), place.home == h else { return nil }
        return store.graph.homes[h].accessories[place.accessory]
    }

    /// Every home, for the Gateway's publisher (which decides who may read what through broker rules).
    package func allHomes() -> [Home] { store.graph.homes }

    /// Who is a member of which home, with accounts: for generating broker access rules only.
    package func memberships() -> [Membership] {
        store.graph.homes.flatMap { home in
            home.users.map { Membership(homeName: home.name, account: $0.account, role: $0.role) }
        }
    }

    /// Accessories the drivers found that belong to no home (HomeKit's accessory browser). Bridged
    /// accessories are listed too, with ``Accessory/bridge`` set; only the bridge can be added.
    package func discoveredAccessories() -> [Accessory] { drivers.browser.unowned(by: store.graph) }
}

/// The manager, for its store's and its hub's callbacks: set once the manager exists, and never keeping it.
private final class WeakOwner: Sendable {
    private struct Reference { weak var manager: HomeManager? }
    private let reference = Mutex(Reference())

    var manager: HomeManager? {
        get { reference.withLock { $0.manager } }
        set { reference.withLock { $0.manager = newValue } }
    }
}
