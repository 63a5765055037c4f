import Crypto
import Foundation
import HAPProtocol
import HomeModel
import JSON

/// Who a bridge is to controllers: its name, its pairing identifier and its firmware version.
struct BridgeIdentity: Sendable {
    /// The model id the bridge's own numbers are kept under (no accessory of a home has it).
    static let accessoryID = AccessoryID("#bridge")

    let name: String
    let deviceID: String
    let firmware: String
}

/// Everything a bridge keeps across restarts, stored as one row of the home database (the driver
/// secrets of `homekit-bridge`, keyed by the home's id), so that each change (a pairing added, a
/// number given) is written whole or not at all, and a backup of the database holds all of it:
/// its pairing identifier and long-term key, its setup code, its pairings, its numbers and `c#`,
/// and the failed pair setups counted towards HAP's limit. Never on a topic or in a log.
struct BridgeState: Sendable, Equatable {
    /// "XX:XX:XX:XX:XX:XX", the `id` of its `_hap._tcp` record.
    var deviceID: String
    /// The long-term secret key's raw bytes.
    var secretKey: [UInt8]
    var setup: SetupInformation
    var pairings: [PairedController] = []
    var numbering = BridgeNumbering()
    var configurationNumber = ConfigurationNumber()
    /// Pair setups that ended with a wrong setup code, since the last success.
    var failedAttempts = 0

    /// A new bridge: a random pairing identifier, key and setup code.
    static func new() -> BridgeState {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<6).map { _ in String(format: "%02X", UInt8.random(in: 0...255, using: &generator)) }
        return BridgeState(
            deviceID: id.joined(separator: ":"),
            secretKey: Array(Curve25519.Signing.PrivateKey().rawRepresentation),
            setup: SetupInformation.random(using: &generator))
    }

    var identity: AccessoryIdentity {
        // Stored from a valid key (or refused when read back): always a valid key.
        AccessoryIdentity(
            identifier: deviceID, signingKey: try! Curve25519.Signing.PrivateKey(rawRepresentation: secretKey))
    }

    var isPaired: Bool { !pairings.isEmpty }

    // MARK: Stored

    var json: JSON {
        .object([
            ("deviceID", .string(deviceID)), ("secretKey", .string(Data(secretKey).base64EncodedString())),
            ("setupCode", .string(setup.setupCode)), ("setupID", .string(setup.setupID)),
            (
                "pairings",
                .array(
                    pairings.map { pairing in
                        .object([
                            ("identifier", .string(Data(pairing.identifier).base64EncodedString())),
                            ("publicKey", .string(Data(pairing.publicKey).base64EncodedString())),
                            ("admin", .bool(pairing.isAdministrator)),
                        ])
                    })
            ),
            ("numbering", numbering.json), ("configurationNumber", configurationNumber.json),
            ("failedAttempts", .integer(failedAttempts)),
        ])
    }

    /// Reads what ``json`` wrote; nil when it is not that (the bridge then refuses to start rather
    /// than make a new identity that every paired controller would fail to verify).
    init?(json: JSON) {
        func bytes(_ json: JSON?) -> [UInt8]? { json?.stringValue.flatMap { Data(base64Encoded: $0) }.map(Array.init) }
        guard let deviceID = json["deviceID"]?.stringValue, let secretKey = bytes(json["secretKey"]),
            (try? Curve25519.Signing.PrivateKey(rawRepresentation: secretKey)) != nil,
            let code = json["setupCode"]?.stringValue, let setupID = json["setupID"]?.stringValue,
            let setup = try? SetupInformation(setupCode: code, setupID: setupID),
            let pairings = json["pairings"]?.arrayValue,
            let numbering = json["numbering"].flatMap(BridgeNumbering.init(json:)),
            let configurationNumber = json["configurationNumber"].flatMap(ConfigurationNumber.init(json:)),
            let failedAttempts = json["failedAttempts"]?.integerValue
        else { return nil }
        self.init(
            deviceID: deviceID, secretKey: secretKey, setup: setup, numbering: numbering,
            configurationNumber: configurationNumber, failedAttempts: failedAttempts)
        for pairing in pairings {
            guard let identifier = bytes(pairing["identifier"]), let publicKey = bytes(pairing["publicKey"]),
                let admin = pairing["admin"]?.boolValue
            else { return nil }
            self.pairings.append(PairedController(identifier: identifier, publicKey: publicKey, isAdministrator: admin))
        }
    }

    init(
        deviceID: String, secretKey: [UInt8], setup: SetupInformation, numbering: BridgeNumbering = BridgeNumbering(),
        configurationNumber: ConfigurationNumber = ConfigurationNumber(), failedAttempts: Int = 0
    ) {
        self.deviceID = deviceID
        self.secretKey = secretKey
        self.setup = setup
        self.numbering = numbering
        self.configurationNumber = configurationNumber
        self.failedAttempts = failedAttempts
    }
}

/// Where the bridges' states are kept: the home database's driver secrets.
struct BridgeStateStore: Sendable {
    /// The driver-secrets name the states are kept under.
    static let driver = "homekit-bridge"

    let secrets: DriverSecrets

    /// The home's bridge state, a new one (stored at once) the first time.
    ///
    /// - Throws: `BridgeError.unreadableState` when a stored state does not read back.
    func load(home: HomeID) throws -> BridgeState {
        // A new state is made and stored in one transaction with the read: the web page asking for
        // the setup code while the bridge starts gets the same identity as the bridge.
        let stored = try secrets.value(home.rawValue) { BridgeState.new().json.bytes }
        guard let json = try? JSON.parse(stored), let state = BridgeState(json: json) else {
            throw BridgeError(
                .unreadableState,
                "the HomeKit bridge state of home \(home.rawValue) in the database does not read; "
                    + "restore a backup (homegate restore), or remove it to pair the bridge anew")
        }
        return state
    }

    /// Writes the state whole, durable when this returns.
    func save(_ state: BridgeState, home: HomeID) throws {
        try secrets.set(home.rawValue, state.json.bytes)
    }

    /// ``save(_:home:)`` on GRDB's writer queue, awaited (the bridge runs on the gateway's loop).
    func store(_ state: BridgeState, home: HomeID) async throws {
        try await secrets.store(home.rawValue, state.json.bytes)
    }
}

/// Why a bridge cannot serve.
typealias BridgeError = CodedError<BridgeErrorCode>

enum BridgeErrorCode: String, ErrorCode {
    /// The stored state (keys, pairings) does not read back.
    case unreadableState
    /// The port cannot be listened on.
    case cannotListen
}

/// What a home's administrators are shown to add its bridge to the Home app: the setup code, the
/// QR code's payload, and whether a controller has paired already (a paired bridge takes no more
/// pair setups; a new controller is added from the Home app of one that is paired).
package struct BridgeSetup: Sendable, Equatable {
    package let setupCode: String
    package let payload: String
    package let isPaired: Bool

    /// The QR code of ``payload``.
    package var qrCode: SetupQRCode? { SetupQRCode(payload: payload) }

    /// The setup of `home`'s bridge as stored in `manager`'s database; made and stored now when the
    /// bridge never ran, so the code shown before the first start is the one it will take.
    package static func load(home: HomeID, manager: HomeManager) throws -> BridgeSetup {
        let state = try BridgeStateStore(secrets: manager.secrets(for: BridgeStateStore.driver)).load(home: home)
        return BridgeSetup(
            setupCode: state.setup.setupCode, payload: state.setup.payload(category: 2), isPaired: state.isPaired)
    }
}
