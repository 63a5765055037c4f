import Config
import Foundation
import Testing

@testable import Gateway

@Suite("Configuration: commands.rateLimit")
struct RateLimitConfigurationTests {
    private func parse(_ yaml: String) throws(ConfigurationErrors) -> GatewayConfiguration {
        try GatewayConfiguration.parse(yaml: yaml, file: "homegate.yml")
    }

    @Test("the default is 50 a second with bursts of 100; the keys set it; null turns it off")
    func values() throws {
        #expect(try parse("").commands.rateLimit == RateLimit(perSecond: 50, burst: 100))
        #expect(
            try parse("commands:\n  rateLimit:\n    perSecond: 2.5\n    burst: 7\n").commands.rateLimit
                == RateLimit(perSecond: 2.5, burst: 7))
        #expect(try parse("commands:\n  rateLimit: null\n").commands.rateLimit == nil)
    }

    @Test("the sample config sets the defaults and mentions both keys")
    func sample() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Config/homegate.yml").path
        let text = try String(contentsOfFile: sample, encoding: .utf8)
        for key in ["rateLimit:", "perSecond:", "burst:"] { #expect(text.contains(key)) }
        #expect(try GatewayConfiguration.load(file: sample, environment: [:]).commands.rateLimit == .standard)
    }

    @Test(
        "a rate that is not positive, a burst under 1 or an unknown key is reported at its line with a fix",
        arguments: [
            ("commands:\n  rateLimit:\n    perSecond: 0\n", 3, "perSecond"),
            ("commands:\n  rateLimit:\n    burst: 0\n", 3, "burst"),
            ("commands:\n  rateLimit:\n    perMinute: 10\n", 3, "perMinute"),
        ])
    func problems(yaml: String, line: Int, key: String) throws {
        do {
            _ = try parse(yaml)
            Issue.record("no problem reported for \(yaml)")
        } catch {
            #expect(error.errors.count == 1)
            let problem = try #require(error.errors.first)
            #expect(problem.location.line == line)
            #expect(problem.message.contains(key))
            #expect(!problem.fix.isEmpty)
        }
    }
}
