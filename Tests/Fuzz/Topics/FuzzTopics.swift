import FuzzSupport
import Gateway
import HomeModel

/// The topic router: any text as a received topic. Parsing never traps; a parsed command's levels
/// are never empty and carry no wildcard, and an account never contains a level separator.
func check(_ bytes: [UInt8]) {
    let topic = String(decoding: bytes, as: UTF8.self)
    for base in ["homegate", "site/hub"] {
        let topics = Topics(base: base)
        guard let command = try? topics.parse(base + "/" + topic) else { continue }
        if let account = command.account {
            precondition(!account.isEmpty && !account.contains("/") && !account.contains("+") && !account.contains("#"))
        }
        if case .setCharacteristic(let path, let service, let characteristic, _) = command {
            for level in [path.home, path.room, path.accessory, service, characteristic] {
                precondition(!level.isEmpty && !level.contains("/") && !level.contains("#") && !level.contains("+"))
            }
        }
    }
}

#if FUZZING
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    @_cdecl("fuzz_topics_main")
    func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        FuzzDriver.run(argc, argv, check)
    }
#else
    @main
    enum Replay {
        static func main() { FuzzReplay.main(check) }
    }
#endif
