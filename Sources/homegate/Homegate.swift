import ArgumentParser
import CMalloc
import Dispatch
import Glibc

/// The program's entry: runs ``Homegate`` on a task while the main thread waits for it.
///
/// Not an async `main`: Swift's async main hands the main thread to `dispatch_main`, which ends it
/// with `pthread_exit`, whose forced unwind brought 1.3 MB of the binary's unwind tables into memory
/// for the whole run (docs/benchmarks.md, "The hub build's memory"). No code of the gateway runs on
/// the main actor.
@main
enum Entry {
    static func main() {
        // Two malloc arenas, not one per busy thread up to 8 a core: each keeps free memory of its
        // own, and a hub at rest held 1.1-1.4 MB more with them, at no cost measured in speed
        // (docs/benchmarks.md, "The hub build's memory"). MALLOC_ARENA_MAX in the environment wins.
        if getenv("MALLOC_ARENA_MAX") == nil { _ = mallopt(M_ARENA_MAX, 2) }
        let finished = DispatchSemaphore(value: 0)
        // Detached: the entry is on the main actor, whose queue the waiting main thread never runs.
        // Unstructured: the only way from a synchronous entry into the command's async code.
        Task.detached {
            await Homegate.main()
            finished.signal()
        }
        finished.wait()
    }
}

struct Homegate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homegate",
        abstract: "A HomeKit-style home on MQTT, with permissions checked per user.",
        subcommands: [
            Run.self, CheckConfig.self, Acl.self, TopicsCommand.self, HomeKitCode.self, Backup.self, Restore.self,
            Demo.self, BenchHistory.self,
        ]
    )
}
