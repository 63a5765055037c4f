import Synchronization
import Testing

@testable import Gateway

@Suite("AnswersInFlight: access changes wait for the answers under way", .timeLimit(.minutes(5)))
struct AnswersInFlightTests {
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test("with no request under way it returns at once")
    func nothingInFlight() async {
        await AnswersInFlight().settled(within: .seconds(3600))
    }

    @Test("a waiter returns when the last answer is sent, not before")
    func waitsForTheLastAnswer() async {
        let answers = AnswersInFlight()
        let log = Log()
        answers.enter()
        answers.enter()
        let waiter = Task {
            await answers.settled(within: .seconds(3600))
            log.append("settled")
        }
        while answers.waiting == 0 { await Task.yield() }

        answers.leave()
        log.append("first answered")
        #expect(answers.waiting == 1)
        log.append("last answered")
        answers.leave()
        await waiter.value

        #expect(log.all == ["first answered", "last answered", "settled"])
        #expect(answers.waiting == 0)
    }

    @Test("an answer that never comes holds the waiter only for the limit")
    func limitEndsTheWait() async {
        let answers = AnswersInFlight()
        answers.enter()
        await answers.settled(within: .milliseconds(20))
        #expect(answers.waiting == 0)
    }
}

extension AnswersInFlight {
    /// How many callers wait in ``settled(within:)``.
    var waiting: Int { state.withLock { $0.waiters.count } }
}
