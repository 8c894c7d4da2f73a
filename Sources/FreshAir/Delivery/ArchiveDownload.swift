import Foundation

/// An archive turned into a version's files, the one way packages and a repository's bundles
/// are installed: unpacked as its bytes arrive when the installer and format allow (the
/// network and the unpacking overlap, and the archive is read once), else from the whole file
/// once it is verified.
struct ArchiveDownload: Sendable {
    /// What is done with the archive: unpacked into the version unless the app replaced it.
    let installer: any PackageInstaller
    let format: ArchiveFormat
    /// Where the archive came from (its URL, or the bundled copy's path), named in errors
    /// instead of the partial file it was downloaded to.
    let source: String

    /// What unpacks into `staged` while the body arrives, to hand to `Fetcher/download(_:tee:progress:)`;
    /// `nil` when the installer is an app's own or the format needs the whole file (`.zip`).
    func streaming(into staged: StagedVersion) -> StreamingExtraction? {
        (installer as? ExtractingInstaller).flatMap {
            StreamingExtraction(
                installer: $0,
                format: format,
                folder: URL(fileURLWithPath: staged.path),
                package: source
            )
        }
    }

    /// The files of `staged` once the archive at `file` is installed: what `streamed` unpacked
    /// on the way when it saw the whole body, else unpacked now from the file.
    func install(
        _ file: String,
        into staged: StagedVersion,
        streamed: StreamingExtraction?
    ) async throws -> [String: FileRecord] {
        if let streamed {
            do { return try streamed.finish() } catch let failure as FreshAirError {
                throw failure.namingPackage(source)
            }
        }
        // What unpacking on the way wrote before the body was cut and resumed.
        try await BlockingPool.run { [path = staged.path] in try Disk.empty(path) }
        return try await installer.install(
            package: URL(fileURLWithPath: file),
            from: source,
            format: format,
            into: staged.path
        )
    }
}
