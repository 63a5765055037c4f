import Foundation

/// A certificate authority and a server certificate signed by it, made with `openssl` into a folder:
/// what a TLS listener of a private broker needs, and the CA file a client must trust to reach it.
/// The server certificate names 127.0.0.1 and localhost, so host-name verification passes on loopback.
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
        try Command.run(
            "openssl",
            ["req", "-x509"] + ecKey + [
                "-keyout", caKey, "-out", certificates.caFile, "-days", "3", "-subj", "/CN=\(authorityName)",
            ])
        try Command.run(
            "openssl",
            ["req"] + ecKey + ["-keyout", certificates.serverKeyFile, "-out", request, "-subj", "/CN=localhost"])
        try """
        basicConstraints=CA:FALSE
        keyUsage=digitalSignature,keyEncipherment
        extendedKeyUsage=serverAuth
        subjectAltName=IP:127.0.0.1,DNS:localhost

        """.write(toFile: extensions, atomically: true, encoding: .utf8)
        try Command.run(
            "openssl",
            [
                "x509", "-req", "-in", request, "-CA", certificates.caFile, "-CAkey", caKey, "-CAcreateserial",
                "-out", certificates.serverCertificateFile, "-days", "3", "-extfile", extensions,
            ])
        return certificates
    }
}
