import Dispatch
import Foundation
import FuzzSupport
import Gateway
import HomeModel
import JSON
import MQTT
import Synchronization
import VirtualDevices
import Zigbee2MQTT

/// The command topics a fuzz input is sent to; its first byte picks one, the rest is the payload.
let targets = [
    "homegate/Main House/Living Room/Floor Lamp/Lightbulb/Brightness/set/guest",
    "homegate/Main House/Living Room/Floor Lamp/Lightbulb/On/set/guest",
    "homegate/Main House/Hallway/Thermostat/Thermostat/TargetTemperature/set/guest",
    "homegate/Main House/Hallway/Thermostat/Thermostat/TargetHeatingCoolingState/set/guest",
    "homegate/Main House/Living Room/Floor Lamp/$set/guest",
    "homegate/Main House/Hallway/Thermostat/$set/guest",
    "homegate/$request/owner/addRoom",
    "homegate/$request/owner/renameRoom",
    "homegate/$request/owner/addActionSet",
    "homegate/$request/owner/addUser",
    "homegate/$request/guest/read",
    "homegate/$request/guest/homes",
]

/// Waits for `body` on the cooperative pool; libFuzzer calls the target synchronously.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

/// The command router on the demo home in an in-memory database, without a rate limit.
let router: CommandRouter = blocking {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Config/demo-home.yml")
    do {
        let demo = try DemoHome.load(contentsOf: file)
        let manager = try HomeManager(database: .inMemory(), driverTimeout: .seconds(1))
        try await manager.attach(VirtualDriver(devices: demo.devices))
        _ = try await demo.seed(manager)
        return CommandRouter(manager: manager, topics: Topics(), defaultAccount: nil, rateLimit: nil)
    } catch {
        fatalError("cannot build the demo home from \(file.path): \(error)")
    }
}

/// zigbee2mqtt's devices as the driver maps them (the recorded bridge/devices), for state payloads.
let zigbeeDevices: [MappedDevice] = {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "Sources/Zigbee2MQTTStandIn/Recordings/bridge-devices-z2m-test-startup.wire.txt")
    guard let bytes = FileManager.default.contents(atPath: file.path),
        let list = try? DeviceDescription.list(Array(bytes))
    else { fatalError("cannot read \(file.path)") }
    return list.entries.map(ExposeMapping.map)
}()

/// zigbee2mqtt's payloads: any bytes as a `bridge/devices` (mapped when they parse) and as every
/// recorded device's state; every value taken passes its characteristic's own validation.
func checkZigbee(_ bytes: [UInt8]) {
    if let list = try? DeviceDescription.list(bytes) {
        for device in list.entries { _ = ExposeMapping.map(device) }
    }
    guard let state = try? JSON.parse(bytes) else { return }
    for device in zigbeeDevices {
        for reported in device.values(in: state).values {
            let metadata = device.accessory.characteristic(reported.service, reported.characteristic)!.metadata
            precondition((try? metadata.validate(reported.value)) == reported.value, "\(reported) escapes \(metadata)")
        }
    }
}

/// The payload parser: any bytes as JSON (what parses serializes to text that parses back to the same
/// text), and as the
/// payload of a command or request, which is handled without trapping and, when it fails, answered
/// with a code the model knows.
func check(_ bytes: [UInt8]) {
    if let json = try? JSON.parse(bytes) {
        let again = try? JSON.parse(json.bytes)
        precondition(again?.serialized == json.serialized, "round trip changed \(json.serialized)")
    }
    checkZigbee(bytes)
    guard let selector = bytes.first else { return }
    let message = MQTTMessage(
        topic: targets[Int(selector) % targets.count], payload: Array(bytes.dropFirst()), qos: .atLeastOnce)
    let handling = blocking { await router.handle(message) }
    if case .failed(let code) = handling.outcome {
        precondition(HomeError.Code(rawValue: code) != nil, "unknown code \(code)")
        let answer = handling.answer!.payload
        precondition(answer["ok"] == .bool(false) && answer["code"] == .string(code))
    }
}

#if FUZZING
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    @_cdecl("fuzz_payload_main")
    func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        FuzzDriver.run(argc, argv, check)
    }
#else
    @main
    enum Replay {
        static func main() { FuzzReplay.main(check) }
    }
#endif
