import Config
import FuzzSupport
import Gateway
import VirtualDevices

/// The config loaders: any text as `homegate.yml` and as a demo-home file. Loading never traps;
/// every problem of a refused config names the file and says how to fix it.
func check(_ bytes: [UInt8]) {
    let yaml = String(decoding: bytes, as: UTF8.self)
    do {
        _ = try GatewayConfiguration.parse(yaml: yaml, file: "fuzz.yml")
    } catch {
        precondition(!error.errors.isEmpty)
        for problem in error.errors {
            precondition(problem.location.description.hasPrefix("fuzz.yml"))
            precondition(!problem.fix.isEmpty)
        }
    }
    _ = try? DemoHome.parse(yaml)
}

#if FUZZING
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    @_cdecl("fuzz_config_main")
    func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        FuzzDriver.run(argc, argv, check)
    }
#else
    @main
    enum Replay {
        static func main() { FuzzReplay.main(check) }
    }
#endif
