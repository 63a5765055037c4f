import Foundation
import HAPModel
import HomeModel
import JSON
import Testing

@testable import HAP

/// The mapping of a device's `/accessories` into the model, on the body HAP-python builds for
/// scripts/hap-accessory.py's bridge (Fixtures/bridge-accessories.json beside this file, made by
/// scripts/dump-hap-accessories.py).
@Suite("HAP's accessory database in the home model")
struct HAPAccessoryDatabaseTests {
    static let fixture: [UInt8] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/bridge-accessories.json")
        return Array(try! Data(contentsOf: url))
    }()
    static let device = "1A:2B:3C:4D:5E:6F"

    @Test("a bridge and its three accessories, with names, ids, services and full metadata")
    func bridge() throws {
        let database = try HAPAccessoryDatabase(json: Self.fixture, deviceID: Self.device)
        let accessories = database.accessories
        #expect(accessories.map(\.name) == ["Test Bridge", "Light", "Switch", "Temperature"])
        #expect(
            accessories.map(\.id.rawValue) == [Self.device, "\(Self.device):2", "\(Self.device):3", "\(Self.device):4"])
        let bridge = accessories[0]
        #expect(bridge.category == .bridge && bridge.bridgedAccessories == accessories.dropFirst().map(\.id))
        #expect(accessories.dropFirst().allSatisfy { $0.bridge == bridge.id })
        let light = accessories[1]
        #expect(light.category == .lightbulb)
        let bulb = try #require(light.services.first { $0.type == .lightbulb })
        #expect(bulb.name == "Lightbulb")
        let brightness = try #require(bulb.characteristic(.brightness))
        #expect(brightness.metadata.format == .int && brightness.metadata.unit == .percentage)
        #expect(brightness.metadata.minimumValue == 0 && brightness.metadata.maximumValue == 100)
        #expect(brightness.metadata.stepValue == 1)
        #expect(brightness.metadata.permissions == [.read, .write, .notify])
        #expect(bulb.characteristic(.on)?.value == .bool(false))
        let sensor = try #require(accessories[3].services.first { $0.type == .temperatureSensor })
        let temperature = try #require(sensor.characteristic(.currentTemperature))
        #expect(temperature.value == .float(21.5) && temperature.metadata.unit == .celsius)
        #expect(temperature.metadata.permissions == [.read, .notify])
        let information = try #require(light.services.first { $0.type.rawValue == "AccessoryInformation" })
        #expect(information.name == "AccessoryInformation", "the information service's Name names the accessory")
        #expect(information.characteristic(.identify)?.metadata.permissions == [.write])
    }

    @Test("addresses for reads, writes and events, and values read by format")
    func addresses() throws {
        let database = try HAPAccessoryDatabase(json: Self.fixture, deviceID: Self.device)
        let light = AccessoryID("\(Self.device):2")
        let on = try database.address(of: ValueKey(accessory: light, service: "8", characteristic: .on))
        #expect(on == HAPAddress(aid: 2, iid: 9))
        #expect(database.eventAddresses.contains(on) && !database.eventAddresses.contains(HAPAddress(aid: 2, iid: 2)))
        #expect(database.identifyCharacteristic(of: light)?.1 == .identify)
        // An event's entries: one known, one at an address the database does not know.
        let event = Array(#"{"characteristics":[{"aid":2,"iid":9,"value":1},{"aid":9,"iid":9,"value":1}]}"#.utf8)
        let updates = database.values(in: event)
        #expect(updates.count == 1, "an entry at an unknown address is left out")
        let update = try #require(updates.first)
        #expect(update.entry.accessory == light && update.entry.type == .on, "\(update)")
        #expect(update.address == on && update.value == .bool(true), "0/1 for a bool")
        let read = Array(#"{"characteristics":[{"aid":4,"iid":9,"value":22},{"aid":2,"iid":9}]}"#.utf8)
        #expect(database.values(in: read).map(\.value) == [.float(22)], "an entry without a value is left out")
        #expect(database.json(.bool(true), at: on) == .bool(true))
    }

    @Test("types in short and full form, any case; an unknown type kept under its full UUID")
    func types() {
        #expect(HAPTypes.characteristic("25") == .on)
        #expect(HAPTypes.characteristic("00000025-0000-1000-8000-0026BB765291") == .on)
        #expect(
            HAPTypes.characteristic("0000008a-0000-1000-8000-0026bb765291").rawValue
                == "0000008A-0000-1000-8000-0026BB765291")
        #expect(HAPTypes.service("8a") == .temperatureSensor)
        #expect(
            HAPTypes.service("E863F007-079E-48FF-8F27-9C2605A29F52").rawValue == "E863F007-079E-48FF-8F27-9C2605A29F52")
        #expect(HAPTypes.characteristic("ABC").rawValue == "00000ABC-0000-1000-8000-0026BB765291")
    }

    /// Every Apple type HAP-python knows has its name, the ones issue 36 found as UUIDs included.
    @Test("every type of the HAP specification is named, not left as a UUID")
    func everyAppleTypeNamed() throws {
        let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/venv/lib")
        let python = try #require(
            try FileManager.default.contentsOfDirectory(atPath: resources.path).first { $0.hasPrefix("python3") },
            "HAP-python is not installed: run make test")
        let folder = resources.appendingPathComponent("\(python)/site-packages/pyhap/resources")
        for (file, name) in [
            ("services.json", { HAPTypes.service($0).rawValue }),
            ("characteristics.json", { HAPTypes.characteristic($0).rawValue }),
        ] as [(String, (String) -> String)] {
            guard case .object(let types) = try JSON.parse(Array(Data(contentsOf: folder.appendingPathComponent(file))))
            else { Issue.record("\(file) is not an object"); continue }
            #expect(types.count > 40)
            for (typeName, entry) in types {
                let uuid = try #require(entry["UUID"]?.stringValue)
                guard uuid.hasSuffix(HAPTypes.appleSuffix) else { continue }
                let expected = ["BatteryService": "Battery", "TelevisionSpeaker": "Speaker"][typeName] ?? typeName
                #expect(name(uuid) == expected, "\(file): \(uuid)")
            }
        }
        for (uuid, expected) in [
            ("28", "RotationDirection"), ("12", "HeatingThresholdTemperature"), ("B1", "CurrentHeaterCoolerState"),
            ("B2", "TargetHeaterCoolerState"), ("66", "SecuritySystemCurrentState"), ("95", "AirQuality"),
            ("C6", "PM2.5Density"), ("D2", "InUse"), ("D5", "ValveType"), ("119", "Volume"), ("11A", "Mute"),
        ] {
            #expect(HAPTypes.characteristic(uuid).rawValue == expected)
        }
        #expect(HAPTypes.service("113").rawValue == "Speaker")
    }

    @Test("bodies that are not an accessory database are typed errors, never a crash")
    func malformed() {
        for body in [
            "", "[]", "{}", #"{"accessories":[{"aid":1}]}"#, #"{"accessories":[{"aid":1,"services":[{"iid":1}]}]}"#,
            "{\"accessories\":",
        ] {
            #expect(throws: (any Error).self, "\(body)") {
                _ = try HAPAccessoryDatabase(json: Array(body.utf8), deviceID: Self.device)
            }
        }
    }

    @Test("HAP status codes as the model's errors, from a 207 multi-status answer")
    func statuses() {
        let expected: [(Int, HomeError.Code)] = [
            (-70401, .insufficientPrivileges), (-70402, .communicationFailure), (-70404, .readOnlyCharacteristic),
            (-70405, .writeOnlyCharacteristic), (-70408, .operationTimedOut), (-70409, .notFound),
            (-70410, .invalidValueType),
        ]
        for (status, code) in expected {
            let body = Array(
                #"{"characteristics":[{"aid":2,"iid":9,"status":0},{"aid":2,"iid":10,"status":\#(status)}]}"#.utf8)
            #expect(throws: HomeError.self) { try HAPStatus.check(207, body: body, accessory: "Light") }
            do {
                try HAPStatus.check(207, body: body, accessory: "Light")
            } catch {
                #expect(error.code == code, "\(status)")
            }
        }
        #expect(throws: Never.self) { try HAPStatus.check(204, body: [], accessory: "Light") }
        #expect(throws: HomeError.self) { try HAPStatus.check(500, body: [], accessory: "Light") }
    }
}
