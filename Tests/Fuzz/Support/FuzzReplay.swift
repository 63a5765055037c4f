import Foundation

#if FUZZING
    import CFuzzer

    /// Runs libFuzzer on `check` with the process's arguments (libFuzzer's flags and corpus folders).
    public enum FuzzDriver {
        nonisolated(unsafe) private static var check: (([UInt8]) -> Void)?

        public static func run(
            _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
            _ check: @escaping ([UInt8]) -> Void
        ) -> CInt {
            Self.check = check
            var argc = argc
            var argv = argv
            return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                FuzzDriver.check?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                return 0
            }
        }
    }
#endif

/// Runs a fuzz target's check without libFuzzer: over every file named on the command line, or every
/// file in the folders named. A normal build of a fuzz target is this replayer, so the seed corpus
/// and every crash libFuzzer saved stay regression tests.
public enum FuzzReplay {
    /// Calls `check` with the bytes of each file; returns how many inputs were run.
    @discardableResult
    public static func run(_ arguments: [String], _ check: ([UInt8]) -> Void) throws -> Int {
        var count = 0
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                throw ReplayError("no such file or folder: \(argument)")
            }
            let files =
                isDirectory.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: argument).sorted().map { "\(argument)/\($0)" }
                : [argument]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ReplayError("cannot read \(file)")
                }
                check(Array(data))
                count += 1
            }
        }
        return count
    }

    /// The entry point of a replayer: runs the inputs named by the process's arguments and says how
    /// many passed, or exits 1 with the reason.
    public static func main(_ check: ([UInt8]) -> Void) {
        do {
            let count = try run(Array(CommandLine.arguments.dropFirst()), check)
            print("\(CommandLine.arguments[0]): \(count) inputs ran without a crash")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
    }
}

/// A replay input that could not be read.
public struct ReplayError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
