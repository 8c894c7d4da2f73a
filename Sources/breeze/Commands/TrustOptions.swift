import ArgumentParser
import Foundation
import NIOSSL

/// `--ca-file`, for the commands that fetch over https (`sync`, `plan`): a private server's CA
/// (a staging server, a company network) in place of the system's roots, verification on.
struct TrustOptions: ParsableArguments {
    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "Trust https servers whose certificates this CA signed (PEM), in place of the system's roots: a staging server's private CA.",
            valueName: "PEM"
        ),
        completion: .file(extensions: ["pem", "crt"])
    )
    var caFile: String?

    /// The certificates of `--ca-file` as the only trust roots; `nil` without it (the system's).
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard let path = caFile else { return nil }
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("--ca-file: no file at \(path).")
        }
        let certificates = (try? NIOSSLCertificate.fromPEMFile(path)) ?? []
        guard !certificates.isEmpty else {
            throw ValidationError("--ca-file: \(path) holds no certificate in PEM form (-----BEGIN CERTIFICATE-----).")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(certificates)
        return tls
    }
}
