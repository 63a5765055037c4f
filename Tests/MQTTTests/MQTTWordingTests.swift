import CMosquitto
import Testing

@testable import MQTT

#if canImport(Glibc)
    import Glibc
#endif

@Suite("MQTTWording: libmosquitto's words without loading libmosquitto")
struct MQTTWordingTests {
    /// libmosquitto itself, loaded as a TLS client loads it.
    static let library: homegate_libmosquitto = {
        var failure: UnsafePointer<CChar>?
        guard let table = homegate_load_libmosquitto(&failure) else {
            fatalError("libmosquitto could not be loaded: \(failure.map { String(cString: $0) } ?? "")")
        }
        return table.pointee
    }()

    @Test("every result code reads as mosquitto_strerror reads it")
    func results() {
        for rc in Int32(-5)...300 {
            errno = ENOENT
            let expected = String(cString: Self.library.mosquitto_strerror(rc)!)
            errno = ENOENT
            #expect(MQTTWording.result(rc) == expected, "result code \(rc)")
        }
    }

    /// MQTT 5 reason codes and MQTT 3.1.1 CONNACK codes: our words, and libmosquitto's function.
    static let codeTables: [(String, @Sendable (Int32) -> String, @Sendable (Int32) -> String)] = [
        ("reason", MQTTWording.reason, { String(cString: library.mosquitto_reason_string($0)!) }),
        ("CONNACK", MQTTWording.connack, { String(cString: library.mosquitto_connack_string($0)!) }),
    ]

    @Test("every reason and CONNACK code reads as libmosquitto reads it", arguments: 0..<codeTables.count)
    func codes(table: Int) {
        let (name, ours, theirs) = Self.codeTables[table]
        for code in Int32(0)...300 { #expect(ours(code) == theirs(code), "\(name) code \(code)") }
    }
}
