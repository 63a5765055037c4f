import Broker
import Foundation
import TestSupport
import Testing

/// mDNS for real: an avahi-daemon of the test's own in a private network namespace, an accessory
/// published with avahi-publish, and HAPBrowser (the hap-browse executable) seeing it come, change and
/// go (scripts/mdns-test.sh). Root only, as CI runs.
@Suite("HomeKit discovery over mDNS through Avahi", .timeLimit(.minutes(5)))
struct HAPDiscoveryTests {
    @Test("found with its TXT record (id, ci, sf, c#), a record without id skipped, removed, found again")
    func browse() async throws {
        let browse = try homegateExecutable().replacingOccurrences(of: "/homegate", with: "/hap-browse")
        try await withTemporaryDirectory { folder in
            let output = "\(folder)/mdns-test.log"
            let script = try ChildProcess(
                repositoryRoot.appendingPathComponent("scripts/mdns-test.sh").path, [browse, "\(folder)/work"],
                outputFile: output)
            let status = await script.waitForExit()
            let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            #expect(status == 0, "\(log)")
            #expect(log.contains("found, skipped, removed and found again as expected"))
        }
    }
}
