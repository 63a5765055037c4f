import Testing

@testable import HAPProtocol

@Suite struct TLV8Tests {
    @Test func shortItemsRoundTrip() throws {
        // Given a message of a state byte, an empty item and a short value
        let message: TLV8 = [(.state, [1]), (.separator, []), (.identifier, Array("abc".utf8))]
        // When encoded
        let bytes = message.encoded()
        // Then each item is type, length, value, and decoding gives the message back
        #expect(bytes == [0x06, 1, 1, 0xFF, 0, 0x01, 3, 0x61, 0x62, 0x63])
        #expect(try TLV8(decoding: bytes) == message)
    }

    @Test func longValuesAreFragmentedAndJoined() throws {
        // Given a 600-byte value (a 3072-bit SRP key is 384)
        let value = (0..<600).map { UInt8($0 % 251) }
        let message: TLV8 = [(.publicKey, value), (.state, [2])]
        // When encoded
        let bytes = message.encoded()
        // Then it is written as fragments of 255, 255 and 90 bytes of the same type
        #expect(bytes.count == 600 + 3 * 2 + 3)
        #expect(Array(bytes[0...1]) == [0x03, 255])
        #expect(Array(bytes[257...258]) == [0x03, 255])
        #expect(Array(bytes[514...515]) == [0x03, 90])
        // And reading joins them into one value
        let decoded = try TLV8(decoding: bytes)
        #expect(decoded.items.count == 2)
        #expect(decoded[.publicKey] == value)
        #expect(decoded[.state] == [2])
    }

    @Test func exactlyTwoHundredFiftyFiveBytesIsOneFragment() throws {
        let value = [UInt8](repeating: 7, count: 255)
        let bytes = TLV8([.init(.proof, value)]).encoded()
        #expect(bytes.count == 257)
        #expect(try TLV8(decoding: bytes)[.proof] == value)
    }

    @Test(arguments: [
        [0x06] as [UInt8],  // header cut after the type
        [0x06, 2, 1],  // value one byte short
        [0x06, 1, 1, 0x03, 255] + [UInt8](repeating: 0, count: 254),  // second item short
    ])
    func truncatedInputIsATypedError(bytes: [UInt8]) {
        #expect {
            _ = try TLV8(decoding: bytes)
        } throws: { error in
            (error as? HAPError)?.code == .malformedTLV
        }
    }

    @Test func listsSplitAtSeparators() throws {
        // Given two list entries of the same types kept apart by a separator
        let message: TLV8 = [
            (.state, [2]), (.identifier, Array("A".utf8)), (.permissions, [1]), (.separator, []),
            (.identifier, Array("B".utf8)), (.permissions, [0]),
        ]
        // When decoded and split
        let entries = try TLV8(decoding: message.encoded()).splitAtSeparators()
        // Then each entry keeps its own values
        #expect(entries.count == 2)
        #expect(entries[0][.identifier] == Array("A".utf8))
        #expect(entries[1][.identifier] == Array("B".utf8))
        #expect(entries[1][.permissions] == [0])
    }

    @Test func integersAreLittleEndian() throws {
        let message = try TLV8(decoding: [0x08, 2, 0x2C, 0x01])
        #expect(message.integer(.retryDelay) == 300)
    }

    @Test func unknownTypesAreKept() throws {
        let message = try TLV8(decoding: [0x42, 1, 9])
        #expect(message[TLVType(rawValue: 0x42)] == [9])
    }
}
