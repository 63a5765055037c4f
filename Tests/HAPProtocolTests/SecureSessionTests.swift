import Crypto
import Testing

@testable import HAPProtocol

@Suite struct SecureSessionTests {
    static let keys = SessionKeys(sharedSecret: Array(repeating: 0x42, count: 32))

    @Test func roundTripBothDirections() throws {
        var controller = SecureSession.controller(Self.keys)
        var accessory = SecureSession.accessory(Self.keys)
        let request = Array("GET /accessories HTTP/1.1\r\n\r\n".utf8)
        let frames = try controller.encrypt(request)
        // A frame is 2 length bytes, the ciphertext and a 16-byte tag; the length is in clear
        #expect(frames.count == 2 + request.count + 16)
        #expect(Int(frames[0]) | Int(frames[1]) << 8 == request.count)
        #expect(try accessory.decrypt(frames) == request)
        let answer = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        #expect(try controller.decrypt(try accessory.encrypt(answer)) == answer)
        #expect(controller.outgoingCounter == 1 && controller.incomingCounter == 1)
    }

    @Test func directionsUseDifferentKeys() throws {
        // A controller cannot read its own frames: each direction has its own key
        var controller = SecureSession.controller(Self.keys)
        var other = SecureSession.controller(Self.keys)
        #expect(throws: HAPError.self) { try other.decrypt(try controller.encrypt([1, 2, 3])) }
    }

    @Test func splitsAt1024Bytes() throws {
        var controller = SecureSession.controller(Self.keys)
        var accessory = SecureSession.accessory(Self.keys)
        let body = (0..<2500).map { UInt8($0 & 0xFF) }
        let frames = try controller.encrypt(body)
        // Three frames: 1024, 1024 and 452 bytes
        #expect(frames.count == 2500 + 3 * 18)
        #expect(Array(frames[0...1]) == [0x00, 0x04])
        #expect(Array(frames[1042...1043]) == [0x00, 0x04])
        #expect(Array(frames[2084...2085]) == [0xC4, 0x01])
        #expect(controller.outgoingCounter == 3)
        #expect(try accessory.decrypt(frames) == body)
        #expect(accessory.incomingCounter == 3)
    }

    @Test func partialDeliveryByteByByte() throws {
        var controller = SecureSession.controller(Self.keys)
        var accessory = SecureSession.accessory(Self.keys)
        let body = (0..<1500).map { UInt8(($0 * 7) & 0xFF) }
        var received: [UInt8] = []
        for byte in try controller.encrypt(body) {
            received += try accessory.decrypt([byte])
        }
        #expect(received == body)
        #expect(accessory.buffer.isEmpty)
    }

    @Test func tamperedFrameFailsAndStaysFailed() throws {
        var controller = SecureSession.controller(Self.keys)
        var accessory = SecureSession.accessory(Self.keys)
        var frames = try controller.encrypt(Array("hello".utf8))
        frames[4] ^= 0x80
        #expect {
            _ = try accessory.decrypt(frames)
        } throws: { error in
            (error as? HAPError)?.code == .authenticationFailed
        }
        // Even a good frame afterwards is refused: the connection must be dropped
        #expect(throws: HAPError.self) { try accessory.decrypt(try controller.encrypt([1])) }
    }

    @Test func tamperedLengthFails() throws {
        var controller = SecureSession.controller(Self.keys)
        var accessory = SecureSession.accessory(Self.keys)
        var frames = try controller.encrypt(Array("hello!".utf8))
        frames[0] = 5  // the length is the AAD: one byte less fails the tag
        #expect(throws: HAPError.self) { try accessory.decrypt(frames + [0]) }
    }

    @Test func replayedFrameFails() throws {
        var controller = SecureSession.controller(Self.keys)
        var accessory = SecureSession.accessory(Self.keys)
        let frame = try controller.encrypt(Array("on".utf8))
        #expect(try accessory.decrypt(frame) == Array("on".utf8))
        // The same frame again was sealed under counter 0; the accessory expects 1
        #expect {
            _ = try accessory.decrypt(frame)
        } throws: { error in
            (error as? HAPError)?.code == .authenticationFailed
        }
    }

    @Test func overlongFrameLengthIsRefused() throws {
        var accessory = SecureSession.accessory(Self.keys)
        #expect {
            _ = try accessory.decrypt([0x01, 0x04])  // 1025
        } throws: { error in
            (error as? HAPError)?.code == .frameTooLong
        }
    }
}
