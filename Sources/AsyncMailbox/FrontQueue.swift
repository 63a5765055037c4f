/// An array taken from the front: taking the first elements moves an index instead of shifting the
/// rest, and the taken prefix is dropped once it is half the storage, so taking is amortised O(1).
/// For queues that are mostly appended to at the back and taken from the front (``Mailbox``, a
/// timer's deadlines).
public struct FrontQueue<Element> {
    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    /// The elements not yet taken, first first; its indices are the ones ``remove(at:)`` takes.
    @inlinable public var elements: ArraySlice<Element> { storage[head...] }

    @inlinable public var count: Int { storage.count - head }

    @inlinable public var isEmpty: Bool { head == storage.count }

    @inlinable public var first: Element? { isEmpty ? nil : storage[head] }

    @inlinable public mutating func append(_ element: Element) { storage.append(element) }

    /// Inserts `element` before the trailing elements that `goesBefore` holds for: in order, for an
    /// element that mostly belongs at the back.
    @inlinable public mutating func insert(_ element: Element, before goesBefore: (Element) -> Bool) {
        var index = storage.endIndex
        while index > head, goesBefore(storage[index - 1]) { index -= 1 }
        storage.insert(element, at: index)
    }

    /// Removes the element at `index` (an index of ``elements``).
    @inlinable @discardableResult public mutating func remove(at index: Int) -> Element {
        precondition(index >= head, "FrontQueue: removing a taken element")
        guard index == head else { return storage.remove(at: index) }
        let element = storage[head]
        removeFirst(1)
        return element
    }

    @inlinable public mutating func popFirst() -> Element? {
        guard let element = first else { return nil }
        removeFirst(1)
        return element
    }

    /// Takes the first `count` elements.
    @inlinable public mutating func removeFirst(_ count: Int) {
        precondition(count <= self.count, "FrontQueue: taking more than it holds")
        head += count
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 1_024)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}

extension FrontQueue: Sendable where Element: Sendable {}
