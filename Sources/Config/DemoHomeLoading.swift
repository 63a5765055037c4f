import Foundation
import Gateway
import HomeModel
import VirtualDevices
import Yams

/// Reads a demo-home file (`accessories.virtual`) the way the config is read: every problem with
/// the file, line and column and a fix, instead of a decoder's path.
package enum DemoHomeLoading {
    /// Loads and checks the file at `file`.
    package static func load(file: String) throws(ConfigurationErrors) -> DemoHome {
        let yaml = try ConfigurationErrors.text(
            of: file, "the demo-home file", fix: "correct 'accessories.virtual'")
        let root = try GatewayConfiguration.compose(yaml, file: file)
        guard let root else {
            throw ConfigurationErrors([
                ConfigurationError(
                    .invalidValue, at: .wholeFile(file), "the demo-home file is empty",
                    fix: "compare with Config/demo-home.yml")
            ])
        }
        let home: DemoHome
        do {
            home = try DemoHome.decode(root)
        } catch let error as DecodingError {
            throw ConfigurationErrors([decodingProblem(error, root: root, file: file)])
        } catch {
            throw ConfigurationErrors([
                ConfigurationError(.syntax, at: .wholeFile(file), "\(error)", fix: "compare with Config/demo-home.yml")
            ])
        }
        let problems = Self.problems(home, root: root, file: file)
        guard problems.isEmpty else { throw ConfigurationErrors(problems) }
        return home
    }

    private static func decodingProblem(_ error: DecodingError, root: Node?, file: String) -> ConfigurationError {
        let fix = "compare with Config/demo-home.yml, whose header lists every key"
        switch error {
        case .keyNotFound(let key, let context):
            return ConfigurationError(
                .invalidValue, at: .of(context.codingPath, in: root, file: file),
                "'\(context.codingPath.dotted)' has no '\(key.stringValue)'", fix: "add '\(key.stringValue):' there")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return ConfigurationError(
                .wrongType, at: .of(context.codingPath, in: root, file: file),
                "'\(context.codingPath.dotted)': \(context.debugDescription)", fix: fix)
        @unknown default:
            return ConfigurationError(.syntax, at: .wholeFile(file), "\(error)", fix: fix)
        }
    }

    /// What breaks the rules a demo home must keep beyond its shape: names and accounts the model
    /// accepts, every device id known once, and every home with an administrator nobody else
    /// shadows, so that seeding cannot half-build a home or lock its administrator out.
    private static func problems(_ home: DemoHome, root: Node, file: String) -> [ConfigurationError] {
        var problems: [ConfigurationError] = []
        func report(_ path: [any CodingKey], _ message: String, fix: String) {
            problems.append(
                ConfigurationError(
                    .invalidValue, at: .of(path, in: root, file: file), message, fix: fix))
        }
        func check(name: String, _ path: [any CodingKey]) {
            do throws(HomeError) {
                try HomeName.validate(name)
            } catch {
                report(
                    path, error.message,
                    fix: "use letters, digits, spaces and apostrophes, starting with a letter or digit")
            }
        }
        var ids: Set<String> = []
        func visit(_ devices: [VirtualDeviceConfiguration], _ path: [any CodingKey]) {
            for (index, device) in devices.enumerated() {
                let here = path + [PathKey(index)]
                if !ids.insert(device.id).inserted {
                    report(
                        here + [PathKey("id")], "the device id '\(device.id)' appears twice",
                        fix: "give each device its own id")
                }
                visit(device.bridged, here + [PathKey("bridged")])
            }
        }
        visit(home.devices, [PathKey("devices")])

        for (h, seed) in home.homes.enumerated() {
            let path: [any CodingKey] = [PathKey("homes"), PathKey(h)]
            check(name: seed.name, path + [PathKey("name")])
            var accounts: [String: String] = [:]
            let users =
                [(seed.administrator, path + [PathKey("administrator")])]
                + (seed.guests ?? []).enumerated().map { ($0.element, path + [PathKey("guests"), PathKey($0.offset)]) }
            for (user, userPath) in users {
                do throws(HomeError) {
                    try AccountName.validate(user.account)
                } catch {
                    report(userPath + [PathKey("account")], error.message, fix: "use the member's MQTT username")
                }
                if let earlier = accounts[user.account] {
                    report(
                        userPath + [PathKey("account")],
                        "the account '\(user.account)' is already \(earlier) of '\(seed.name)'",
                        fix: "list each account once; the administrator is not also a guest")
                }
                accounts[user.account] = accounts.isEmpty ? "the administrator" : "a guest"
            }
            for (r, room) in (seed.rooms ?? []).enumerated() {
                check(name: room, path + [PathKey("rooms"), PathKey(r)])
            }
            for (a, accessory) in (seed.accessories ?? []).enumerated() where !ids.contains(accessory.id) {
                report(
                    path + [PathKey("accessories"), PathKey(a), PathKey("id")],
                    "'\(accessory.id)' is not the id of any device in 'devices'", fix: "use an id from 'devices'")
            }
            let roomKeys = Set((seed.rooms ?? []).map(HomeName.key))
            for (a, accessory) in (seed.accessories ?? []).enumerated() {
                if let room = accessory.room, !roomKeys.contains(HomeName.key(room)) {
                    report(
                        path + [PathKey("accessories"), PathKey(a), PathKey("room")],
                        "the room '\(room)' is not in the rooms of '\(seed.name)'",
                        fix: "add it to 'rooms', or fix the name")
                }
            }
        }
        return problems
    }
}
