// The writer the SIGKILL test kills: it changes the home database as fast as it can and prints one
// line per acknowledged change, so the test knows exactly what must survive.
//
//   crash-writer <database path> [value commit window in ms]
//
// Lines: `room N` (room "Room N" added), `rename N` (it became "Renamed N"), `value N` (the Counter
// characteristic was written N).
import Foundation
import HomeModel

/// A one-accessory driver whose Counter characteristic accepts any write. It reports no value of its
/// own, so attaching it on restart does not overwrite the stored one.
struct CounterDriver: AccessoryDriver {
    let name = "counter"
    let updates = AsyncStream<DriverUpdate> { _ in }
    func start() async throws {}
    func stop() async {}
    func accessories() async -> [Accessory] {
        let counter = Characteristic(
            type: "Counter",
            metadata: CharacteristicMetadata(
                format: .uint32, minimumValue: 0, maximumValue: 4_000_000_000, stepValue: 1,
                permissions: [.read, .write, .notify]),
            value: nil)
        return [
            Accessory(
                id: "counter", name: "Counter", category: .other,
                services: [Service(id: "main", type: "Counter", name: "Counter", characteristics: [counter])])
        ]
    }
    func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        .int(0)
    }
    func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {}
    func identify(_ accessory: AccessoryID) async throws {}
}

func acknowledge(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let home = "Crash Home"
let account = "writer"
let window = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) : nil
let manager = try HomeManager(
    database: try HomeDatabase.open(atPath: CommandLine.arguments[1]),
    valueCommitWindow: window.map { .milliseconds($0) } ?? .milliseconds(100))
try await manager.attach(CounterDriver())
if await manager.homes(for: account).isEmpty {
    try await manager.edit(.addHome(name: home), account: account)
}
if try await manager.home(home, account: account).accessory("counter") == nil {
    try await manager.edit(.addAccessory(home: home, id: "counter"), account: account)
}
let counter = CharacteristicReference(accessory: "Counter", service: "Counter", characteristic: "Counter")
var n = try await manager.home(home, account: account).rooms.count
while true {
    n += 1
    try await manager.edit(.addRoom(home: home, name: "Room \(n)"), account: account)
    acknowledge("room \(n)")
    if n % 3 == 0 {
        try await manager.edit(.renameRoom(home: home, room: "Room \(n)", name: "Renamed \(n)"), account: account)
        acknowledge("rename \(n)")
    }
    try await manager.writeValues([ActionRequest(counter, .int(n))], home: home, account: account)
    acknowledge("value \(n)")
}
