import BigInt
import COpenSSL

extension BigUInt {
    /// `self` to the power `exponent` modulo the odd `modulus`, by OpenSSL's Montgomery
    /// exponentiation in constant time (SRP's exponents are secrets). BigInt's own
    /// `power(_:modulus:)` took most of pair setup's controller share on HAP's 3072-bit group; the
    /// rest of SRP's arithmetic (a few products and sums) stays with BigInt.
    func modularPower(_ exponent: BigUInt, modulus: BigUInt) -> BigUInt {
        guard let context = BN_CTX_new() else { return power(exponent, modulus: modulus) }
        defer { BN_CTX_free(context) }
        let base = Self.openSSL(self % modulus)
        let power = Self.openSSL(exponent)
        let odd = Self.openSSL(modulus)
        let result = BN_new()
        defer { [base, power, odd, result].forEach { BN_clear_free($0) } }
        guard let base, let power, let odd, let result,
            BN_mod_exp_mont_consttime(result, base, power, odd, context, nil) == 1
        else { return self.power(exponent, modulus: modulus) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(result)) + 7) / 8)
        _ = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(result, $0.baseAddress) }
        return BigUInt(bigEndian: bytes)
    }

    private static func openSSL(_ value: BigUInt) -> OpaquePointer? {
        let bytes = value.minimalBytes
        return bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
    }
}
