import AsyncMailbox
import Execution
import HomeModel
import Logging
import MQTT

/// Keeps the broker's retained topics under the base topic equal to the home model.
///
/// After every (re)connect it reads back what the broker holds, publishes everything (QoS 1,
/// retained) and clears what no longer belongs to the home; afterwards it publishes only what
/// changed, and clears every topic of a renamed, moved or removed object. It never publishes a value
/// that did not change, so a failed write moves no value topic.
///
/// It runs on the client's loop (if it has one): a change is rendered and queued in the pass that
/// made it, and the loop writes it at the pass's end.
package actor RetainedPublisher: ExecutorChoosingActor {
    package nonisolated let executorChoice: ExecutorChoice
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executorChoice.unownedExecutor }
    private let client: MQTTClient
    private let topics: Topics
    private let readBack: @Sendable () async throws -> Set<String>
    private let statistics: GatewayStatistics
    private let logger: Logger
    private let homeAssistant: HomeAssistantDiscovery?
    /// Clearings of command topics whose echo the gateway must drop (MQTT 3.1.1 only).
    private let echoes: ClearingEchoes?
    /// What this gateway has told the broker to retain.
    private var published = RetainedView()
    /// Which part of the view each published topic belongs to, and the topics of each part: a change
    /// renders and compares only the parts it touches (``parts(touchedBy:)``).
    private var owner: [String: RetainedView.Part] = [:]
    private var partTopics: [RetainedView.Part: Set<String>] = [:]
    /// The accessories of each home as last published, for changes that touch a whole home.
    private var homeAccessories: [HomeID: Set<AccessoryID>] = [:]
    /// Each accessory's `$layout` entry as last rendered: a flap renders one entry, not the home.
    private var layoutFragments = LayoutFragments()
    /// Services already logged as having no Home Assistant component (each is said once).
    private var reportedUnmapped: Set<String> = []
    /// A full reload is under way: changes wait for it (see ``synchronize(_:)``).
    private var isSynchronizing = false
    /// The changes that came while a reload ran, in order.
    private var changesWhileSynchronizing: [HomeChange] = []
    /// Until the first full reload there is nothing to diff against: updates before it are left
    /// to it (it reads the model after them), or everything would be sent twice.
    private var hasSynchronized = false
    /// How long a home's `$layout` waits after a reachability change before it is rendered again.
    private let layoutDelay: Duration
    /// Reads the model for a `$layout` rendered late.
    private let layoutState: @Sendable () async -> HomeSnapshot
    /// Homes whose `$layout` a reachability change made stale, with the model's version of the
    /// newest such change: only a rendering from that version or later makes it current.
    private var layoutsDue: [HomeID: UInt64] = [:]
    /// The task that renders `layoutsDue` once `layoutDelay` has passed.
    private var layoutFlush: DeadlineTimer<AnyClock>.Ticket?
    private let timer: DeadlineTimer<AnyClock>
    /// The model's version each home's `$layout` was last rendered from: an older one is not
    /// rendered after it (a late rendering reads the model, which may be ahead of the changes).
    private var layoutVersions: [HomeID: UInt64] = [:]

    /// - Parameters:
    ///   - homeAssistant: also keep Home Assistant's discovery configs and `$ha` states retained.
    ///   - readBack: lists the topics the broker holds retained under the base topic (and this
    ///     gateway's discovery config topics).
    ///   - echoes: where to note clearings of command topics (stale retained commands), whose
    ///     echo the gateway must not take for a command (MQTT 3.1.1).
    ///   - layoutDelay, layoutState: how long a home's `$layout` follows a reachability change
    ///     late, and how the model is read then. The accessory's own topics follow at once (the
    ///     change carries only that accessory); its home's `$layout` (which names every accessory:
    ///     megabytes at 10,000) is rendered once for all the flaps of that time, from the model as
    ///     it is then.
    package init(
        client: MQTTClient, topics: Topics, homeAssistant: HomeAssistantDiscovery? = nil,
        statistics: GatewayStatistics = GatewayStatistics(), logger: Logger, echoes: ClearingEchoes? = nil,
        layoutDelay: Duration = .seconds(1), clock: some Clock<Duration> = ContinuousClock(),
        layoutState: @escaping @Sendable () async -> HomeSnapshot,
        readBack: @escaping @Sendable () async throws -> Set<String>
    ) {
        executorChoice = ExecutorChoice(client.loop, otherwise: "homegate-publisher")
        timer = DeadlineTimer(clock: AnyClock(clock))
        self.layoutDelay = layoutDelay
        self.layoutState = layoutState
        self.echoes = echoes
        self.homeAssistant = homeAssistant
        self.statistics = statistics
        self.client = client
        self.topics = topics
        self.logger = logger
        self.readBack = readBack
    }

    /// The full reload after a (re)connect (HomeKit's homeManagerDidUpdateHomes): publish every topic
    /// and clear the stale ones. The broker's retained topics are read back while the view is
    /// rendered and published (at 10,000 accessories each takes a few hundred milliseconds); only
    /// the clearing waits for them.
    ///
    /// The actor is re-entered while it waits for the broker and the model. Changes that come
    /// meanwhile are not applied then (against a `published` that is about to be replaced, they
    /// would send everything twice, or an older state after a newer one); at its end those the
    /// snapshot does not hold (``HomeChange/version``) are applied in order.
    ///
    /// `retainedBefore` is a topic the broker acknowledged as retained before this call: the read-back
    /// must hold it, or the broker keeps retained messages from wildcard subscriptions (RabbitMQ's
    /// MQTT plugin delivers them to exact topics only), which is logged once per call.
    package func synchronize(retainedBefore: String? = nil, _ snapshot: @Sendable () async -> HomeSnapshot) async {
        isSynchronizing = true
        let readBack = self.readBack
        async let reading = readBack()
        let current = await snapshot()
        for home in current.homes { reportUnmapped(in: home) }
        var fragments = layoutFragments
        fragments.keep(only: current.homes)
        let (parts, sent) = await sendWholeView(of: current, fragments: &fragments)
        layoutFragments = fragments
        let desired = RetainedView(merging: parts)
        let held: Set<String>
        do {
            held = try await reading
            if let retainedBefore, !held.contains(retainedBefore) {
                logger.warning(
                    "the broker did not deliver the retained '\(retainedBefore)' to a subscription of '\(topics.base)/#': clients that subscribe with wildcards see nothing of the home until it changes, and stale topics stay. RabbitMQ's MQTT plugin does this (retained messages only for exact topics, kept per node), and so does an access rule that lets the gateway write its topics but not read them; use a broker that delivers retained messages to wildcard subscriptions, such as mosquitto (docs/mqtt.md)"
                )
            }
        } catch {
            logger.warning(
                "could not read back the broker's retained topics; clearing only what this gateway published",
                metadata: ["error": "\(error)"])
            held = published.topics
        }
        // Other parts of the gateway own these topics under the base topic: resync leaves them alone.
        let foreign: Set<String> = [topics.status, topics.health]
        let stale = held.union(published.payloads.keys).filter { desired.payloads[$0] == nil && !foreign.contains($0) }
        for topic in stale.sorted() { _ = send(topic, []) }
        published = desired
        layoutsDue = [:]
        layoutVersions = [:]
        index(parts, homes: current.homes)
        hasSynchronized = true
        logger.info("published the home", metadata: ["topics": "\(sent)", "cleared": "\(stale.count)"])
        // The changes committed while the view was published, after the snapshot, in order: each
        // renders what it touched, as it would have had it come later (at start, every accessory's
        // first values and reachability). A press is in no snapshot: every one is announced.
        let missed = changesWhileSynchronizing.filter { change in
            if case .didUpdateValueForCharacteristic(_, _, _, let type, _) = change.event, type.isEvent { return true }
            return current.version.map { change.version > $0 } ?? true
        }
        changesWhileSynchronizing = []
        isSynchronizing = false
        for change in missed { publish(change) }
    }

    /// Brings the broker in step after `event`, rendering only the parts of the view it touches
    /// (``parts(touchedBy:homes:)``): adding the 500th accessory renders that accessory, its home's
    /// `$layout` and `$discovered`, not the 499 others; a reachability flap renders that accessory at
    /// once and its home's `$layout` later (``renderLayoutLater(_:)``). `snapshot` is the model after
    /// the event.
    package func update(_ event: HomeEvent, _ snapshot: HomeSnapshot) {
        guard hasSynchronized, !isSynchronizing else { return }
        if case .accessoryDidUpdateReachability(let home, let accessory, _) = event {
            refresh(.accessory(accessory), from: snapshot)
            renderLayoutLater(home, version: snapshot.version ?? 0)
            return
        }
        guard let touched = parts(touchedBy: event, homes: snapshot.homes) else {
            apply(snapshot)
            return
        }
        var done: Set<RetainedView.Part> = []
        for part in touched where done.insert(part).inserted { refresh(part, from: snapshot) }
    }

    /// The parts of the view `event` may have changed; nil for "everything".
    private func parts(touchedBy event: HomeEvent, homes: [Home]) -> [RetainedView.Part]? {
        /// Every accessory of `home`, as published and as it is now (added, removed or renamed ones too).
        func accessories(of home: HomeID) -> [RetainedView.Part] {
            let now = homes.first { $0.id == home }.map { Set($0.accessories.map(\.id)) } ?? []
            return now.union(homeAccessories[home] ?? []).sorted().map { .accessory($0) }
        }
        /// Every home's layout (each says whether it is the primary home).
        var everyHome: [RetainedView.Part] {
            Set(homes.map(\.id)).union(homeAccessories.keys).sorted().map { .home($0) }
        }
        /// Accessories that joined or left `home` since it was published: a bridge comes and goes with
        /// its bridged accessories, and HomeKit reports only those.
        func arrivedOrLeft(_ home: HomeID) -> [RetainedView.Part] {
            let now = homes.first { $0.id == home }.map { Set($0.accessories.map(\.id)) } ?? []
            return now.symmetricDifference(homeAccessories[home] ?? []).sorted().map { .accessory($0) }
        }
        switch event {
        case .homeManagerDidUpdateHomes:
            return nil
        case .didAddHome(let home, _), .didRemoveHome(let home, _), .didUpdateNameForHome(let home, _, _):
            return [.global] + everyHome + accessories(of: home)
        case .didUpdatePrimaryHome:
            return [.global] + everyHome
        case .didFindNewAccessory, .didRemoveNewAccessory:
            return [.global]
        case .didAddRoom(let home, _, _), .didAddZone(let home, _, _), .didRemoveZone(let home, _, _),
            .didUpdateNameForZone(let home, _, _, _), .didAddRoomToZone(let home, _, _),
            .didRemoveRoomFromZone(let home, _, _), .didAddActionSet(let home, _, _),
            .didRemoveActionSet(let home, _, _), .didUpdateNameForActionSet(let home, _, _, _),
            .didUpdateActionsForActionSet(let home, _, _), .didAddTrigger(let home, _, _),
            .didRemoveTrigger(let home, _, _),
            .didUpdateNameForTrigger(let home, _, _, _), .didUpdateTrigger(let home, _, _),
            .didUpdateLocationForHome(let home), .didUpdateNextFirings(let home):
            return [.home(home)]
        case .didRemoveRoom(let home, _, _), .didUpdateNameForRoom(let home, _, _, _), .didAddUser(let home, _, _),
            .didRemoveUser(let home, _, _):
            // Accessories' topics name their room; users decide whether Home Assistant sees the home.
            return [.home(home)] + accessories(of: home)
        case .didAddAccessory(let home, let accessory, _, _), .didRemoveAccessory(let home, let accessory, _, _):
            return [.global, .home(home), .accessory(accessory)] + arrivedOrLeft(home)
        case .didUpdateRoomForAccessory(let home, let accessory, _, _),
            .didUpdateNameForAccessory(let home, let accessory, _, _):
            // A bridge's configs and layout name its bridged accessories and theirs name it.
            let bridged = homes.first { $0.id == home }?.accessory(accessory)?.bridgedAccessories ?? []
            return [.home(home), .accessory(accessory)] + bridged.map { .accessory($0) }
        case .accessoryDidUpdateReachability(_, let accessory, _),
            .didUpdateValueForCharacteristic(_, let accessory, _, _, _):
            // A reachability change's home `$layout` follows later (``renderLayoutLater(_:)``): the
            // change carries only this accessory of its home.
            return [.accessory(accessory)]
        case .didExecuteActionSet, .didFireTrigger:
            return []
        }
    }

    /// Renders `home`'s `$layout` once `layoutDelay` has passed, unless a change renders it sooner.
    private func renderLayoutLater(_ home: HomeID, version: UInt64) {
        layoutsDue[home] = max(layoutsDue[home] ?? 0, version)
        guard layoutFlush == nil else { return }
        layoutFlush = timer.schedule(after: layoutDelay) { [weak self] in await self?.renderDueLayouts() }
    }

    /// Renders every `$layout` a reachability change made stale, now (also as the gateway stops).
    package func renderDueLayouts() async {
        if let layoutFlush { timer.cancel(layoutFlush) }
        layoutFlush = nil
        // A reload under way renders every layout itself.
        guard !layoutsDue.isEmpty, hasSynchronized, !isSynchronizing else { return }
        let due = layoutsDue.keys.sorted()
        // A flap that comes while the model is read is due again: the reading may be older.
        layoutsDue = [:]
        let snapshot = await layoutState()
        for id in due { refresh(.home(id), from: snapshot) }
    }

    /// Renders one part from `snapshot`, publishes what changed in it and clears what it no longer has.
    private func refresh(_ part: RetainedView.Part, from snapshot: HomeSnapshot) {
        let desired: [String: [UInt8]]
        switch part {
        case .global:
            desired = RetainedView.globalPayloads(
                homes: snapshot.homes, discovered: snapshot.discovered, topics: topics)
        case .home(let id):
            if let version = snapshot.version {
                // A newer rendering of this layout is out (a late one read the model ahead of the changes).
                if let rendered = layoutVersions[id], rendered > version { return }
                layoutVersions[id] = version
            }
            if let stale = layoutsDue[id], snapshot.version.map({ $0 >= stale }) ?? true { layoutsDue[id] = nil }
            if let home = snapshot.homes.first(where: { $0.id == id }) {
                reportUnmapped(in: home)
                desired = RetainedView.homePayloads(
                    home, topics: topics, homeAssistant: homeAssistant, fragments: &layoutFragments)
                homeAccessories[id] = Set(home.accessories.map(\.id))
            } else {
                desired = [:]
                homeAccessories[id] = nil
            }
        case .accessory(let id):
            if let home = snapshot.homes.first(where: { $0.accessory(id) != nil }), let accessory = home.accessory(id) {
                desired = RetainedView.accessoryPayloads(
                    accessory, in: home, topics: topics, homeAssistant: homeAssistant)
            } else {
                desired = [:]
                layoutFragments.forget(id)
            }
        }
        for (topic, payload) in desired.sorted(by: { $0.key < $1.key }) where published[topic] != payload {
            if send(topic, payload) { published[topic] = payload }
        }
        for (topic, _) in desired { owner[topic] = part }
        for topic in (partTopics[part] ?? []).subtracting(desired.keys).sorted() where owner[topic] == part {
            owner[topic] = nil
            published[topic] = nil
            _ = send(topic, [])
        }
        partTopics[part] = desired.isEmpty ? nil : Set(desired.keys)
    }

    /// Announces every discovery config again and republishes the states Home Assistant reads
    /// (`$ha`, `$reachable`): after Home Assistant said `online` on its status topic.
    func reannounce() {
        guard let homeAssistant else { return }
        let prefix = homeAssistant.discoveryPrefix + "/"
        let configs = published.payloads.filter { $0.key.hasPrefix(prefix) }
        let states = published.payloads.filter { $0.key.hasSuffix("/$ha") || $0.key.hasSuffix("/$reachable") }
        for (topic, payload) in configs.sorted(by: { $0.key < $1.key }) { _ = send(topic, payload) }
        for (topic, payload) in states.sorted(by: { $0.key < $1.key }) { _ = send(topic, payload) }
        logger.info(
            "announced the home to Home Assistant again",
            metadata: ["configs": "\(configs.count)", "states": "\(states.count)"])
    }

    /// Renders the whole view of `snapshot` off the loop (`@concurrent`: on the global executor) and
    /// sends each part as soon as it is rendered: at 10,000 accessories the loop and the broker start
    /// on the first topics a few hundred milliseconds earlier than if the whole view were rendered
    /// first, and the loop goes on serving meanwhile. Returns the parts and how many topics went.
    @concurrent
    private nonisolated func sendWholeView(
        of snapshot: HomeSnapshot, fragments: inout LayoutFragments
    ) async -> (parts: [RetainedView.Part: [String: [UInt8]]], sent: Int) {
        var sent = 0
        let parts = RetainedView.parts(
            homes: snapshot.homes, discovered: snapshot.discovered, topics: topics, homeAssistant: homeAssistant,
            fragments: &fragments
        ) { _, payloads in
            for (topic, payload) in payloads.sorted(by: { $0.key < $1.key }) {
                sent += send(topic, payload) ? 1 : 0
            }
        }
        return (parts, sent)
    }

    /// Logs, once each, the services of `home` that no Home Assistant component fits.
    private func reportUnmapped(in home: Home) {
        guard let homeAssistant, homeAssistant.announces(home) else { return }
        for (accessory, service) in homeAssistant.unmappedServices(in: home)
        where reportedUnmapped.insert("\(accessory.id)/\(service.id)").inserted {
            logger.notice(
                "no Home Assistant component fits this service; it is not announced",
                metadata: [
                    "accessory": "\(accessory.name)", "service": "\(service.name)", "type": "\(service.type.rawValue)",
                ])
        }
    }

    /// Remembers which part each topic of a full view belongs to.
    private func index(_ parts: [RetainedView.Part: [String: [UInt8]]], homes: [Home]) {
        owner = [:]
        owner.reserveCapacity(parts.values.reduce(0) { $0 + $1.count })
        partTopics = [:]
        partTopics.reserveCapacity(parts.count)
        for (part, payloads) in parts {
            partTopics[part] = Set(payloads.keys)
            for topic in payloads.keys { owner[topic] = part }
        }
        homeAccessories = Dictionary(uniqueKeysWithValues: homes.map { ($0.id, Set($0.accessories.map(\.id))) })
    }

    /// Publishes every change of `changes` as it comes, on this actor: one hop per change, and none
    /// back to the manager (a change carries the state it left); the task prefers the loop
    /// (``ExecutorChoice/taskExecutor``). `observe` runs after each.
    package func follow(_ changes: Mailbox<HomeChange>, observe: @Sendable (HomeChange) -> Void) async {
        await preferringChosenExecutor { await followChanges(changes, observe: observe) }
    }

    private func followChanges(_ changes: Mailbox<HomeChange>, observe: @Sendable (HomeChange) -> Void) async {
        for await change in changes {
            publish(change)
            observe(change)
            // On the client's loop: after a change that rendered more than one accessory's topics
            // (a `$layout` is megabytes at 10,000 accessories), the loop writes it and reads the
            // broker's acknowledgements, which free the client's copies, before the next change.
            // (A change without `discovered` is a value or reachability change: one accessory.)
            if change.discovered != nil, let loop = client.loop, loop.isCurrent { await loop.nextPass() }
        }
    }

    /// Brings the broker in step after one change: a value renders the topics it can change, anything
    /// else the parts of the view it touches.
    package func publish(_ change: HomeChange) {
        // Until the first reload there is nothing to diff against, and it reads the model after
        // this change; during a reload the change waits for its end.
        guard hasSynchronized, !isSynchronizing else {
            if isSynchronizing { changesWhileSynchronizing.append(change) }
            return
        }
        if case .didUpdateValueForCharacteristic(let homeID, let accessory, let service, let type, let value) =
            change.event
        {
            if let home = change.homes.first(where: { $0.id == homeID }) {
                update(value, of: type, service: service, accessory: accessory, in: home)
            }
        } else {
            // Without the discovered accessories only for reachability, whose parts do not show them.
            update(
                change.event,
                HomeSnapshot(homes: change.homes, discovered: change.discovered ?? [], version: change.version))
        }
    }

    /// Publishes what a new value of one characteristic changed: its topic, `$state` and `$ha` states.
    /// An event (a button's press) goes only on its value topic, not retained: a client that
    /// subscribes later must not see a press that happened before. `$state` does not list it.
    ///
    /// A change committed with others may carry a later value of this characteristic: the event's own
    /// value is laid over the accessory, so every value is passed on in order. (Over the accessory,
    /// not the home: a changed copy of the home's accessories costs a retain and a release of each.)
    private func update(
        _ value: CharacteristicValue, of type: CharacteristicType, service: ServiceID, accessory: AccessoryID,
        in home: Home
    ) {
        guard var snapshot = home.accessory(accessory) else { return }
        snapshot.setValue(value, service: service, type: type)
        let payload = RetainedView.valuePayload(type, service: service, of: snapshot, in: home, topics: topics)
        if type.isEvent {
            if let (topic, payload) = payload, send(topic, payload, retain: false) { client.loop?.writeQueuedNow() }
            return
        }
        // The value leaves the loop at once, before the states are rendered and not after the rest of
        // its pass (a command's round trip ends when its value arrives).
        if let payload, send(CollectionOfOne(payload), of: accessory) { client.loop?.writeQueuedNow() }
        send(
            RetainedView.statePayloads(of: snapshot, in: home, topics: topics, homeAssistant: homeAssistant),
            of: accessory)
    }

    /// Sends those of an accessory's `payloads` that differ from what is published, in their order;
    /// whether it sent any.
    @discardableResult
    private func send(_ payloads: some Sequence<(topic: String, payload: [UInt8])>, of accessory: AccessoryID) -> Bool {
        let part = RetainedView.Part.accessory(accessory)
        var sentAny = false
        for (topic, payload) in payloads {
            let before = published.updateValue(payload, forTopic: topic)
            guard before != payload else { continue }
            guard send(topic, payload) else {
                published[topic] = before
                continue
            }
            sentAny = true
            // A value's topics are the accessory's already: only a new topic is indexed.
            if owner.updateValue(part, forKey: topic) != part { partTopics[part, default: []].insert(topic) }
        }
        return sentAny
    }

    /// Everything again: renders the whole view and sends the difference.
    private func apply(_ snapshot: HomeSnapshot) {
        layoutsDue = [:]
        for home in snapshot.homes { reportUnmapped(in: home) }
        layoutFragments.keep(only: snapshot.homes)
        let parts = RetainedView.parts(
            homes: snapshot.homes, discovered: snapshot.discovered, topics: topics, homeAssistant: homeAssistant,
            fragments: &layoutFragments)
        let desired = RetainedView(merging: parts)
        let (publish, clear) = desired.changes(from: published)
        for (topic, payload) in publish { _ = send(topic, payload) }
        for topic in clear { _ = send(topic, []) }
        published = desired
        index(parts, homes: snapshot.homes)
    }

    /// Queues one message, QoS 1 and retained unless told (a press, `$events`); the client delivers
    /// a QoS 1 message across reconnects too. A clearing of a command topic is noted for its echo
    /// (MQTT 3.1.1). A QoS 0 message made while there is no connection is gone, as QoS 0 says
    /// (docs/mqtt.md): that is no error to log for every change a broker outage brings.
    nonisolated func send(_ topic: String, _ payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true)
        -> Bool
    {
        if payload.isEmpty, let echoes, topics.isCommandTopic(topic) { echoes.expect(topic) }
        do {
            try client.send(topic, payload: payload, qos: qos, retain: retain)
            statistics.sentMessage()
            return true
        } catch let error as MQTTError where error.code == .notConnected && qos == .atMostOnce {
            return false
        } catch {
            logger.error("could not publish", metadata: ["topic": "\(topic)", "error": "\(error)"])
            return false
        }
    }
}
