import Testing

@testable import HAPProtocol

/// Arbitrary bytes from a peer end in a value or a typed error, never a crash.
@Suite struct RobustnessTests {
    /// A small deterministic generator (SplitMix64), so that a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomBuffers(seed: UInt64, count: Int) -> [[UInt8]] {
        var generator = SplitMix(state: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
    }

    @Test func randomTLVInput() {
        for bytes in Self.randomBuffers(seed: 1, count: 3000) {
            do {
                let message = try TLV8(decoding: bytes)
                // What decodes encodes again to something that decodes to the same message
                #expect(try TLV8(decoding: message.encoded()) == message)
            } catch {
                #expect((error as? HAPError)?.code == .malformedTLV)
            }
        }
    }

    @Test func randomHTTPInput() {
        let prefixes = ["", "HTTP/1.1 200 OK\r\n", "EVENT/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"]
        for (index, bytes) in Self.randomBuffers(seed: 2, count: 3000).enumerated() {
            var parser = HTTPResponseParser()
            parser.append(Array(prefixes[index % prefixes.count].utf8) + bytes)
            do {
                while try parser.next() != nil {}
            } catch {
                #expect((error as? HAPError)?.code == .malformedHTTP)
            }
        }
    }

    @Test func randomFramesAndPairingAnswers() {
        for bytes in Self.randomBuffers(seed: 3, count: 300) {
            var session = SecureSession.controller(SecureSessionTests.keys)
            #expect(throws: HAPError.self) { try session.decrypt(bytes + [UInt8](repeating: 0, count: 1042)) }
            var verify = PairVerify(
                controller: PairingTests.controller, accessory: AccessoryPairing(identifier: "X", publicKey: bytes))
            _ = verify.start()
            #expect(throws: (any Error).self) { try verify.handle(bytes) }
        }
    }
}
