import Gateway
import Yams

extension ConfigurationReader {
    /// `commands.rateLimit`: `null` turns the limit off; otherwise `perSecond` (more than 0) and
    /// `burst` (at least 1), each defaulting to `RateLimit.standard`'s.
    mutating func readRateLimit(_ entry: (key: Node, value: Node)) -> RateLimit? {
        guard entry.value.kind != .null else { return nil }
        let section = section(entry.value, path: "commands.rateLimit", keys: ["perSecond", "burst"])
        var limit = RateLimit.standard
        if let node = section["perSecond"]?.value, let perSecond = number(node, "commands.rateLimit.perSecond") {
            if perSecond > 0 && perSecond.isFinite {
                limit.perSecond = perSecond
            } else {
                report(
                    .invalidValue, at: node, "'commands.rateLimit.perSecond' is \(perSecond); it must be more than 0",
                    fix: "use 50, or write 'rateLimit: null' to turn the limit off")
            }
        }
        if let node = section["burst"]?.value, let burst = int(node, "commands.rateLimit.burst") {
            if burst >= 1 {
                limit.burst = burst
            } else {
                report(
                    .invalidValue, at: node, "'commands.rateLimit.burst' is \(burst); it must be at least 1",
                    fix: "use 100, or leave it out for the default")
            }
        }
        return limit
    }
}
