import Foundation

/// A certificate authority and a server certificate signed by it, made with `openssl` into a folder:
/// what a TLS listener of a private broker needs, and the CA file a client must trust to reach it.
/// The server certificate names 127.0.0.1 and localhost, so host-name verification passes on loopback.
///
/// Test-only: it lives here, in the tests' support target, and not in the product's Broker module.
package struct TestCertificates: Sendable {
    package let caFile: String
    package let serverCertificateFile: String
    package let serverKeyFile: String

    /// Makes a new CA (its name in `authorityName`) and a server certificate in `directory`.
    package static func make(in directory: String, authorityName: String = "homegate test CA") throws
        -> TestCertificates
    {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(
            caFile: "\(directory)/ca.crt",
            serverCertificateFile: "\(directory)/server.crt",
            serverKeyFile: "\(directory)/server.key")
        let caKey = "\(directory)/ca.key"
        let request = "\(directory)/server.csr"
        let extensions = "\(directory)/server.ext"
        let ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try runOpenSSL(
            ["req", "-x509"] + ecKey + [
                "-keyout", caKey, "-out", certificates.caFile, "-days", "3", "-subj", "/CN=\(authorityName)",
            ])
        try runOpenSSL(
            ["req"] + ecKey + ["-keyout", certificates.serverKeyFile, "-out", request, "-subj", "/CN=localhost"])
        try """
        basicConstraints=CA:FALSE
        keyUsage=digitalSignature,keyEncipherment
        extendedKeyUsage=serverAuth
        subjectAltName=IP:127.0.0.1,DNS:localhost

        """.write(toFile: extensions, atomically: true, encoding: .utf8)
        try runOpenSSL(
            [
                "x509", "-req", "-in", request, "-CA", certificates.caFile, "-CAkey", caKey, "-CAcreateserial",
                "-out", certificates.serverCertificateFile, "-days", "3", "-extfile", extensions,
            ])
        return certificates
    }
}

/// Runs `openssl` with `arguments` to completion; a non-zero exit throws with what it printed.
private func runOpenSSL(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl"] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw OpenSSLFailed(
            "openssl \(arguments.joined(separator: " ")) failed (exit \(process.terminationStatus)): "
                + String(decoding: printed, as: UTF8.self))
    }
}

/// What ``TestCertificates/make(in:authorityName:)`` throws when openssl fails, with what it printed.
struct OpenSSLFailed: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
