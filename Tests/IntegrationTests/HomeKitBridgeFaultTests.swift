import Broker
import Execution
import Foundation
import HAP
import HomeModel
import JSON
import Synchronization
import TestSupport
import Testing

@testable import HAPProtocol
@testable import HomeKitBridge

/// The HomeKit bridge under faults, over loopback, driven by the project's own controller code
/// (`HAPConnection`, and `HAPWire` where the test chooses the bytes): pair setup one at a time and
/// its limits, malformed pairing bodies and HTTP, tampered, replayed and reordered frames, many
/// controllers with one that vanishes or stops reading, nothing before pair verify, and `/pairings`
/// rights. Each test runs a gateway of the demo home and a bridge of Main House.
@Suite("HomeKit bridge faults", .serialized, .timeLimit(.minutes(10)))
struct HomeKitBridgeFaultTests {
    // MARK: Pair setup

    @Test("pair setup is one at a time: M1 of a second connection gets kTLVError_Busy until the first ends")
    func pairSetupOneAtATime() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let code = await bridge.setupCode
                let controller = ControllerIdentity.make()
                try await withWire(port: port) { first in
                    var setup = try PairSetup(setupCode: Self.otherCode(than: code), controller: controller)
                    let m2 = try await first.pairing("/pair-setup", setup.start())
                    #expect(m2[.error] == nil && m2[.state] == [2] && m2[.salt] != nil)

                    try await withWire(port: port) { second in
                        let busy = try await second.pairing("/pair-setup", Self.m1)
                        #expect(busy[.error] == [PairingError.Code.busy.rawValue] && busy[.state] == [2])
                        // Nor can the second connection step into the first's exchange
                        let intruding = try await second.pairing("/pair-setup", Self.bogusM3)
                        #expect(intruding[.error] == [PairingError.Code.unknown.rawValue])
                    }
                    // The first's exchange went on untouched: its M3 (a wrong code) gets M4's error
                    guard case .send(let m3) = try setup.handle(m2.encoded()) else {
                        Issue.record("no M3")
                        return
                    }
                    let m4 = try await first.pairing("/pair-setup", m3)
                    #expect(m4[.error] == [PairingError.Code.authentication.rawValue] && m4[.state] == [4])

                    // That exchange ended: another connection may start one, and holds it
                    try await withWire(port: port) { second in
                        let started = try await second.pairing("/pair-setup", Self.m1)
                        #expect(started[.error] == nil && started[.state] == [2])
                        let busy = try await first.pairing("/pair-setup", Self.m1)
                        #expect(busy[.error] == [PairingError.Code.busy.rawValue])
                    }
                    // The second connection closed in the middle of its exchange: the first may start
                    // again (as soon as the bridge has seen the close)
                    try await eventually("the closed connection's exchange let go") {
                        try await first.pairing("/pair-setup", Self.m1)[.error] == nil
                    }
                    // and runs it to its end with the right code
                    let accessory = try await first.pairSetup(code: code, controller: controller)
                    #expect(accessory.identifier == (await bridge.advertisement.deviceID))
                }
                #expect(await bridge.advertisement.isPaired)
                #expect(await bridge.state.failedAttempts == 0, "a success clears the count")
            }
        }
    }

    @Test("a paired bridge answers pair setup's M1 with kTLVError_Unavailable and keeps its pairing")
    func pairedRefusesPairSetup() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let code = await bridge.setupCode
                try await withWire(port: port) { wire in
                    let refused = try await wire.pairing("/pair-setup", Self.m1)
                    #expect(refused[.error] == [PairingError.Code.unavailable.rawValue] && refused[.state] == [2])
                    // Even with the right code, and on a connection that verified first
                    try await wire.verify(admin, with: accessory)
                    await #expect(throws: PairingError(code: .unavailable, state: 2, retryDelay: nil)) {
                        _ = try await wire.pairSetup(code: code, controller: .make())
                    }
                    let read = try await wire.send(.get("/accessories"))
                    #expect(read.statusCode == 200)
                }
                let state = await bridge.state
                #expect(state.pairings.map(\.identifier) == [Array(admin.identifier.utf8)])
                #expect(state.failedAttempts == 0, "a refused M1 is no attempt")
            }
        }
    }

    /// With HAP's real limit of 100: a failed pair setup (both sides' SRP) takes some 20 ms here.
    @Test("wrong setup codes count: after HomeBridge.maximumFailedAttempts M1 gets kTLVError_MaxTries, across restarts")
    func failedAttemptsLimit() async throws {
        let limit = HomeBridge.maximumFailedAttempts
        let beforeRestart = limit * 3 / 5
        try await withGateway { gateway in
            let code = try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let code = await bridge.setupCode
                try await withWire(port: port) { wire in
                    // The right code with an M5 that does not open: refused, but no wrong code
                    var setup = try PairSetup(setupCode: code, controller: .make())
                    let m2 = try await wire.pairing("/pair-setup", setup.start())
                    guard case .send(let m3) = try setup.handle(m2.encoded()) else { throw TimedOut("no M3") }
                    let m4 = try await wire.pairing("/pair-setup", m3)
                    #expect(m4[.error] == nil && m4[.state] == [4])
                    let m6 = try await wire.pairing("/pair-setup", Self.m5)
                    #expect(m6[.error] == [PairingError.Code.authentication.rawValue] && m6[.state] == [6])
                    #expect(await bridge.state.failedAttempts == 0, "only a wrong setup code counts")

                    for _ in 0..<beforeRestart { try await Self.failPairSetup(on: wire, code: code) }
                }
                #expect(await bridge.state.failedAttempts == beforeRestart)
                return code
            }
            // A new bridge of the same home database: the count goes on from where it was
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                #expect(await bridge.state.failedAttempts == beforeRestart)
                try await withWire(port: port) { wire in
                    // up to one short of the limit, M1 is still answered with M2 (checked in each)
                    for _ in beforeRestart..<limit { try await Self.failPairSetup(on: wire, code: code) }
                    #expect(await bridge.state.failedAttempts == limit)
                    let refused = try await wire.pairing("/pair-setup", Self.m1)
                    #expect(refused[.error] == [PairingError.Code.maxTries.rawValue] && refused[.state] == [2])
                    await #expect(throws: PairingError(code: .maxTries, state: 2, retryDelay: nil)) {
                        _ = try await wire.pairSetup(code: code, controller: .make())
                    }
                }
            }
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                try await withWire(port: port) { wire in
                    let refused = try await wire.pairing("/pair-setup", Self.m1)
                    #expect(refused[.error] == [PairingError.Code.maxTries.rawValue])
                }
                #expect(!(await bridge.advertisement.isPaired))
            }
        }
    }

    // MARK: Malformed requests

    @Test("malformed pair setup and pair verify bodies get an error TLV; the connection and the bridge go on")
    func malformedPairingBodies() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let unknown = [PairingError.Code.unknown.rawValue]
                try await withWire(port: port) { wire in
                    for (name, body) in Self.malformedBodies + [
                        ("M3 before M1", Self.bogusM3), ("M5 before M1", Self.m5),
                    ] {
                        let answer = try await wire.pairing("/pair-setup", body)
                        #expect(answer[.error] == unknown && answer[.state] != nil, "\(name): \(answer)")
                    }
                    // A malformed step ends an exchange under way with an error; M1 starts afresh
                    for (name, body) in Self.malformedBodies + [
                        ("M5 after M1", Self.m5), ("M3 without proof", Self.m3NoProof),
                    ] {
                        let m2 = try await wire.pairing("/pair-setup", Self.m1)
                        #expect(m2[.error] == nil, "\(name)")
                        let answer = try await wire.pairing("/pair-setup", body)
                        #expect(answer[.error] == unknown, "\(name): \(answer)")
                        let after = try await wire.pairing("/pair-setup", Self.bogusM3)
                        #expect(after[.error] == unknown, "\(name): the exchange is over")
                    }
                    // RFC 5054: A ≡ 0 mod N would let a controller in without the code
                    let prime = SRPGroup.rfc5054Group3072.prime.minimalBytes
                    for (name, key) in [("A = 0", [UInt8(0)]), ("A = N", prime)] {
                        #expect(try await wire.pairing("/pair-setup", Self.m1)[.error] == nil)
                        let answer = try await wire.pairing(
                            "/pair-setup",
                            TLV8([
                                .init(.state, [3]), .init(.publicKey, key),
                                .init(.proof, Array(repeating: 0, count: 64)),
                            ])
                            .encoded())
                        #expect(
                            answer[.error] == [PairingError.Code.authentication.rawValue] && answer[.state] == [4],
                            "\(name): \(answer)")
                    }
                }
                #expect(!(await bridge.advertisement.isPaired))
                // The bridge pairs another connection as usual
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let other = try await Self.verified(admin, accessory, port: port)
                let lamp = try HAPAddressText(
                    of: "Floor Lamp", "25", in: try await other.request(.get("/accessories")).body)

                try await withWire(port: port) { wire in
                    let bodies =
                        Self.malformedBodies + [
                            ("M3 before M1", Self.verifyM3Garbage),
                            (
                                "M1 with a 31-byte key",
                                TLV8([.init(.state, [1]), .init(.publicKey, Array(repeating: 9, count: 31))]).encoded()
                            ),
                        ]
                    for (name, body) in bodies {
                        let answer = try await wire.pairing("/pair-verify", body)
                        #expect(answer[.error] == unknown && answer[.state] != nil, "\(name): \(answer)")
                    }
                    // M1, then a malformed M3: the exchange ends, its real M3 is refused after
                    for (name, body) in Self.malformedBodies {
                        var verify = PairVerify(controller: admin, accessory: accessory)
                        let m2 = try await wire.pairing("/pair-verify", verify.start())
                        #expect(m2[.error] == nil, "\(name)")
                        let answer = try await wire.pairing("/pair-verify", body)
                        #expect(answer[.error] == unknown, "\(name): \(answer)")
                        guard case .send(let m3) = try verify.handle(m2.encoded()) else { continue }
                        #expect(try await wire.pairing("/pair-verify", m3)[.error] == unknown, "\(name)")
                    }
                    // An M3 that does not open, and one signed by a controller the bridge does not know
                    var begun = PairVerify(controller: admin, accessory: accessory)
                    let m2 = try await wire.pairing("/pair-verify", begun.start())
                    #expect(m2[.error] == nil)
                    let sealed = try await wire.pairing("/pair-verify", Self.verifyM3Garbage)
                    #expect(sealed[.error] == [PairingError.Code.authentication.rawValue] && sealed[.state] == [4])
                    var stranger = PairVerify(controller: .make(), accessory: accessory)
                    let strangerM2 = try await wire.pairing("/pair-verify", stranger.start())
                    guard case .send(let m3) = try stranger.handle(strangerM2.encoded()) else { return }
                    let refused = try await wire.pairing("/pair-verify", m3)
                    #expect(refused[.error] == [PairingError.Code.authentication.rawValue] && refused[.state] == [4])
                    // None of it let the connection in, nor closed it: it verifies now
                    #expect(try await wire.send(.get("/accessories")).statusCode == 470)
                    try await wire.verify(admin, with: accessory)
                    #expect(try await wire.send(lamp.read).statusCode == 200)
                }
                #expect(try await other.request(lamp.read).statusCode == 200, "the other controller served throughout")
                await other.close()
            }
        }
    }

    @Test("bytes that are not HTTP, a huge Content-Length or a body over 1 MiB close that connection only")
    func malformedHTTP() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let other = try await Self.verified(admin, accessory, port: port)
                let lamp = try HAPAddressText(
                    of: "Floor Lamp", "25", in: try await other.request(.get("/accessories")).body)
                let limit = BridgeConnection.maximumBodyLength
                func head(_ length: String) -> [UInt8] {
                    Array(
                        "POST /pair-setup HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/pairing+tlv8\r\nContent-Length: \(length)\r\n\r\n"
                            .utf8)
                }
                var chunked = Array(
                    "PUT /characteristics HTTP/1.1\r\nHost: bridge\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                for _ in 0...(limit / 65_536) {
                    chunked += Array("10000\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 65_536) + [13, 10]
                }
                let cases: [(String, [UInt8])] = [
                    ("bytes that are not HTTP", Array("\u{1}\u{2}\u{3}garbage that is no HTTP\r\n\r\n".utf8)),
                    ("binary noise", (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }),
                    ("a Content-Length of a terabyte", head("1000000000000")),
                    ("a Content-Length past 64 bits", head("123456789012345678901234567890")),
                    ("a negative Content-Length", head("-5")),
                    ("a body one byte over 1 MiB", head("\(limit + 1)") + Array(repeating: 7, count: limit + 1)),
                    ("a chunked body over 1 MiB", chunked),
                ]
                for (name, bytes) in cases {
                    do {
                        try await withWire(port: port) { wire in
                            // The bridge may close before it has read everything: a failed write is fine
                            try? await wire.write(bytes)
                            let answers = try await wire.closedByBridge()
                            #expect(answers.isEmpty, "\(name): \(answers)")
                        }
                    } catch {
                        Issue.record(error, "\(name)")
                    }
                    let read = try await other.request(lamp.read)
                    #expect(read.statusCode == 200, "\(name): the verified controller is served on")
                }
                // The limit itself is no fault: a body of exactly 1 MiB is read and answered
                try await withWire(port: port) { wire in
                    try await wire.write(
                        Array(
                            "PUT /characteristics HTTP/1.1\r\nHost: bridge\r\nContent-Length: \(limit)\r\n\r\n".utf8)
                            + Array(repeating: UInt8(ascii: " "), count: limit))
                    #expect(try await wire.answer().statusCode == 470)
                    #expect(try await wire.pairing("/pair-setup", Self.m1)[.error] == [6], "the connection goes on")
                }
                try await eventually("only the verified controller's connection left") {
                    await bridge.connectionCount == 1
                }
                await other.close()
            }
        }
    }

    // MARK: The encrypted session

    @Test("a tampered, a replayed, an out-of-order or an overlong frame closes that connection; others go on")
    func encryptedFrameFaults() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let other = try await Self.verified(admin, accessory, port: port)
                let lamp = try HAPAddressText(
                    of: "Floor Lamp", "25", in: try await other.request(.get("/accessories")).body)
                #expect(try await other.request(lamp.subscription()).statusCode == 204)

                // Each fault: what the connection sends after a first request was answered
                let faults: [(String, (HAPWire) throws -> [UInt8])] = [
                    (
                        "a ciphertext byte flipped",
                        { wire in
                            var frame = try wire.bytes(of: .get("/accessories"))
                            frame[5] ^= 0x20
                            return frame
                        }
                    ),
                    (
                        "a tag byte flipped",
                        { wire in
                            var frame = try wire.bytes(of: .get("/accessories"))
                            frame[frame.count - 1] ^= 0x01
                            return frame
                        }
                    ),
                    (
                        "the length (the frame's AAD) changed",
                        { wire in
                            var frame = try wire.bytes(of: lamp.read)
                            frame[0] -= 1
                            return frame + [0]
                        }
                    ),
                    ("the frame just answered, replayed", { wire in wire.sent[wire.sent.count - 1] }),
                    (
                        "a frame ahead of its turn",
                        { wire in
                            _ = try wire.bytes(of: lamp.read)
                            return try wire.bytes(of: lamp.read)
                        }
                    ),
                    (
                        "two frames swapped",
                        { wire in
                            let older = try wire.bytes(of: lamp.read)
                            return try wire.bytes(of: lamp.read) + older
                        }
                    ),
                    ("a frame longer than 1,024 bytes", { _ in [0x01, 0x04] + Array(repeating: 0, count: 1_041) }),
                ]
                for (name, fault) in faults {
                    try await withWire(port: port) { wire in
                        try await wire.verify(admin, with: accessory)
                        try await wire.write(try wire.bytes(of: lamp.read))
                        #expect(try await wire.answer().statusCode == 200, "\(name): the session works")
                        try await wire.write(try fault(wire))
                        let answers = try await wire.closedByBridge()
                        #expect(answers.filter { $0.kind == .response }.isEmpty, "\(name): \(answers)")
                    }
                    // The other controller: still answered, still told of changes
                    let read = try await other.request(lamp.read)
                    let before = try #require(lamp.value(in: read.body)?.boolValue as Bool?)
                    let writer = try await Self.verified(admin, accessory, port: port)
                    #expect(try await writer.request(lamp.write("\(!before)")).statusCode == 204)
                    let event = try await Self.event(of: lamp, on: other)
                    #expect(event.boolValue == !before, "\(name)")
                    await writer.close()
                }
                try await eventually("the faulty connections closed") { await bridge.connectionCount == 1 }
                await other.close()
            }
        }
    }

    // MARK: Many controllers

    @Test("16 controllers verified at once read and hear events; one that vanishes or stops reading holds up none")
    func manyControllers() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let writer = try await Self.verified(admin, accessory, port: port)
                var identities = [admin]
                for _ in 1..<HomeBridge.maximumPairings {
                    let identity = ControllerIdentity.make()
                    let added = try await Self.pairings(PairingsRequest.add(identity, admin: false), on: writer)
                    #expect(added[.error] == nil && added[.state] == [2])
                    identities.append(identity)
                }
                let database = try await writer.request(.get("/accessories")).body
                let on = try HAPAddressText(of: "Floor Lamp", "25", in: database)
                let brightness = try HAPAddressText(of: "Floor Lamp", "8", in: database)

                // All verify at once, subscribe and read
                let controllers = try await withThrowingTaskGroup(of: HAPConnection.self) { group in
                    for identity in identities {
                        group.addTask {
                            let controller = try await Self.verified(identity, accessory, port: port)
                            #expect(try await controller.request(on.subscription()).statusCode == 204)
                            let read = try await controller.request(on.read)
                            #expect(read.statusCode == 200 && on.value(in: read.body)?.boolValue != nil)
                            return controller
                        }
                    }
                    return try await group.reduce(into: [HAPConnection]()) { $0.append($1) }
                }
                #expect(controllers.count == 16)
                #expect(await bridge.verifiedConnections == 17)
                let first = try await writer.request(on.read)
                var value = try #require(on.value(in: first.body)?.boolValue as Bool?)

                /// The writer writes `on` anew, another controller reads it, and every one of the 16 is
                /// told. Not held up is shown by order (answered while the stalled connection below is
                /// still held), not by a wall-clock bound; a minute is only the net.
                func writeAndHear(_ what: String) async throws {
                    value.toggle()
                    let expected = value
                    #expect(try await writer.request(on.write("\(expected)")).statusCode == 204)
                    let read = try await controllers[5].request(on.read)
                    #expect(on.value(in: read.body)?.boolValue == expected, "\(what)")
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for controller in controllers {
                            group.addTask {
                                let event = try await Self.event(of: on, on: controller)
                                #expect(event.boolValue == expected, "\(what)")
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                try await writeAndHear("all connected")

                // One resets its connection in the middle of a request; another just closes it
                try await withWire(port: port) { wire in
                    try await wire.verify(identities[1], with: accessory)
                    #expect(try await wire.send(on.subscription()).statusCode == 204)
                    let frame = try wire.bytes(of: .get("/accessories"))
                    try await wire.write(Array(frame.prefix(frame.count / 2)))
                    try await wire.reset()
                }
                let quiet = try await Self.verified(identities[2], accessory, port: port)
                #expect(try await quiet.request(on.subscription()).statusCode == 204)
                await quiet.close()
                try await writeAndHear("two vanished")
                try await eventually("the vanished connections gone") { await bridge.connectionCount == 17 }

                // One stops reading while its events pile up: they fill the kernel's buffers (some
                // 2 MB on loopback), NIO's and the bridge's 1,024 before it is dropped, about 20,000
                // changes here
                try await withWire(port: port, receiveBuffer: 4_096) { stalled in
                    try await stalled.verify(identities[3], with: accessory)
                    #expect(try await stalled.send(brightness.subscription()).statusCode == 204)
                    let target = CharacteristicReference(
                        accessory: "Floor Lamp", service: "Lightbulb", characteristic: .brightness)
                    var changes = 0
                    var probesWhileHeld = 0
                    while await bridge.connectionCount == 18, changes < 200_000 {
                        try await gateway.manager.writeValue(
                            .int(changes % 2 == 0 ? 30 : 70), to: target, home: "Main House", account: "owner")
                        changes += 1
                        if changes % 1_000 == 0 {
                            try await writeAndHear("\(changes) events unread by one")
                            // Answered while the stalled connection was still held (the probe tells it
                            // nothing; only a change the bridge had yet to follow could drop it meanwhile)
                            if await bridge.connectionCount == 18 { probesWhileHeld += 1 }
                        }
                    }
                    #expect(
                        await bridge.connectionCount == 17,
                        "the controller that reads nothing is dropped (after \(changes) events)")
                    // All but perhaps the last probe, so one within 2,000 changes of the drop: long
                    // after the kernel's buffer was full
                    #expect(probesWhileHeld >= changes / 1_000 - 1, "\(probesWhileHeld) of \(changes / 1_000)")
                    try await writeAndHear("the stalled one dropped")
                    // What piled up reaches it when it reads again, then the close
                    let backlog = try await stalled.closedByBridge()
                    #expect(backlog.count > 1_000 && backlog.allSatisfy { $0.kind == .event }, "\(backlog.count)")
                }
                #expect(await bridge.verifiedConnections == 17)
                for controller in controllers { await controller.close() }
                await writer.close()
            }
        }
    }

    // MARK: Before pair verify

    @Test("beyond 64 connections the next is closed at once; when one ends, a new one is served")
    func connectionLimit() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { _, port in
                var open: [Int32] = []
                defer { open.forEach { _ = close($0) } }
                for _ in 0..<BridgeListener.maximumConnections { open.append(try RawConnection.open(port)) }
                #expect(RawConnection.identify(open[0]) == "HTTP/1.1 204", "the first of 64 is served")
                let extra = try RawConnection.open(port)
                defer { close(extra) }
                #expect(RawConnection.identify(extra) == nil, "the 65th is closed unserved")
                close(open.removeLast())
                try await eventually("a connection served once one of the 64 ended") {
                    let next = try RawConnection.open(port)
                    defer { close(next) }
                    return RawConnection.identify(next) == "HTTP/1.1 204"
                }
            }
        }
    }

    @Test("before pair verify every request but pairing gets 470 with status -70401")
    func connectionAuthorizationRequired() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                try await withWire(port: port) { wire in
                    try await Self.expectRefused(on: wire, "unpaired")
                    #expect(try await wire.send(HTTPRequest(method: "POST", path: "/identify")).statusCode == 204)
                }
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let other = try await Self.verified(admin, accessory, port: port)
                try await withWire(port: port) { wire in
                    try await Self.expectRefused(on: wire, "paired, another connection verified")
                    let identify = try await wire.send(HTTPRequest(method: "POST", path: "/identify"))
                    #expect(identify.statusCode == 400 && Self.status(identify) == -70401)

                    // Pair verify begun (M1, M2) but not ended
                    var begun = PairVerify(controller: admin, accessory: accessory)
                    let m2 = try await wire.pairing("/pair-verify", begun.start())
                    #expect(m2[.error] == nil)
                    try await Self.expectRefused(on: wire, "after pair verify's M2")

                    // Pair verify that failed: a controller the bridge does not know
                    await #expect(throws: PairingError(code: .authentication, state: 4, retryDelay: nil)) {
                        try await wire.verify(.make(), with: accessory)
                    }
                    try await Self.expectRefused(on: wire, "after a failed pair verify")
                }
                #expect(try await other.request(.get("/accessories")).statusCode == 200)
                await other.close()
            }
        }
    }

    @Test("a pair setup left silent after M1 holds the bridge for a minute of the bridge's clock, then gives way")
    func stalePairSetupGivesWay() async throws {
        let clock = ManualClock()
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager, clock: AnyClock(clock)) { bridge, port in
                try await withWire(port: port) { quiet in
                    #expect(try await quiet.pairing("/pair-setup", Self.m1)[.state] == [2])
                    try await withWire(port: port) { other in
                        clock.advance(by: HomeBridge.pairSetupLifetime - .seconds(1))
                        #expect(
                            try await other.pairing("/pair-setup", Self.m1)[.error] == [PairingError.Code.busy.rawValue]
                        )
                        clock.advance(by: .seconds(1))
                        let taken = try await other.pairing("/pair-setup", Self.m1)
                        #expect(taken[.error] == nil && taken[.state] == [2], "\(taken)")
                        // The quiet one's exchange is gone: its M3 is out of turn
                        #expect(
                            try await quiet.pairing("/pair-setup", Self.bogusM3)[.error] == [
                                PairingError.Code.unknown.rawValue
                            ])
                        _ = try await other.pairSetup(
                            code: await bridge.setupCode, controller: ControllerIdentity.make())
                        #expect(await bridge.advertisement.isPaired)
                    }
                }
            }
        }
    }

    // MARK: /pairings

    @Test("/pairings by a non-admin gets kTLVError_Authentication; removing the last admin removes every pairing")
    func pairingsRights() async throws {
        try await withGateway { gateway in
            try await withHomeKitBridge(manager: gateway.manager) { bridge, port in
                let records = Records()
                await bridge.advertise { record in records.append(record) }
                let (admin, accessory) = try await Self.pair(bridge, port: port)
                let adminConnection = try await Self.verified(admin, accessory, port: port)
                let user = ControllerIdentity.make()
                #expect(
                    try await Self.pairings(PairingsRequest.add(user, admin: false), on: adminConnection)[.error] == nil
                )
                let userConnection = try await Self.verified(user, accessory, port: port)
                #expect(try await userConnection.request(.get("/accessories")).statusCode == 200)

                let stranger = ControllerIdentity.make()
                let attempts: [(String, TLV8)] = [
                    ("list", PairingsRequest.list), ("add an admin", PairingsRequest.add(stranger, admin: true)),
                    ("make itself admin", PairingsRequest.add(user, admin: true)),
                    ("remove the admin", PairingsRequest.remove(admin)),
                    ("remove itself", PairingsRequest.remove(user)),
                ]
                for (name, request) in attempts {
                    let answer = try await Self.pairings(request, on: userConnection)
                    #expect(
                        answer[.error] == [PairingError.Code.authentication.rawValue] && answer[.state] == [2],
                        "\(name): \(answer)")
                }
                let listed = try await Self.listed(on: adminConnection)
                #expect(
                    listed == [Array(admin.identifier.utf8): true, Array(user.identifier.utf8): false],
                    "nothing the user asked was done")

                // An admin removed by another leaves the rest paired, and its session ends
                let second = ControllerIdentity.make()
                #expect(
                    try await Self.pairings(PairingsRequest.add(second, admin: true), on: adminConnection)[.error]
                        == nil)
                let secondConnection = try await Self.verified(second, accessory, port: port)
                #expect(try await Self.pairings(PairingsRequest.remove(second), on: adminConnection)[.error] == nil)
                try await eventually("the removed admin's session closed") { !(await secondConnection.isOpen) }
                #expect(await bridge.advertisement.isPaired)
                #expect(try await Self.listed(on: adminConnection).count == 2)

                // The last admin cannot make itself a regular controller: no one could manage the bridge
                let demoted = try await Self.pairings(PairingsRequest.add(admin, admin: false), on: adminConnection)
                #expect(demoted[.error] == [PairingError.Code.unknown.rawValue], "\(demoted)")
                #expect(try await Self.listed(on: adminConnection)[Array(admin.identifier.utf8)] == true)

                // The last admin removes itself: every pairing goes, the user's session too
                let removed = try await Self.pairings(PairingsRequest.remove(admin), on: adminConnection)
                #expect(removed[.error] == nil && removed[.state] == [2])
                #expect(await bridge.state.pairings.isEmpty)
                #expect(!(await bridge.advertisement.isPaired))
                #expect(records.last?.isPaired == false, "the advert told: sf=1")
                try await eventually("the user's session closed") { !(await userConnection.isOpen) }
                let after = try await adminConnection.request(.get("/accessories"))
                #expect(after.statusCode == 470 && Self.status(after) == -70401, "the admin's session no longer counts")
                await adminConnection.close()
                for identity in [admin, user] {
                    try await withWire(port: port) { wire in
                        _ = await #expect(throws: PairingError(code: .authentication, state: 4, retryDelay: nil)) {
                            try await wire.verify(identity, with: accessory)
                        }
                    }
                }

                // Pair setup is open again
                let (newAdmin, _) = try await Self.pair(bridge, port: port)
                #expect(await bridge.state.pairings.map(\.identifier) == [Array(newAdmin.identifier.utf8)])
                #expect(records.last?.isPaired == true)
            }
        }
    }

    // MARK: Helpers

    static let m1 = TLV8([.init(.state, [1]), .init(.method, [PairingMethod.pairSetup.rawValue])]).encoded()
    static let bogusM3 = TLV8([
        .init(.state, [3]), .init(.publicKey, Array(repeating: 0x5A, count: 384)),
        .init(.proof, Array(repeating: 0xA5, count: 64)),
    ]).encoded()
    static let m3NoProof = TLV8([.init(.state, [3]), .init(.publicKey, Array(repeating: 0x5A, count: 384))]).encoded()
    static let m5 = TLV8([.init(.state, [5]), .init(.encryptedData, Array(repeating: 0x11, count: 120))]).encoded()
    static let verifyM3Garbage = TLV8([.init(.state, [3]), .init(.encryptedData, Array(repeating: 0x22, count: 100))])
        .encoded()
    /// Bodies no pairing step may take: each must get an error item back.
    static let malformedBodies: [(String, [UInt8])] = [
        ("an empty body", []),
        ("a truncated item", [0x06, 0x05, 0x01]),
        ("an item header without its value", [0x06]),
        ("garbage", Array("\u{7f}ELF garbage \u{1}\u{2}\u{3}".utf8) + [0xFF, 0xFF]),
        ("no state", TLV8([.init(.method, [0])]).encoded()),
        ("state 0", TLV8([.init(.state, [0])]).encoded()),
        ("state 9", TLV8([.init(.state, [9])]).encoded()),
        ("a state of two bytes", TLV8([.init(.state, [1, 0])]).encoded()),
        ("state 255", TLV8([.init(.state, [255])]).encoded()),
    ]

    /// Pairs a new administrator with the bridge over a `HAPConnection` (closed after).
    static func pair(_ bridge: HomeBridge, port: Int) async throws -> (ControllerIdentity, AccessoryPairing) {
        let admin = ControllerIdentity.make()
        let connection = try await HAPConnection.open(host: "127.0.0.1", port: port, timeout: .seconds(60))
        do {
            let accessory = try await connection.pairSetup(setupCode: await bridge.setupCode, controller: admin)
            await connection.close()
            return (admin, accessory)
        } catch {
            await connection.close()
            throw error
        }
    }

    /// A new connection of `controller`, verified.
    static func verified(_ controller: ControllerIdentity, _ accessory: AccessoryPairing, port: Int) async throws
        -> HAPConnection
    {
        let connection = try await HAPConnection.open(host: "127.0.0.1", port: port, timeout: .seconds(60))
        try await connection.pairVerify(controller: controller, accessory: accessory)
        return connection
    }

    /// One pair setup with a wrong code, M1 to M4, on `wire`: M2 must come (the bridge still takes
    /// pair setups), M4 must be kTLVError_Authentication.
    static func failPairSetup(on wire: HAPWire, code: String) async throws {
        var setup = try PairSetup(setupCode: otherCode(than: code), controller: .make())
        let m2 = try await wire.pairing("/pair-setup", setup.start())
        try #require(m2[.error] == nil, "M1 refused: \(m2)")
        guard case .send(let m3) = try setup.handle(m2.encoded()) else { throw TimedOut("no M3") }
        let m4 = try await wire.pairing("/pair-setup", m3)
        #expect(m4[.error] == [PairingError.Code.authentication.rawValue] && m4[.state] == [4])
    }

    /// An answer to `/pairings` on a verified connection.
    static func pairings(_ request: TLV8, on connection: HAPConnection) async throws -> TLV8 {
        let answer = try await connection.request(.pairing("/pairings", request.encoded()))
        #expect(answer.statusCode == 200)
        return try TLV8(decoding: answer.body)
    }

    /// The pairings listed to an administrator: identifier, and whether an admin.
    static func listed(on connection: HAPConnection) async throws -> [[UInt8]: Bool] {
        let list = try await pairings(PairingsRequest.list, on: connection)
        #expect(list[.error] == nil && list[.state] == [2])
        var pairings: [[UInt8]: Bool] = [:]
        for entry in list.splitAtSeparators() {
            guard let identifier = entry[.identifier] else { continue }
            pairings[identifier] = entry[.permissions] == [1]
        }
        return pairings
    }

    /// The next event telling `address`'s value on `connection`, within a minute (a net).
    static func event(of address: HAPAddressText, on connection: HAPConnection) async throws -> JSON {
        try await withThrowingTaskGroup(of: JSON?.self) { group in
            group.addTask {
                for await event in connection.events {
                    if let value = address.value(in: event.body) { return value }
                }
                throw TimedOut("the connection ended before an event of \(address)")
            }
            group.addTask {
                // A deadline, not a wait for a state: the event is awaited above.
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else {
                throw TimedOut("no event of \(address) in a minute")
            }
            return value
        }
    }

    /// The JSON `status` of an answer.
    static func status(_ answer: HTTPMessage) -> Int? {
        (try? JSON.parse(answer.body))?["status"]?.integerValue
    }

    /// Every request but pairing, on an unverified `wire`: 470 with -70401 each, the connection kept.
    static func expectRefused(
        on wire: HAPWire, _ stage: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let requests: [HTTPRequest] = [
            .get("/accessories"), .get("/characteristics?id=1.2"), .get("/characteristics"),
            .putJSON("/characteristics", Array(#"{"characteristics":[{"aid":2,"iid":10,"value":true}]}"#.utf8)),
            .putJSON("/characteristics", Array(#"{"characteristics":[{"aid":2,"iid":10,"ev":true}]}"#.utf8)),
            .putJSON("/prepare", Array(#"{"ttl":5000,"pid":42}"#.utf8)),
            .pairing("/pairings", PairingsRequest.list.encoded()),
            .pairing("/pairings", PairingsRequest.add(.make(), admin: true).encoded()),
            HTTPRequest(method: "GET", path: "/"), HTTPRequest(method: "DELETE", path: "/pairings"),
            HTTPRequest(method: "GET", path: "/pair-setup"), .putJSON("/resource", Array("{}".utf8)),
        ]
        for request in requests {
            let answer = try await wire.send(request)
            #expect(
                answer.statusCode == 470 && status(answer) == -70401
                    && answer.header("Content-Type") == "application/hap+json",
                "\(stage): \(request.method) \(request.path) got \(answer.statusCode) \(String(decoding: answer.body, as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
    }

    static func otherCode(than code: String) -> String {
        let last = code.last!.wholeNumberValue!
        return String(code.dropLast()) + String((last + 1) % 10)
    }
}

/// The bridge's records as it tells them to its advertiser.
private final class Records: Sendable {
    private let records = Mutex<[HomeBridge.Advertisement]>([])
    var last: HomeBridge.Advertisement? { records.withLock { $0.last } }
    func append(_ record: HomeBridge.Advertisement) { records.withLock { $0.append(record) } }
}

extension HAPConnection {
    /// `send` with a minute for the answer: a net, not a bound (on a loaded machine the test process
    /// has stalled for seconds at a time).
    func request(_ request: HTTPRequest) async throws -> HTTPMessage {
        try await send(request, timeout: .seconds(60))
    }
}

extension HomeBridge {
    /// Connections open now.
    var connectionCount: Int { connections.count }
    /// Connections verified now.
    var verifiedConnections: Int { connections.values.filter { $0.controller != nil }.count }
}

/// A bare TCP connection to a bridge, blocking, for counting connections: no HAP beyond an
/// unpaired `/identify`.
private enum RawConnection {
    static func open(_ port: Int) throws -> Int32 {
        let descriptor = try LoopbackPort.connect(port)
        // A bridge that stops answering must not hold the test: reads give up after a minute.
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    /// The status line's start (`HTTP/1.1 204`) of the answer to an unpaired `/identify`, or nil
    /// when the bridge closed the connection instead.
    static func identify(_ descriptor: Int32) -> String? {
        let request = Array("POST /identify HTTP/1.1\r\nHost: bridge\r\nContent-Length: 0\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var answer = [UInt8](repeating: 0, count: 256)
        var count = 0
        while count < 12 {
            let read = answer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + count, $0.count - count, 0) }
            guard read > 0 else { return nil }
            count += read
        }
        return String(decoding: answer[0..<12], as: UTF8.self)
    }
}
