import HomeModel
import Testing

/// The group commit's bookkeeping: what stays unsaved, how long the next commit waits, and which
/// write's outcome counts.
@Suite("Group commit schedule")
struct ValueCommitScheduleTests {
    static let lamp = ValueKey(accessory: "lamp", service: "1", characteristic: .on)
    static let fan = ValueKey(accessory: "fan", service: "1", characteristic: .on)

    @Test("failed writes keep their values and back off from a second, doubling up to a minute; a success ends it")
    func backoff() {
        var schedule = ValueCommitSchedule(window: .milliseconds(100))
        #expect(!schedule.writesEachValue)
        schedule.keepUnsaved([Self.lamp])
        var delays: [Duration] = []
        for _ in 0..<8 {
            let (write, values) = schedule.beginWrite(adding: [Self.fan], settled: true)
            #expect(values == [Self.lamp, Self.fan])
            #expect(schedule.unsaved.isEmpty)
            guard case .failed(let delay) = schedule.endWrite(write, failed: values) else {
                Issue.record("a failed write must decide a retry")
                return
            }
            delays.append(delay)
            #expect(schedule.nextDelay == delay)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        let (write, _) = schedule.beginWrite(adding: [], settled: true)
        #expect(schedule.endWrite(write, failed: nil) == .succeeded(retryEnded: true))
        #expect(schedule.nextDelay == .milliseconds(100))
        #expect(schedule.unsaved.isEmpty)
    }

    @Test("an older write's outcome arriving after a newer one's decides nothing, but its values stay unsaved")
    func outOfOrder() {
        var schedule = ValueCommitSchedule(window: .zero)
        #expect(schedule.writesEachValue)
        schedule.keepUnsaved([Self.lamp])
        let (older, olderValues) = schedule.beginWrite(adding: [], settled: false)
        let (newer, _) = schedule.beginWrite(adding: [Self.fan], settled: true)
        #expect(schedule.endWrite(newer, failed: nil) == .succeeded(retryEnded: false))
        #expect(schedule.endWrite(older, failed: olderValues) == .superseded)
        #expect(schedule.unsaved == [Self.lamp])
        #expect(schedule.retryDelay == nil && schedule.writesEachValue)
    }
}
