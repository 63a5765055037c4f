import BigInt

/// Bytes from hexadecimal text; spaces and newlines are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Hexadecimal text of bytes, lowercase.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
}

/// A big number from hexadecimal text; spaces and newlines are ignored.
func big(_ text: String) -> BigUInt {
    BigUInt(text.filter { !$0.isWhitespace }, radix: 16)!
}

/// A random number generator that repeats a fixed byte sequence: for reproducible private keys in tests.
struct FixedBytesGenerator: RandomNumberGenerator {
    var bytes: [UInt8]
    var index = 0

    mutating func next() -> UInt64 {
        var value: UInt64 = 0
        for shift in 0..<8 {
            value |= UInt64(bytes[index % bytes.count]) << (8 * UInt64(shift))
            index += 1
        }
        return value
    }
}
