import Broker
import Foundation
import Gateway
import HomeModel
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The homegate process killed with SIGKILL at random moments while it writes values and changes the
/// layout (docs/reliability.md, scenario 2). `HOMEGATE_KILL_ROUNDS` overrides the 50 rounds.
@Suite("SIGKILL of the homegate process during writes and layout changes", .serialized, .timeLimit(.minutes(10)))
struct GatewayKillTests {
    static let rounds = Int(ProcessInfo.processInfo.environment["HOMEGATE_KILL_ROUNDS"] ?? "") ?? 50
    static let brightness = "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness/set/owner"

    /// What the owner's commands of one round achieved before the kill.
    struct Round {
        var ackedRooms: [String] = []
        var ackedRenames: [(from: String, to: String)] = []
        var lastAckedBrightness: Int?
        /// The last brightness acknowledged before a later layout change was acknowledged: that change
        /// wrote it too, so it is durable even within the value commit window.
        var durableBrightness: Int?
        var sentBrightness: [Int] = []
    }

    @Test(
        "each kill leaves a sound database with every acknowledged layout change and every value a layout change saw, and the restarted gateway publishes exactly it"
    )
    func killedRepeatedly() async throws {
        var random = SystemRandomNumberGenerator()
        try await withBroker { broker in
            try await withTemporaryDirectory { directory in
                let arguments = try runArguments(
                    port: broker.port, clientID: "gateway-under-test", directory: directory, devices: true)
                let database = "\(directory)/data/home.sqlite"
                let topics = Topics()
                var restarted = false
                var allRooms: [String] = []
                for round in 0..<Self.rounds {
                    let gateway = try ChildProcess(
                        try homegateExecutable(), arguments, outputFile: "\(directory)/homegate-\(round).log")
                    // After a restart the broker holds exactly what the database holds (which may have
                    // moved on from the kill: the broker redelivers commands the killed gateway had not
                    // acknowledged, QoS 1's at-least-once)
                    if restarted {
                        try await waitForRetainedTopics(port: broker.port, account: nil, topics: topics) {
                            (try? await Self.retainedTopics(ofDatabase: database, topics: topics)) ?? []
                        }
                    }
                    restarted = true
                    let owner: Account
                    do {
                        owner = try await Self.connectWhenOnline(port: broker.port)
                    } catch {
                        let log =
                            (try? String(contentsOfFile: "\(directory)/homegate-\(round).log", encoding: .utf8)) ?? ""
                        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory).sorted()) ?? []
                        Issue.record(
                            "round \(round): running \(gateway.isRunning), status \(String(describing: gateway.exitStatus)), files \(files), log:\n\(log.suffix(3000))\nbroker:\n\(broker.log.suffix(1500))"
                        )
                        throw error
                    }

                    // Changes flow until a random moment, then the process is killed mid-stream
                    let killAt = ContinuousClock.now + .milliseconds(Int.random(in: 50...400, using: &random))
                    var state = Round()
                    var step = 0
                    let work = Task { [state] in
                        var state = state
                        var step = 0
                        while !Task.isCancelled {
                            step += 1
                            let room = "Room \(round) \(step)"
                            switch step % 3 {
                            case 0:
                                let value = (round * 7 + step) % 101
                                state.sentBrightness.append(value)
                                if (try? await owner.command(Self.brightness, "\(value)"))?.isOK == true {
                                    state.lastAckedBrightness = value
                                }
                            case 1:
                                if (try? await owner.request("addRoom", #"{"home":"Main House","name":"\#(room)"}"#))?
                                    .isOK
                                    == true
                                {
                                    state.ackedRooms.append(room)
                                    state.durableBrightness = state.lastAckedBrightness
                                }
                            default:
                                guard let last = state.ackedRooms.last else { continue }
                                let renamed = "Renamed \(round) \(step)"
                                let body = #"{"home":"Main House","room":"\#(last)","name":"\#(renamed)"}"#
                                if (try? await owner.request("renameRoom", body))?.isOK == true {
                                    state.ackedRooms.removeLast()
                                    state.ackedRenames.append((last, renamed))
                                    state.durableBrightness = state.lastAckedBrightness
                                }
                            }
                            if ContinuousClock.now >= killAt { break }
                        }
                        return (state, step)
                    }
                    (state, step) = await work.value
                    gateway.send(SIGKILL)
                    await gateway.waitForExit()
                    await owner.disconnect()

                    // The database is sound and holds every acknowledged change
                    let store = try HomeDatabase.open(atPath: database)
                    #expect(try store.integrityCheck() == ["ok"], "round \(round)")
                    let manager = try HomeManager(database: store)
                    let homes = await manager.allHomes()
                    let home = try #require(homes.first { $0.name == "Main House" })
                    let names = Set(home.rooms.map(\.name))
                    for room in state.ackedRooms {
                        #expect(
                            names.contains(room) || names.contains { $0.hasPrefix("Renamed \(round)") },
                            "round \(round): \(room) lost")
                    }
                    for (_, to) in state.ackedRenames {
                        #expect(names.contains(to), "round \(round): rename to \(to) lost")
                    }
                    let lamp = home.accessories.first { $0.name == "Floor Lamp" }?.services.first?
                        .characteristics.first { $0.type == .brightness }?.value?.intValue
                    // Device values are group-committed (data.valueCommitWindow): the last ones may be lost
                    // by a kill, never one that a later layout change wrote along.
                    if let durable = state.durableBrightness, let lamp {
                        let after = state.sentBrightness.drop { $0 != durable }
                        #expect(after.contains(lamp), "round \(round): brightness \(lamp), durable \(durable)")
                    }
                    allRooms += state.ackedRooms
                    await manager.shutdown()
                    _ = step
                }
                // The last restart, checked like the others
                let gateway = try ChildProcess(
                    try homegateExecutable(), arguments, outputFile: "\(directory)/homegate-last.log")
                defer { gateway.send(SIGKILL) }
                try await waitForRetainedTopics(port: broker.port, account: nil, topics: topics) {
                    (try? await Self.retainedTopics(ofDatabase: database, topics: topics)) ?? []
                }
                print(
                    "gateway-kill: \(Self.rounds) SIGKILLs, \(allRooms.count) acknowledged rooms, database sound each time"
                )
            }
        }
    }

    /// The retained topics a gateway publishes for the database at `path`, read beside the running gateway.
    static func retainedTopics(ofDatabase path: String, topics: Topics) async throws -> Set<String> {
        let manager = try HomeManager(database: try HomeDatabase.open(atPath: path))
        let view = RetainedView(
            homes: await manager.allHomes(), discovered: await manager.discoveredAccessories(), topics: topics)
        await manager.shutdown()
        return view.topics.union([topics.status, topics.health])
    }

    /// Connects as owner once the gateway answers requests.
    static func connectWhenOnline(port: Int, within timeout: Duration = .seconds(60)) async throws -> Account {
        let owner = try await Account.connect("owner", port: port)
        do {
            try await eventually("the gateway answering", timeout: timeout) {
                let answer = try? await owner.command(
                    "homegate/$request/owner/homes", bytes: Array("{}".utf8), within: .seconds(1))
                return answer?.isOK == true
            }
            return owner
        } catch {
            await owner.disconnect()
            throw error
        }
    }
}
