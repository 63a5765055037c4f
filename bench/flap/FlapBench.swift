// The cost of a reachability flap against the size of the home (issue 15: "a reachability flap
// costs work for that accessory only"). For each size, a home of virtual switches (bench/make-home.sh)
// is built in memory and published by the gateway's own publisher to a private mosquitto; then one
// accessory goes unreachable and reachable again, `--flaps` times, each waited for until the publisher
// has taken it in (the home's `$layout` follows once per second, and the last one is rendered before
// the clock stops). The sizes are measured `--rounds` times, interleaved (100, 1,000, 10,000, 100, ...):
// one round's CPU per flap at 100 accessories read 19 µs in one run and 35 µs in the next two on this
// host, so the ratio takes the median of the rounds. Prints one JSON line: per size, the medians of
// the CPU time (this process: the model, the publisher, libmosquitto's thread) and the wall time per
// flap, the CPU of one late `$layout`, and each round's CPU per flap.
//
// usage: flap-bench --root REPOSITORY [--sizes 100,1000,10000] [--flaps 1000] [--rounds 1]

import Broker
import Foundation
import Gateway
import HomeModel
import Logging
import MQTT
import VirtualDevices

struct Options {
    var root = "."
    var sizes = [100, 1_000, 10_000]
    var flaps = 1_000
    var rounds = 1

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            let value = rest.popFirst() ?? ""
            switch flag {
            case "--root": root = value
            case "--sizes": sizes = value.split(separator: ",").compactMap { Int($0) }
            case "--flaps": flaps = Int(value) ?? flaps
            case "--rounds": rounds = max(1, Int(value) ?? rounds)
            default:
                fatalError("usage: flap-bench --root REPOSITORY [--sizes 100,1000,10000] [--flaps 1000] [--rounds 1]")
            }
        }
    }
}

/// CPU time of this process so far (user + system), in microseconds.
func cpuMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func micros(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
    return micros(usage.ru_utime) + micros(usage.ru_stime)
}

func homeYAML(root: String, accessories: Int) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["\(root)/bench/make-home.sh", "\(accessories)", "20"]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// One size: the CPU and wall time per flap, and the CPU of one late `$layout` rendering, in microseconds.
func measure(accessories: Int, flaps: Int, root: String, broker: MosquittoBroker) async throws -> (
    cpu: Double, wall: Double, layout: Double
) {
    var logger = Logger(label: "flap-bench")
    logger.logLevel = .error
    let demo = try DemoHome.parse(try homeYAML(root: root, accessories: accessories))
    let manager = try HomeManager(database: .inMemory(), logger: logger)
    let driver = VirtualDriver(devices: demo.devices, tick: .seconds(86_400))
    try await manager.attach(driver)
    _ = try await manager.building { try await demo.seed($0) }

    var configuration = MQTTConfiguration(port: broker.port, clientID: "flap-bench-\(accessories)")
    configuration.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
    let client = try MQTTClient(configuration, logger: logger)
    try await client.connect()
    defer { Task { await client.disconnect() } }
    let publisher = RetainedPublisher(
        client: client, topics: Topics(base: "flap\(accessories)"), logger: logger,
        layoutState: { await HomeSnapshot(of: manager) }, readBack: { [] })
    let flapping = AccessoryID("switch-\(accessories / 2 + 1)")
    // The reachability the publisher has taken in for the flapping accessory, change by change.
    let (taken, takenContinuation) = AsyncStream<Bool>.makeStream()
    let following = Task {
        await publisher.follow(await manager.changes()) { change in
            if case .accessoryDidUpdateReachability(_, flapping, let reachable) = change.event {
                takenContinuation.yield(reachable)
            }
        }
    }
    defer { following.cancel() }
    await publisher.synchronize { await HomeSnapshot(of: manager) }

    var reachability = taken.makeAsyncIterator()
    /// Flaps the middle accessory once and waits until the publisher has taken the change in.
    func flap(_ reachable: Bool) async {
        await driver.setReachable(reachable, flapping)
        while let seen = await reachability.next(), seen != reachable {}
    }
    // Warm up: the first flaps render the accessory's layout entry for the first time.
    for index in 0..<10 { await flap(index % 2 == 1) }
    let cpuBefore = cpuMicroseconds()
    let clock = ContinuousClock()
    let started = clock.now
    for index in 0..<flaps { await flap(index % 2 == 1) }
    // The home's `$layout` follows reachability a moment later, once for the flaps of that moment:
    // the one still due is rendered now and counted.
    await publisher.renderDueLayouts()
    let elapsed = clock.now - started
    let cpu = cpuMicroseconds() - cpuBefore
    let wall = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
    // What one late rendering of the home's `$layout` costs, on its own.
    await flap(flaps % 2 == 1)
    let layoutBefore = cpuMicroseconds()
    await publisher.renderDueLayouts()
    let layout = cpuMicroseconds() - layoutBefore
    await manager.shutdown()
    return (cpu / Double(flaps), wall / Double(flaps), layout)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let options = Options(CommandLine.arguments)
let broker = try await MosquittoBroker.start()
var measured: [Int: [(cpu: Double, wall: Double, layout: Double)]] = [:]
for round in 1...options.rounds {
    for size in options.sizes {
        let figures = try await measure(accessories: size, flaps: options.flaps, root: options.root, broker: broker)
        measured[size, default: []].append(figures)
        FileHandle.standardError.write(
            Data(
                ("flap-bench: round \(round), \(size) accessories: \(Int(figures.cpu)) µs CPU, "
                    + "\(Int(figures.wall)) µs per flap; layout \(Int(figures.layout)) µs\n").utf8))
    }
}
await broker.stop(removingFiles: true)
let figures = options.sizes.map { size in
    let rounds = measured[size] ?? []
    return "{\"accessories\":\(size),\"cpu_us\":\(String(format: "%.1f", median(rounds.map(\.cpu)))),"
        + "\"wall_us\":\(String(format: "%.1f", median(rounds.map(\.wall)))),"
        + "\"layout_us\":\(String(format: "%.0f", median(rounds.map(\.layout)))),"
        + "\"cpu_rounds_us\":\"\(rounds.map { String(format: "%.1f", $0.cpu) }.joined(separator: " "))\"}"
}
print("{\"flaps\":\(options.flaps),\"rounds\":\(options.rounds),\"sizes\":[\(figures.joined(separator: ","))]}")
