import Foundation
import HAP
import Logging

// Prints what HAPBrowser sees, one JSON line per event, until killed: the mDNS test runs it inside
// a private network namespace beside its own avahi-daemon (scripts/mdns-test.sh).
let logger = Logger(label: "hap-browse") { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .info
    return handler
}
let browser = HAPBrowser(logger: logger, retryInterval: .milliseconds(200))
Task { await browser.run() }
for await event in browser.events {
    let line: String
    switch event {
    case .found(let seen):
        line = """
            {"event":"found","name":"\(seen.name)","id":"\(seen.id)","category":\(seen.category),\
            "pairable":\(seen.isPairable),"configuration":\(seen.configuration),"model":"\(seen.model)",\
            "host":"\(seen.host)","port":\(seen.port)}
            """
    case .removed(let name):
        line = #"{"event":"removed","name":"\#(name)"}"#
    }
    print(line)
    fflush(nil)
}
