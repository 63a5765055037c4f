import AsyncMailbox
import Testing

@Suite("FrontQueue: an array taken from the front")
struct FrontQueueTests {
    @Test("taking from the front keeps the order through the compactions, and so does appending meanwhile")
    func takeAndAppend() {
        var queue = FrontQueue<Int>()
        var model: [Int] = []
        var next = 0
        // Uneven rounds, so the taken prefix crosses the compaction thresholds at different points.
        for round in 0..<200 {
            for _ in 0..<(round % 7 + 3) {
                queue.append(next)
                model.append(next)
                next += 1
            }
            let taking = min(model.count, round % 5 + 2)
            for _ in 0..<taking { #expect(queue.popFirst() == model.removeFirst()) }
            #expect(Array(queue.elements) == model)
            #expect(queue.count == model.count)
            #expect(queue.first == model.first)
        }
        queue.removeFirst(queue.count)
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }

    @Test("insert(before:) keeps the queue sorted; remove(at:) takes the front or any later element")
    func sortedInsertAndRemove() {
        var queue = FrontQueue<Int>()
        for value in [5, 1, 9, 3, 7, 3] { queue.insert(value) { $0 > value } }
        #expect(Array(queue.elements) == [1, 3, 3, 5, 7, 9])
        #expect(queue.popFirst() == 1)
        // An index of `elements` after the front was taken: not 0.
        let seven = queue.elements.firstIndex(of: 7)!
        #expect(queue.remove(at: seven) == 7)
        #expect(queue.remove(at: queue.elements.startIndex) == 3)
        #expect(Array(queue.elements) == [3, 5, 9])
        queue.insert(4) { $0 > 4 }
        #expect(Array(queue.elements) == [3, 4, 5, 9])
        // Smaller than all: it goes to the front, not among the elements taken before.
        queue.insert(0) { $0 > 0 }
        #expect(Array(queue.elements) == [0, 3, 4, 5, 9])
    }
}
