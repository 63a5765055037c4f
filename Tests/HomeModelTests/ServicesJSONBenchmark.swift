import Foundation
import Testing

@testable import HomeModel

/// How long the services column takes to write and read for a home of 10,000 accessories (what a
/// start reads, and the most a group commit writes). Off by default; run it with
/// `HOMEGATE_BENCH=1 swift test --skip-build --filter ServicesJSONBenchmark`.
@Suite("Services column benchmark")
struct ServicesJSONBenchmark {
    static let enabled = ProcessInfo.processInfo.environment["HOMEGATE_BENCH"] != nil

    /// A thermostat or a colour light with its accessory information, values set.
    static func services(_ index: Int) -> [Service] {
        let information = Service(
            id: "info", type: ServiceType(rawValue: "AccessoryInformation"), name: "Device \(index)",
            characteristics: [
                .standard(.name, .string("Device \(index)")), .standard(.identify, nil),
            ])
        let main: Service
        if index.isMultiple(of: 2) {
            main = Service(
                id: "light", type: .lightbulb, name: "Light \(index)",
                characteristics: [
                    .standard(.on, .bool(true)), .standard(.brightness, .int(index % 100)),
                    .standard(.hue, .float(210.5)),
                    .standard(.saturation, .float(40)), .standard(.colorTemperature, .int(300)),
                ])
        } else {
            main = Service(
                id: "thermostat", type: .thermostat, name: "Thermostat \(index)",
                characteristics: [
                    .standard(.currentTemperature, .float(21.25)), .standard(.targetTemperature, .float(22)),
                    .standard(.currentHeatingCoolingState, .int(1)), .standard(.targetHeatingCoolingState, .int(3)),
                    .standard(.temperatureDisplayUnits, .int(0)),
                ])
        }
        return [information, main]
    }

    @Test("encode and decode 10,000 accessories' services", .enabled(if: enabled))
    func tenThousandAccessories() throws {
        let home = (0..<10_000).map(Self.services)
        let clock = ContinuousClock()
        var encodeTimes: [Duration] = []
        var decodeTimes: [Duration] = []
        var texts: [String] = []
        for _ in 0..<5 {
            encodeTimes.append(clock.measure { texts = home.map(ServicesJSON.encode) })
            var read: [[Service]] = []
            decodeTimes.append(try clock.measure { read = try texts.map { try ServicesJSON.decode($0) } })
            #expect(read == home)
        }
        let bytes = texts.reduce(0) { $0 + $1.utf8.count }
        print(
            "ServicesJSON, 10,000 accessories (\(bytes) bytes): encode median \(encodeTimes.sorted()[2]),"
                + " decode median \(decodeTimes.sorted()[2]); all encode \(encodeTimes), decode \(decodeTimes)")
    }
}
