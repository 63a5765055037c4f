/// A HAP TLV8 message: an ordered list of (type, value) items.
///
/// On the wire each item is a type byte, a length byte (0...255) and that many value bytes. A value
/// longer than 255 bytes is written as consecutive fragments of the same type, each of 255 bytes but the
/// last, and reading joins consecutive items of the same type back into one value. Two list entries of
/// the same type must therefore be kept apart by a `.separator` item, as HAP's list pairings answer does.
package struct TLV8: Sendable, Equatable {
    /// One item of a message.
    package struct Item: Sendable, Equatable {
        package var type: TLVType
        package var value: [UInt8]

        package init(_ type: TLVType, _ value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    /// The items in message order.
    package var items: [Item]

    /// Makes a message from items in order.
    package init(_ items: [Item] = []) {
        self.items = items
    }

    /// Decodes a message, joining consecutive fragments of one type.
    ///
    /// - Throws: `HAPError` with code `.malformedTLV` when an item's header or value is cut short.
    package init(decoding bytes: some Collection<UInt8>) throws {
        let bytes = Array(bytes)
        var items: [Item] = []
        var offset = 0
        var previousType: TLVType?
        while offset < bytes.count {
            guard offset + 2 <= bytes.count else {
                throw HAPError(.malformedTLV, "item header cut short at offset \(offset) of \(bytes.count)")
            }
            let type = TLVType(rawValue: bytes[offset])
            let length = Int(bytes[offset + 1])
            let end = offset + 2 + length
            guard end <= bytes.count else {
                throw HAPError(
                    .malformedTLV,
                    "item of type \(type) at offset \(offset) announces \(length) bytes, \(bytes.count - offset - 2) left"
                )
            }
            let value = bytes[(offset + 2)..<end]
            if type == previousType, !items.isEmpty {
                items[items.count - 1].value.append(contentsOf: value)
            } else {
                items.append(Item(type, Array(value)))
            }
            previousType = type
            offset = end
        }
        self.items = items
    }

    /// The wire form, with values longer than 255 bytes split into fragments.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(0) { $0 + $1.value.count + 2 })
        for item in items {
            // An empty value is one fragment too: the type and a length of 0.
            for start in stride(from: 0, to: max(item.value.count, 1), by: 255) {
                let fragment = item.value[start..<min(start + 255, item.value.count)]
                out.append(item.type.rawValue)
                out.append(UInt8(fragment.count))
                out.append(contentsOf: fragment)
            }
        }
        return out
    }

    /// Appends an item.
    package mutating func append(_ type: TLVType, _ value: [UInt8]) {
        items.append(Item(type, value))
    }

    /// The value of the first item of `type`, if any.
    package subscript(type: TLVType) -> [UInt8]? {
        items.first { $0.type == type }?.value
    }

    /// The first item of `type` read as a little-endian unsigned integer (HAP's integer encoding),
    /// or nil when absent or longer than 8 bytes.
    package func integer(_ type: TLVType) -> UInt64? {
        guard let value = self[type], value.count <= 8 else { return nil }
        var result: UInt64 = 0
        for (index, byte) in value.enumerated() {
            result |= UInt64(byte) << (8 * UInt64(index))
        }
        return result
    }

    /// The entries of a list message: the items between `.separator` items, each as a message.
    func splitAtSeparators() -> [TLV8] {
        var entries: [TLV8] = [TLV8()]
        for item in items {
            if item.type == .separator {
                entries.append(TLV8())
            } else {
                entries[entries.count - 1].items.append(item)
            }
        }
        return entries.filter { !$0.items.isEmpty }
    }
}

extension TLV8: ExpressibleByArrayLiteral {
    /// A message written as `[(type, value), ...]`.
    package init(arrayLiteral elements: (TLVType, [UInt8])...) {
        self.init(elements.map { Item($0.0, $0.1) })
    }
}
